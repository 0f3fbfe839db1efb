/// An error from AppLifecycle, or one a host reports to the app.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): callers match
/// on the opaque ``code`` and read ``message`` for the human-readable detail; ``errno`` is kept
/// when a system call failed.
public struct ApplicationError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of error this is. Compare with the static members (`error.code == .invalidInput`).
    ///
    /// Opaque like the codes of the project's other errors: only AppLifecycle makes codes, so new
    /// ones are not a breaking change. A code travels between a host and an app as its name
    /// (``ApplicationUserInfoKey/errorCode``); a name this version does not know, from a newer
    /// host, is kept as it came.
    public struct Code: Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code's stable name, `illegal-transition`.
        private let name: String

        /// A code from its stable name (from the wire, or one of the static members below).
        init(name: String) { self.name = name }

        /// Decodes a code from its name.
        public init(from decoder: any Decoder) throws {
            name = try decoder.singleValueContainer().decode(String.self)
        }

        /// Encodes the code as its name.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(name)
        }

        /// A state transition that the lifecycle does not allow.
        public static let illegalTransition = Code(name: "illegal-transition")
        /// The app was asked to do something that needs it launched first, or launched twice.
        public static let notLaunched = Code(name: "not-launched")
        /// A value from outside (a payload, a file, an argument) failed validation.
        public static let invalidInput = Code(name: "invalid-input")
        /// Remote-notification registration failed: the push distributor refused it
        /// (UnifiedPush `INTERNAL_ERROR`), or the app's keys could not be stored.
        public static let registrationFailed = Code(name: "registration-failed")
        /// No push distributor is reachable: no `org.unifiedpush.Distributor.*` name on the
        /// session bus, or a host without a push service.
        public static let noPushDistributor = Code(name: "no-push-distributor")
        /// The push distributor cannot reach its push server now (UnifiedPush `NETWORK`).
        public static let pushNetworkUnavailable = Code(name: "push-network-unavailable")
        /// The push distributor needs the user to act first, such as configuring a push server
        /// (UnifiedPush `ACTION_REQUIRED`).
        public static let pushActionRequired = Code(name: "push-action-required")
        /// The push distributor requires a VAPID key with the registration (UnifiedPush `VAPID_REQUIRED`).
        public static let pushVAPIDRequired = Code(name: "push-vapid-required")
        /// A user activity could not be continued.
        public static let userActivityFailed = Code(name: "user-activity-failed")
        /// Reading or writing a file the project owns failed.
        public static let io = Code(name: "io")
        /// The host failed or vanished.
        public static let host = Code(name: "host")

        /// The code's stable name, as in logs and on the wire: `invalid-input`.
        public var description: String { name }
    }

    /// What kind of error this is.
    public var code: Code
    /// A human-readable explanation.
    public var message: String
    /// The `errno` of the system call that failed, for an ``Code/io`` error that came from one
    /// (for example `ENOSPC` from a write to a full disk): callers decide on it, not on the
    /// message's wording. `nil` when there is none.
    public var errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of error this is.
    ///   - message: A human-readable explanation.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Creates an error for a system call that failed.
    ///
    /// - Parameters:
    ///   - code: What kind of error this is.
    ///   - message: A human-readable explanation.
    ///   - errno: The call's `errno`.
    public init(_ code: Code, _ message: String, errno: Int32) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(code): \(message)" }
}
