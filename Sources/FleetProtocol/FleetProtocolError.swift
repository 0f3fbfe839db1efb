import Glibc

/// A fleet value that does not hold: a malformed topic or topic level, a push envelope that fails to
/// decode or validate, a registration record with an invalid field, or a device identity that
/// cannot be derived.
///
/// Shaped like swift-service-lifecycle's `ServiceGroupError`: an opaque ``code`` over a private enum
/// (new codes are not a breaking change), a message that says what to do, and, where the failure
/// came from the system, its `errno`.
public struct FleetProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .invalidTopic`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidArgument = "invalid-argument"
            case identity
            case invalidEnvelope = "invalid-envelope"
            case invalidTopic = "invalid-topic"
            case invalidRecord = "invalid-record"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// An argument is malformed (an application id that is not 32 hex digits).
        public static let invalidArgument = Code(.invalidArgument)
        /// The device identity could not be derived (libsystemd failed; see ``FleetProtocolError/errno``).
        public static let identity = Code(.identity)
        /// A ``PushEnvelope`` failed to decode or validate.
        public static let invalidEnvelope = Code(.invalidEnvelope)
        /// A topic is not part of the fleet layout, or a topic level is invalid.
        public static let invalidTopic = Code(.invalidTopic)
        /// A ``PushRegistrationRecord`` decoded but a field is invalid; the message names it.
        public static let invalidRecord = Code(.invalidRecord)

        /// The code's name, as in logs: `invalid-envelope`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// The system's error number, when the failure came from a system call.
    public let errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong and what to do.
    ///   - errno: The system's error number, if any.
    public init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// `FleetProtocolError(invalid-topic): …`, with the errno's text when there is one.
    public var description: String {
        guard let errno else { return "FleetProtocolError(\(code)): \(message)" }
        return "FleetProtocolError(\(code)): \(message): \(String(cString: strerror(errno)))"
    }
}
