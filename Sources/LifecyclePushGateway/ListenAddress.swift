/// `--listen`'s `HOST:PORT` (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:443`).
struct ListenAddress: Equatable, Sendable {
    /// The address to bind, without brackets.
    var host: String
    /// The port; 0 lets the kernel pick one (the log line says which).
    var port: Int

    /// Parses `HOST:PORT`; `nil` for anything else.
    init?(_ text: String) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                return nil
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
            guard !hostPart.contains(":") else { return nil }
        }
        guard !hostPart.isEmpty, !portPart.isEmpty, portPart.count <= 5,
            portPart.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(portPart), port <= 65535,
            hostPart.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || ".-:_%".contains($0)) })
        else { return nil }
        self.host = String(hostPart)
        self.port = port
    }
}
