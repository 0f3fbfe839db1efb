/// An error from AppLifecycle, or one a host reports to the app.
///
/// Errors are an extensible struct with static codes (the swift-service-lifecycle idiom):
/// callers match on ``code`` and read ``message`` for the human-readable detail.
public struct ApplicationError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of error this is.
    public struct Code: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
        /// The code's stable string.
        public var rawValue: String

        /// Creates a code from its stable string.
        ///
        /// - Parameters:
        ///   - rawValue: The stable string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A state transition that the lifecycle does not allow.
        public static let illegalTransition = Code(rawValue: "illegal-transition")
        /// The app was asked to do something that needs it launched first, or launched twice.
        public static let notLaunched = Code(rawValue: "not-launched")
        /// A value from outside (a payload, a file, an argument) failed validation.
        public static let invalidInput = Code(rawValue: "invalid-input")
        /// Remote-notification registration failed: the push distributor refused it
        /// (UnifiedPush `INTERNAL_ERROR`), or the app's keys could not be stored.
        public static let registrationFailed = Code(rawValue: "registration-failed")
        /// No push distributor is reachable: no `org.unifiedpush.Distributor.*` name on the
        /// session bus, or a host without a push service.
        public static let noPushDistributor = Code(rawValue: "no-push-distributor")
        /// The push distributor cannot reach its push server now (UnifiedPush `NETWORK`).
        public static let pushNetworkUnavailable = Code(rawValue: "push-network-unavailable")
        /// The push distributor needs the user to act first, such as configuring a push server
        /// (UnifiedPush `ACTION_REQUIRED`).
        public static let pushActionRequired = Code(rawValue: "push-action-required")
        /// The push distributor requires a VAPID key with the registration (UnifiedPush `VAPID_REQUIRED`).
        public static let pushVAPIDRequired = Code(rawValue: "push-vapid-required")
        /// A user activity could not be continued.
        public static let userActivityFailed = Code(rawValue: "user-activity-failed")
        /// Reading or writing a file the project owns failed.
        public static let io = Code(rawValue: "io")
        /// The host failed or vanished.
        public static let host = Code(rawValue: "host")

        /// The stable string.
        public var description: String { rawValue }
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
    public var description: String { "\(code.rawValue): \(message)" }
}
