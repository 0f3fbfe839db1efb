/// Why the gateway could not start (a bad address, an unreadable password file): printed on
/// standard error, exit status 1.
struct GatewayStartError: Error, CustomStringConvertible {
    /// The one-line reason.
    let description: String

    /// Creates the error.
    init(_ description: String) { self.description = description }
}
