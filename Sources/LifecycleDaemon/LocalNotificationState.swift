import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials
import LifecycledProtocol
import LocalNotificationEngine
import Logging
import SystemdBus

/// What lifecycled keeps for local notifications, badges and idle inhibitors (main actor only,
/// inside ``LifecycleDaemon``).
struct LocalNotificationState {
    /// A banner on screen, by the server's id.
    struct Banner {
        /// The app it is for.
        var appID: String
        /// The notification as the app gets it back.
        var notification: LocalNotification
        /// Its buttons beyond the default action.
        var buttons: [ScheduledLocalNotification.Button]
    }

    /// A notification kept for its app's next activation, with its bytes (as ``LocalNotificationBudget`` counts).
    struct Kept {
        var notification: ScheduledLocalNotification
        var bytes: Int
    }

    /// The schedule file.
    let scheduleURL: URL
    /// Whether the file was read (on the first use: a call may come before ``LifecycleDaemon/start()`` loads it).
    var loaded = false
    /// The schedule, ordered by fire time.
    var schedule = LocalNotificationSchedule(timeZone: SystemLocalTime())
    /// The bytes of what is scheduled, per app and in all.
    var budget = LocalNotificationBudget(
        perAppLimit: LifecycledProtocol.Limits.scheduleBytesPerApp, totalLimit: LifecycledProtocol.Limits.scheduleBytes)
    /// Entries of the file that did not read, kept verbatim and written back.
    var rejected: [(entry: UserInfoValue, reason: String)] = []
    /// Whether the file may be replaced (not when it could not be read or is from a newer version).
    var writable = true
    /// The alarm at the next fire time, and its loop source.
    var alarm: RealtimeAlarm?
    var alarmSource: EventSourceToken?
    /// Writes the file (a test may replace it with one whose save it holds).
    var writer: LocalNotificationScheduleWriter
    /// Notifications a `ScheduleNotification` call is saving, by key, with that call's token: in
    /// the file from the next write on, in the schedule (where they can fire) only once that write
    /// succeeded, so a notification whose call answers `NotSaved` was never delivered either.
    var pending: [LocalNotificationSchedule.Key: (token: UInt64, notification: ScheduledLocalNotification)] = [:]
    var nextPendingToken: UInt64 = 0
    /// After a failed write: the next retry, and its delays (the daemon's rule for state writes).
    var retryTask: Task<Void, Never>?
    var retryBackoff = Backoff.stateWrite
    /// How many clock sets the alarm reported (each re-arms it).
    var clockSets = 0
    /// The notification server's client.
    var server: DesktopNotificationClient?
    var serverTask: Task<Void, Never>?
    /// Banners on screen by server id; the server id of each (app, identifier) for `replaces_id`.
    var banners: [UInt32: Banner] = [:]
    var bannerIDs: [LocalNotificationSchedule.Key: UInt32] = [:]
    /// Activation tokens by server id, until the `ActionInvoked` they precede.
    var activationTokens: [UInt32: String] = [:]
    /// Notifications that could not be shown (no server): delivered when the app next becomes
    /// active; in the file's `undelivered` list, bounded (``LifecycledProtocol/Limits/keptNotificationsPerApp``).
    var undelivered: [String: [Kept]] = [:]
    /// The bytes of what is kept, in all.
    var keptBytes = 0
    /// Notifications that fired and are on their way to a banner (the server is being asked):
    /// written as kept until shown, so a crash in between does not lose them. A cancel or a
    /// replacement removes the ticket; the delivery, back from each await, then stops (and
    /// withdraws the banner the server just made).
    var delivering: [UInt64: ScheduledLocalNotification] = [:]
    var nextDeliveryTicket: UInt64 = 0
    /// Whether the missing server was logged (once until one appears).
    var serverAbsenceLogged = false
    /// The badge of each app.
    var badges: [String: Int] = [:]
    /// Apps that asked for the idle timer to be disabled, and the inhibitor fd held for each active one.
    var idleTimerDisabled: Set<String> = []
    var idleInhibitors: [String: BusFileDescriptor] = [:]
    /// The `org.freedesktop.ScreenSaver.Inhibit` cookie held for each active app that wants one.
    var screenSaverCookies: [String: UInt32] = [:]
    /// Bumped on every change of an app's idle wish or state, so an `Inhibit` reply that arrives
    /// after the wish ended is closed at once.
    var idleGeneration: [String: Int] = [:]
    /// lifecycled's state directory.
    let stateDirectory: String
    /// The system bus connection for logind's `Inhibit`, opened on first use.
    var systemBus: BusConnection?
    /// The system bus connection being opened, which concurrent requests share.
    var systemBusOpening: Task<BusConnection, any Error>?

    @MainActor
    init(stateDirectory: String, logger: Logger) {
        self.stateDirectory = stateDirectory
        scheduleURL = URL(fileURLWithPath: stateDirectory).appendingPathComponent(
            LocalNotificationScheduleFile.fileName)
        writer = LocalNotificationScheduleWriter(url: scheduleURL, logger: logger)
    }
}
