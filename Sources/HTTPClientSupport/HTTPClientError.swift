/// Why an ``HTTPClientConnection`` got no response, or no usable one: it could not connect, the
/// server's TLS certificate is not trusted, the server closed the connection or sent too much, the
/// time limit passed, or the answer was not the one asked for.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
/// ``code`` over a private enum, a message for a person, and the error underneath, if any.
package struct HTTPClientError: Error, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .timedOut`).
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidURL = "invalid-url"
            case invalidTLSConfiguration = "invalid-tls-configuration"
            case certificateNotTrusted = "certificate-not-trusted"
            case connectFailed = "connect-failed"
            case connectionNotReusable = "connection-not-reusable"
            case exchangeFailed = "exchange-failed"
            case incompleteResponse = "incomplete-response"
            case responseTooLarge = "response-too-large"
            case timedOut = "timed-out"
            case unexpectedStatus = "unexpected-status"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The URL is not one this client can reach (only `http://` and `https://`).
        package static let invalidURL = Code(.invalidURL)
        /// The CA file cannot be read, or TLS cannot be set up.
        package static let invalidTLSConfiguration = Code(.invalidTLSConfiguration)
        /// The server's TLS certificate failed verification: not signed by a trusted CA, or not for that host.
        package static let certificateNotTrusted = Code(.certificateNotTrusted)
        /// No connection to the server could be made.
        package static let connectFailed = Code(.connectFailed)
        /// The connection was closed by an earlier answer (`Connection: close`) or an error.
        package static let connectionNotReusable = Code(.connectionNotReusable)
        /// Writing the request or reading the response failed on the channel.
        package static let exchangeFailed = Code(.exchangeFailed)
        /// The server closed the connection before a whole response arrived.
        package static let incompleteResponse = Code(.incompleteResponse)
        /// The response body is over ``HTTPClientConnection/maximumBodySize`` bytes.
        package static let responseTooLarge = Code(.responseTooLarge)
        /// No response came within the time limit.
        package static let timedOut = Code(.timedOut)
        /// The server answered with a status the caller did not ask for.
        package static let unexpectedStatus = Code(.unexpectedStatus)

        /// The code's name, as in logs: `timed-out`.
        package var description: String { base.rawValue }
    }

    /// The kind of failure.
    package let code: Code
    /// What went wrong, for a person.
    package let message: String
    /// The error underneath (NIO's connect or channel error), if any.
    package let underlying: (any Error)?

    /// An error with `message` and what caused it.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong, for a person.
    ///   - underlying: The error underneath, if any.
    package init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message, followed by the error underneath.
    package var description: String {
        underlying.map { "\(message): \($0)" } ?? message
    }
}
