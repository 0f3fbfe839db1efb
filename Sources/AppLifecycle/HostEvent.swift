import Foundation

/// A fact about the host that drives the app's lifecycle.
///
/// Host bridges (logind, the kernel's clock and memory-pressure interfaces, the session bus,
/// `lifecycled`, or the virtual host of the test kit) turn what they observe into
/// `HostEvent` values and hand them to ``Application/handle(_:)`` on the main actor. The
/// app's state follows from the facts it has been told (``sleeping(_:)``, ``locked(_:)``,
/// ``sessionActive(_:)``): repeating a fact is harmless, so two sources reporting the same
/// lock (a logind `Lock` signal and `LockedHint`) deliver the callbacks once.
public enum HostEvent: Sendable, Hashable {
    /// The machine is about to sleep (`true`, logind `PrepareForSleep(true)`) or has resumed (`false`).
    case sleeping(Bool)
    /// The session was locked (`true`) or unlocked (`false`): logind `Lock`/`Unlock`, `LockedHint`,
    /// or a screensaver's `ActiveChanged`.
    case locked(Bool)
    /// The app's session became the foreground session (`true`) or was switched away from (`false`).
    case sessionActive(Bool)
    /// The host wants the app in the foreground (`true`) or the background (`false`), as when
    /// the user switches apps or `lifecycled` backgrounds an app another one replaced.
    case foreground(Bool)
    /// The host asks the app to terminate (shutdown, SIGTERM, a host request).
    case terminate(TerminationReason)
    /// The wall clock, the time zone, the date or the UTC offset changed significantly.
    case significantTimeChange(SignificantTimeChange)
    /// The host is short of memory.
    case memoryWarning(MemoryWarning)
    /// Someone asks the app to open a URL.
    case openURL(URL, OpenURLOptions)
    /// A remote (push) notification arrived with this payload.
    case remoteNotification(UserInfo)
    /// The user chose an action on a remote notification.
    case remoteNotificationAction(identifier: String?, payload: UserInfo)
    /// Registration for remote notifications succeeded with this device token.
    case registeredForRemoteNotifications(deviceToken: Data)
    /// Registration for remote notifications failed.
    case failedToRegisterForRemoteNotifications(ApplicationError)
    /// A scheduled local notification fired.
    case localNotification(LocalNotification)
    /// The user chose an action on a local notification.
    case localNotificationAction(identifier: String?, notification: LocalNotification)
    /// The host offers the app a chance to fetch data in the background.
    case backgroundFetch
    /// Events for a background URL session with this identifier are waiting.
    case backgroundURLSessionEvents(identifier: String)
    /// Another device or app hands off an activity of this type; its data follows in ``continueUserActivity(_:)``.
    case willContinueUserActivity(type: String)
    /// The data for continuing an activity is available.
    case continueUserActivity(UserActivity)
    /// Continuing an activity of this type failed.
    case failedToContinueUserActivity(type: String, error: ApplicationError)
    /// An activity the app hands off was updated.
    case userActivityUpdated(UserActivity)
    /// The user chose a quick action for the app.
    case shortcutItem(ShortcutItem)
    /// The status bar (a panel, on Linux) is about to change orientation, over `duration` seconds.
    case statusBarOrientation(InterfaceOrientation, duration: Double)
    /// The status bar's frame is about to change to this frame.
    case statusBarFrame(Rect)
}

/// Why the host asks the app to terminate.
public enum TerminationReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The system is shutting down or rebooting (logind `PrepareForShutdown(true)`).
    case shutdown
    /// The process received SIGTERM (from systemd or a user).
    case signal
    /// A host (lifecycled, a test, `lifecyclectl simulate terminate`) asked for it.
    case hostRequest = "host-request"
    /// The host reclaims memory and terminates this app to do so.
    case memoryPressure = "memory-pressure"
}

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

/// A memory warning and its severity.
public struct MemoryWarning: Sendable, Hashable, Codable {
    /// How severe the shortage is.
    public enum Level: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
        /// Some tasks stall on memory (PSI `some`, low-memory-monitor level 50).
        case low
        /// Memory is short enough that the system reclaims aggressively (low-memory-monitor level 100).
        case medium
        /// All tasks stall on memory; the OOM killer is near (PSI `full`, low-memory-monitor level 255).
        case critical

        /// The level low-memory-monitor would report for this severity (50, 100 or 255).
        public var lowMemoryMonitorValue: UInt8 {
            switch self {
            case .low: return 50
            case .medium: return 100
            case .critical: return 255
            }
        }

        /// The level for a low-memory-monitor `LowMemoryWarning(y)` value, or `nil` for 0 (no warning).
        ///
        /// - Parameters:
        ///   - value: The byte low-memory-monitor sent.
        public init?(lowMemoryMonitorValue value: UInt8) {
            switch value {
            case 0: return nil
            case 1...50: self = .low
            case 51...100: self = .medium
            default: self = .critical
            }
        }

        private var rank: Int {
            switch self {
            case .low: return 0
            case .medium: return 1
            case .critical: return 2
            }
        }

        /// Orders levels by severity.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// How severe the shortage is.
    public var level: Level
    /// Which source reported it (`"psi"`, `"memory-pressure-watch"`, `"low-memory-monitor"`, `"host"`).
    public var source: String

    /// Creates a memory warning.
    ///
    /// - Parameters:
    ///   - level: How severe the shortage is.
    ///   - source: Which source reported it.
    public init(level: Level, source: String) {
        self.level = level
        self.source = source
    }
}
