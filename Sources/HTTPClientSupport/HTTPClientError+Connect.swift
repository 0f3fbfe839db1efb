import Glibc
import NIOCore
import NIOPosix

extension HTTPClientError {
    /// A connection that could not be made, in words a person can act on: nothing listens there,
    /// the name does not resolve, no answer in time; NIO's own text (`Connection errors:
    /// SingleConnectionFailure(…)`) stays in ``underlying``, out of ``message`` (what a person reads).
    ///
    /// - Parameters:
    ///   - host: The host asked for.
    ///   - port: The port.
    ///   - timeout: The connect limit.
    ///   - error: What NIO threw.
    static func cannotConnect(host: String, port: Int, timeout: Duration, _ error: any Error) -> HTTPClientError {
        let reason: String
        switch Self.errno(in: error) {
        case ECONNREFUSED:
            reason =
                "nothing listens there (connection refused): check the URL's host and port, and that the server runs"
        case ENETUNREACH, EHOSTUNREACH:
            reason = "no route to that host: check the URL's host and this machine's network"
        case ETIMEDOUT:
            reason = "no answer within \(timeout): check the URL, and a firewall between here and there"
        default:
            // (A connect timeout is ETIMEDOUT above: `errno(in:)` maps NIO's `connectTimeout`.)
            reason =
                Self.isResolutionFailure(error) ? "the host name does not resolve: check the URL's host" : "\(error)"
        }
        return HTTPClientError(.connectFailed, "cannot connect to \(host):\(port): \(reason)", underlying: error)
    }

    /// The errno of the first failed attempt inside NIO's connection error, if any.
    private static func errno(in error: any Error) -> Int32? {
        if let io = error as? IOError { return io.errnoCode }
        if let connection = error as? NIOConnectionError {
            for attempt in connection.connectionErrors {
                if let io = attempt.error as? IOError { return io.errnoCode }
                if case .connectTimeout = attempt.error as? ChannelError { return ETIMEDOUT }
            }
        }
        if case .connectTimeout = error as? ChannelError { return ETIMEDOUT }
        return nil
    }

    /// Whether the connection failed before any address was tried: the lookup found none.
    private static func isResolutionFailure(_ error: any Error) -> Bool {
        guard let connection = error as? NIOConnectionError else { return false }
        return connection.connectionErrors.isEmpty && (connection.dnsAError != nil || connection.dnsAAAAError != nil)
    }
}
