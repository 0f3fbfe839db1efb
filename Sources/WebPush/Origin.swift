/// A web origin, `scheme://host[:port]`, as a VAPID token's `aud` names it (RFC 8292 §2, RFC 6454).
///
/// Parsed leniently enough to compare what different senders write (`HTTPS://Push.Example.net:443/`
/// and `https://push.example.net` are the same origin), strictly enough to refuse anything that is
/// not an origin: user info, a path other than `/`, a query or a fragment.
struct Origin: Equatable, Sendable {
    /// `http` or `https`, lowercased.
    let scheme: String
    /// The host, lowercased; an IPv6 address keeps its brackets.
    let host: String
    /// The port, explicit or the scheme's default.
    let port: Int

    /// Parses `text`; `nil` if it is not an http or https origin.
    init?(_ text: String) {
        guard let separator = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<separator.lowerBound].lowercased()
        let defaultPort: Int
        switch scheme {
        case "https": defaultPort = 443
        case "http": defaultPort = 80
        default: return nil
        }
        var authority = text[separator.upperBound...]
        if authority.hasSuffix("/") { authority = authority.dropLast() }
        guard !authority.isEmpty, !authority.contains(where: { "/?#@ \t".contains($0) }) else { return nil }

        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
            guard host.dropFirst().dropLast().allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                return nil
            }
        } else {
            if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard
                host.allSatisfy({ ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "." || $0 == "_" })
            else { return nil }
        }
        guard !host.isEmpty else { return nil }
        var port = defaultPort
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(portText), value <= 65535
            else { return nil }
            port = value
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
    }

    /// The origin as RFC 6454 serialises it: the port only when it is not the scheme's default.
    var serialized: String {
        let isDefault = (scheme == "https" && port == 443) || (scheme == "http" && port == 80)
        return isDefault ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }
}
