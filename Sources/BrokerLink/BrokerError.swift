internal import CMosquitto

/// An error of BrokerLink: a bad configuration or argument, a refusal or failure reported by
/// libmosquitto (with its own message), a full publish queue, or a stopped connection.
public struct BrokerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Sendable, Equatable {
        /// A ``BrokerConfiguration`` value is unusable (URL, client id, keep-alive, TLS files).
        case invalidConfiguration
        /// An argument is invalid: a topic, a filter, a QoS, a payload size.
        case invalidArgument
        /// libmosquitto (`libmosquitto.so.1`, Debian's libmosquitto1) could not be loaded; the
        /// message says why and which package to install.
        case libraryUnavailable
        /// libmosquitto returned this `MOSQ_ERR_*` code; the message is `mosquitto_strerror`'s.
        case library(Int32)
        /// The broker refused the connection with this CONNACK return code (5: not authorised);
        /// the message is `mosquitto_connack_string`'s.
        case connectionRefused(Int32)
        /// The bounded queue of publishes waiting for a connection is full
        /// (``BrokerConfiguration/maximumQueuedPublishes``).
        case queueFull
        /// The connection was stopped or aborted before the operation completed.
        case stopped
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: A human-readable explanation.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, prefixed with where it comes from.
    public var description: String { "BrokerError(\(code)): \(message)" }

    /// Wraps a libmosquitto return code, with `mosquitto_strerror`'s text.
    ///
    /// - Parameters:
    ///   - rc: The `MOSQ_ERR_*` value.
    ///   - context: The call that returned it.
    static func library(_ rc: Int32, _ context: String) -> BrokerError {
        BrokerError(.library(rc), "\(context): \(MosquittoLibrary.describe(rc))")
    }

    /// Wraps a CONNACK refusal, with `mosquitto_connack_string`'s text.
    ///
    /// - Parameters:
    ///   - rc: The CONNACK return code (1–5 in MQTT 3.1.1).
    static func refused(_ rc: Int32) -> BrokerError {
        BrokerError(
            .connectionRefused(rc),
            MosquittoLibrary.loadedIfAvailable.map { MosquittoLibrary.text($0.connack_string(rc)) }
                ?? "connection refused (\(rc))")
    }
}
