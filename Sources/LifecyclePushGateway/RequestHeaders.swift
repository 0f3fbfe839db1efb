/// A request's headers as the gateway's checks see them: names compared case-insensitively, values
/// as sent (NIO's `HTTPHeaders` in the server, plain pairs in tests).
package struct RequestHeaders: Sendable {
    private let fields: [(name: String, value: String)]

    /// Creates the headers from name-value pairs in arrival order.
    package init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0.lowercased(), value: $0.1) }
    }

    /// Every value of the header `name`, in order.
    package func values(_ name: String) -> [String] {
        let name = name.lowercased()
        return fields.filter { $0.name == name }.map(\.value)
    }

    /// The one value of the header `name`: `nil` when absent, `.some(nil)` when it appears more than
    /// once (a repeated `TTL` or `Authorization` is ambiguous, so it is rejected, not guessed).
    package func single(_ name: String) -> String?? {
        let all = values(name)
        switch all.count {
        case 0: return nil
        case 1: return .some(all[0])
        default: return .some(nil)
        }
    }
}
