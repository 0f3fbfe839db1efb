/// `--public-url`: the origin app servers reach the gateway at (`https://push.example.net`). It is
/// VAPID's expected `aud`, and endpoints and message locations start with it, so it must be an
/// http(s) origin without a path, query, fragment or user info.
enum PublicURL {
    /// The URL in the form the gateway uses (scheme and host lowercased, no trailing slash), or
    /// `nil` when `text` is not an http(s) origin.
    static func normalize(_ text: String) -> String? {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        var authority = text[separator.upperBound...]
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty,
            authority.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-_:[]".contains($0)) })
        else { return nil }
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            let port = authority[authority.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.allSatisfy({ $0.isNumber }), Int(port)! <= 65535 else {
                return nil
            }
        }
        guard authority.first != ":" else { return nil }
        return "\(scheme)://\(authority.lowercased())"
    }
}
