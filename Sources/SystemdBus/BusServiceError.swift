/// Why a D-Bus host service client (logind, a screensaver, timedated, low-memory-monitor) could not
/// start or could not do what it was asked.
///
/// Every client is optional: when `LogindClient/start()` or another client's `start()` throws one of
/// these, the host logs ``description`` (one line) and carries on without that service. Shaped like
/// `HostSourceError`: an extensible struct with static codes, so new codes are not a breaking change.
public struct BusServiceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure happened.
    ///
    /// Compare with the static members (`error.code == .serviceUnavailable`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case serviceUnavailable = "service-unavailable"
            case busFailure = "bus-failure"
            case invalidReply = "invalid-reply"
            case notStarted = "not-started"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// Nobody owns the service's well-known name on the bus (and it could not be activated).
        public static let serviceUnavailable = Code(.serviceUnavailable)
        /// A bus call or subscription failed; ``BusServiceError/underlying`` has the D-Bus error.
        public static let busFailure = Code(.busFailure)
        /// The service answered with something the client cannot use (a wrong type, a missing fd).
        public static let invalidReply = Code(.invalidReply)
        /// The client was asked to act before `LogindClient/start()` succeeded, or after it stopped.
        public static let notStarted = Code(.notStarted)

        /// The code as a short kebab-case string.
        public var description: String { base.rawValue }
    }

    /// What kind of failure happened.
    public var code: Code
    /// The well-known bus name of the service, for example `org.freedesktop.login1`.
    public var service: String
    /// What the client tried to do, in words.
    public var message: String
    /// The bus error behind this failure, if any.
    public var underlying: BusError?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure happened.
    ///   - service: The service's well-known bus name.
    ///   - message: What the client tried to do.
    ///   - underlying: The bus error behind it, if any.
    public init(code: Code, service: String, message: String, underlying: BusError? = nil) {
        self.code = code
        self.service = service
        self.message = message
        self.underlying = underlying
    }

    /// Wraps any error thrown by a bus operation: a `BusError` becomes ``Code/busFailure`` (or
    /// ``Code/serviceUnavailable`` for `ServiceUnknown`/`NameHasNoOwner`), a `BusServiceError` is kept.
    package static func wrap(_ error: any Error, service: String, message: String) -> BusServiceError {
        if let error = error as? BusServiceError { return error }
        if let error = error as? BusError {
            let missing = error.name == BusError.Name.serviceUnknown || error.name == BusError.Name.nameHasNoOwner
            return BusServiceError(
                code: missing ? .serviceUnavailable : .busFailure, service: service,
                message: message, underlying: error)
        }
        return BusServiceError(code: .busFailure, service: service, message: "\(message): \(error)")
    }

    /// One log line: service, what failed, the bus error, and the code.
    public var description: String {
        var line = "\(service): \(message)"
        if let underlying { line += ": \(underlying)" }
        return line + " [\(code)]"
    }
}
