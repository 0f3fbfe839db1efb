/// Why an ``HTTPClientConnection`` got no response: it could not connect, the server closed the
/// connection or sent too much, or the time limit passed.
package struct HTTPClientError: Error, CustomStringConvertible {
    /// What went wrong, for a person.
    package var message: String
    /// The error underneath (NIO's connect or channel error), if any.
    package var underlying: (any Error)?

    /// An error with `message` and what caused it.
    package init(_ message: String, underlying: (any Error)? = nil) {
        self.message = message
        self.underlying = underlying
    }

    package var description: String {
        underlying.map { "\(message): \($0)" } ?? message
    }
}
