import Glibc

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

    /// The listener could not bind: why, in words, and what to do.
    ///
    /// - Parameters:
    ///   - address: `HOST:PORT` as given to `--listen`.
    ///   - errno: The `bind` call's errno.
    static func cannotListen(on address: String, errno: Int32) -> GatewayStartError {
        let reason: String
        switch errno {
        case EADDRINUSE:
            reason =
                "another program listens there already (`ss -ltnp` shows which): stop it, or choose another --listen port"
        case EACCES, EPERM:
            reason =
                "ports below 1024 need the capability CAP_NET_BIND_SERVICE: choose a port of 1024 or more, or give the service AmbientCapabilities=CAP_NET_BIND_SERVICE"
        case EADDRNOTAVAIL:
            reason =
                "this machine has no such address: give one of its own (`ip address` lists them), or 0.0.0.0 or [::] for all"
        default:
            reason = String(cString: strerror(errno)) + "; check --listen"
        }
        return GatewayStartError(.listener, "cannot listen on \(address): \(reason)")
    }
}
