internal import CMosquitto

#if canImport(Glibc)
    import Glibc
#endif

/// An error of BrokerLink: a bad configuration or argument, a refusal or failure reported by
/// libmosquitto (with its own message), a full publish queue, or a stopped connection.
///
/// Shaped like swift-service-lifecycle's `ServiceGroupError` (the project's one error shape): an
/// opaque ``code`` over a private enum (new codes are not a breaking change), a message that says
/// what went wrong, libmosquitto's own number for its failures and refusals, and the `errno` of a
/// failed system call.
public struct BrokerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .queueFull`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidConfiguration = "invalid-configuration"
            case invalidArgument = "invalid-argument"
            case libraryUnavailable = "library-unavailable"
            case library
            case connectionRefused = "connection-refused"
            case queueFull = "queue-full"
            case stopped
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// A ``BrokerConfiguration`` value is unusable (URL, client id, keep-alive, TLS files).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// An argument is invalid: a topic, a filter, a QoS, a payload size.
        public static let invalidArgument = Code(.invalidArgument)
        /// libmosquitto (`libmosquitto.so.1`, Debian's libmosquitto1) could not be loaded; the
        /// message says why and which package to install.
        public static let libraryUnavailable = Code(.libraryUnavailable)
        /// libmosquitto returned a `MOSQ_ERR_*` code (``BrokerError/returnCode``); the message is
        /// `mosquitto_strerror`'s.
        public static let library = Code(.library)
        /// The broker refused the connection with a CONNACK return code (``BrokerError/returnCode``;
        /// 5: not authorised); the message is `mosquitto_connack_string`'s.
        public static let connectionRefused = Code(.connectionRefused)
        /// The bounded queue of publishes waiting for a connection is full
        /// (``BrokerConfiguration/maximumQueuedPublishes``).
        public static let queueFull = Code(.queueFull)
        /// The connection was stopped or aborted before the operation completed.
        public static let stopped = Code(.stopped)

        /// The code's name, as in logs: `queue-full`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, and for a configuration what to change.
    public let message: String
    /// libmosquitto's number for a ``Code/library`` failure (`MOSQ_ERR_*`) or the broker's CONNACK
    /// return code for a ``Code/connectionRefused``; `nil` otherwise.
    public let returnCode: Int32?
    /// The system's error number, when a system call failed (reading a password file, `mosquitto_new`).
    public let errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong.
    ///   - returnCode: libmosquitto's or the broker's number for it, if any.
    ///   - errno: The system's error number, if any.
    public init(_ code: Code, _ message: String, returnCode: Int32? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.returnCode = returnCode
        self.errno = errno
    }

    /// `BrokerError(library 14): …`: the code, libmosquitto's number when there is one, and the message.
    public var description: String {
        guard let returnCode else { return "BrokerError(\(code)): \(message)" }
        return "BrokerError(\(code) \(returnCode)): \(message)"
    }

    /// Wraps a libmosquitto return code, with `mosquitto_strerror`'s text.
    ///
    /// - Parameters:
    ///   - rc: The `MOSQ_ERR_*` value.
    ///   - context: The call that returned it.
    static func library(_ rc: Int32, _ context: String) -> BrokerError {
        BrokerError(.library, "\(context): \(MosquittoLibrary.describe(rc))", returnCode: rc)
    }

    /// Wraps a CONNACK refusal, with `mosquitto_connack_string`'s text.
    ///
    /// - Parameters:
    ///   - rc: The CONNACK return code (1–5 in MQTT 3.1.1).
    static func refused(_ rc: Int32) -> BrokerError {
        BrokerError(
            .connectionRefused,
            MosquittoLibrary.loadedIfAvailable.map { MosquittoLibrary.text($0.connack_string(rc)) }
                ?? "connection refused (\(rc))",
            returnCode: rc)
    }

    /// A system call failed with `errno`; the message is `context` and `strerror`'s text.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - context: What was being done.
    ///   - errno: The call's `errno`.
    static func system(_ code: Code, _ context: String, errno: Int32) -> BrokerError {
        BrokerError(code, "\(context): \(String(cString: strerror(errno)))", errno: errno)
    }
}
