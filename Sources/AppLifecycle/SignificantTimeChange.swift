import FoundationEssentials

/// A significant change in the time, and why it happened.
public struct SignificantTimeChange: Sendable, Hashable, Codable {
    /// What kind of change happened.
    public enum Reason: String, Sendable, Hashable, Codable, CaseIterable {
        /// CLOCK_REALTIME was set (a `TFD_TIMER_CANCEL_ON_SET` timer was cancelled).
        case clockSet = "clock-set"
        /// The system time zone changed (`/etc/localtime`, timedated's `Timezone`).
        case timeZone = "timezone"
        /// Local midnight arrived.
        case midnight
        /// The UTC offset of the local time zone changed (daylight saving time began or ended).
        case daylightSavingTime = "dst"
    }

    /// What kind of change happened.
    public var reason: Reason
    /// The time zone identifier in force after the change, when the source knows it.
    public var timeZoneIdentifier: String?

    /// Creates a time change.
    ///
    /// - Parameters:
    ///   - reason: What kind of change happened.
    ///   - timeZoneIdentifier: The time zone in force after the change, if known.
    public init(reason: Reason, timeZoneIdentifier: String? = nil) {
        self.reason = reason
        self.timeZoneIdentifier = timeZoneIdentifier
    }
}
