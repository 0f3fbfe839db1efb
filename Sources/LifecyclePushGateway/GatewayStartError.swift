/// Why the gateway could not start (an unreadable password file, a listener without an address):
/// printed on standard error, exit status 1.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
/// ``code`` over a private enum, a message for the operator, and the error underneath, if any.
struct GatewayStartError: Error, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .passwordFile`).
    struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case passwordFile = "password-file"
            case listener
            case tls
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// `--password-file` names a file that cannot be read or is not a one-line password.
        static let passwordFile = Code(.passwordFile)
        /// The listening socket could not be set up as asked.
        static let listener = Code(.listener)
        /// `--tls-certificate` or `--tls-key` cannot be read, or they do not make a TLS server.
        static let tls = Code(.tls)

        /// The code's name, as in logs: `password-file`.
        var description: String { base.rawValue }
    }

    /// The kind of failure.
    let code: Code
    /// The one-line reason, saying what to fix.
    let message: String
    /// The error underneath (a `BrokerError`), if any.
    let underlying: (any Error)?

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: The one-line reason.
    ///   - underlying: The error underneath, if any.
    init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The one-line reason.
    var description: String { message }
}
