import AppLifecycle
import FoundationEssentials
import SystemdBus

/// The names, members and encodings of `lifecycled`'s session-bus interface, shared by the
/// daemon, the apps it hosts, `LifecycleSubscriber` and `lifecyclectl`.
///
/// ## Interface `org.applifecycle.Lifecycled1` at `/org/applifecycle/Lifecycled1`
///
/// | member | kind | signature | meaning |
/// | --- | --- | --- | --- |
/// | `RegisterApp` | method | `s` → `a{sv}a{sv}` | an app process registers under its id; returns its launch options and the host facts |
/// | `ReportState` | method | `ss` | an app reports its new state |
/// | `ReportNotification` | method | `ssa{sv}` | an app reports a notification it posted (rebroadcast as `Notification`) |
/// | `BackgroundTaskBegan` | method | `sus` | an app began a background task (id, name) |
/// | `BackgroundTaskEnded` | method | `su` | an app ended a background task |
/// | `OpenURL` | method | `sa{sv}` → `s` | open a URL in the app whose manifest claims its scheme, launching it if needed; returns the app id |
/// | `Launch` | method | `sa{sv}` | launch an app with launch options |
/// | `Terminate` | method | `s` | terminate an app (willTerminate, then SIGTERM, then SIGKILL at the deadlines) |
/// | `Post` | method | `ssa{sv}` | deliver a named notification with userInfo into an app's center |
/// | `Simulate` | method | `sa{sv}` | inject a host event (`sleep`, `wake`, `lock`, `unlock`, `memory-warning`, `time-change`, `terminate`), or move the fetch scheduler's test clock and conditions (`fetch-clock`, `fetch-conditions`); refused unless enabled |
/// | `GetState` | method | `s` → `s` | an app's state |
/// | `ListApps` | method | → `a(sssu)` | id, state, name, pid (0 when not running) of every known app |
/// | `ScheduleNotification` | method | `sa{sv}` → `s` | schedule a local notification for an app (its property list, plus `actions`: the banner's buttons); returns its identifier once the schedule is on disk (`NotSaved` otherwise; `LimitsExceeded` over ``Limits/scheduleBytesPerApp`` or ``Limits/scheduleBytes``) |
/// | `CancelNotification` | method | `ss` | cancel an app's notification by identifier (`""`: all of them): from the schedule, its banner withdrawn, its kept copy dropped; `UnknownNotification` when there is none of that identifier |
/// | `ListNotifications` | method | `s` → `aa{sv}` | an app's schedule (`""`: every app's), soonest first, each with `app` and `nextFireDate` |
/// | `PresentNotification` | method | `sa{sv}` | the registered app shows a notification now (as a banner: it is not active); `remote: true` marks a push's banner, whose click and buttons come back as `remote-notification-opened` / `-action` |
/// | `SetBadge` | method | `sx` | set an app's badge (announced with `com.canonical.Unity.LauncherEntry.Update`) |
/// | `SetIdleTimerDisabled` | method | `sb` | the registered app wants the screen kept awake while it is active (a logind `idle` inhibitor) |
/// | `ListManifests` | method | → `aa{sv}` | every manifest: `id`, `name`, `urlSchemes`, `shortcutItems`, `backgroundModes` (for desktop files) |
/// | `SetMinimumBackgroundFetchInterval` | method | `sd` | the registered app's `setMinimumBackgroundFetchInterval(_:)` (seconds; `Double.greatestFiniteMagnitude`: never); the daemon schedules its fetches if its manifest declares `fetch` |
/// | `PerformFetch` | method | `s` | run one background fetch of an app now (thawed, or launched in the background): `lifecyclectl fetch` |
/// | `SetBackgroundRefresh` | method | `sb` | the user's background-refresh switch for an app (persisted; off: its fetches are deferred, `denied`) |
/// | `Notification` | signal | `ssa{sv}` | app id, notification name, userInfo: every lifecycle notification of every app |
/// | `StateChanged` | signal | `sss` | app id, previous state, new state |
/// | `Command` | signal | `ssa{sv}` | app id, command, arguments: the daemon tells a hosted app a host fact or another command (``LifecycledCommand``) |
/// | `HostState` | property | `a{sv}` | `sleeping`, `locked`, `session-active` (Booleans); `memory-reclaim` (`available`/`unavailable`), `memory-reclaimed` (bytes taken from frozen apps since start) |
/// | `Apps` | property | `a(sssu)` | as `ListApps` |
/// | `SimulationEnabled` | property | `b` | whether `Simulate` is accepted |
/// | `Version` | property | `u` | the protocol version (1) |
///
/// Errors are `org.applifecycle.Lifecycled1.Error.<Name>` (``ErrorName``), or the standard
/// `org.freedesktop.DBus.Error.AccessDenied` / `InvalidArgs`.
///
/// The members are declared once, with their arguments' names and signatures: ``Method``,
/// ``Signal`` and ``Property``. The daemon exports exactly these, and ``introspectionXML()`` is the
/// interface as shipped in `/usr/share/dbus-1/interfaces/org.applifecycle.Lifecycled1.xml` (a test
/// holds the running daemon's introspection to it).
public enum LifecycledProtocol {
    /// The well-known name, versioned.
    public static let busName = "org.applifecycle.Lifecycled1"
    /// The object path.
    public static let objectPath = "/org/applifecycle/Lifecycled1"
    /// The interface.
    public static let interface = "org.applifecycle.Lifecycled1"
    /// The protocol version.
    public static let version: UInt32 = 1

    /// The environment variable that names the app id of a process lifecycled launched.
    public static let appIDEnvironment = "LIFECYCLE_APP_ID"
    /// The environment variable that carries the launch options (their userInfo's JSON).
    public static let launchOptionsEnvironment = "LIFECYCLE_LAUNCH_OPTIONS"
    /// The environment variable that forces the in-process bridge (`0`) or lifecycled (`1`).
    public static let useDaemonEnvironment = "LIFECYCLE_USE_DAEMON"

    /// Error names (`org.applifecycle.Lifecycled1.Error.*`).
    public enum ErrorName {
        /// No manifest with this id.
        public static let unknownApp = "org.applifecycle.Lifecycled1.Error.UnknownApp"
        /// No app claims the URL's scheme.
        public static let noHandler = "org.applifecycle.Lifecycled1.Error.NoHandler"
        /// The URL is malformed or too long.
        public static let invalidURL = "org.applifecycle.Lifecycled1.Error.InvalidURL"
        /// `Simulate` is not enabled.
        public static let simulationDisabled = "org.applifecycle.Lifecycled1.Error.SimulationDisabled"
        /// The app could not be launched.
        public static let launchFailed = "org.applifecycle.Lifecycled1.Error.LaunchFailed"
        /// The caller is not the process registered for this app.
        public static let notRegistered = "org.applifecycle.Lifecycled1.Error.NotRegistered"
        /// `CancelNotification`: the app has no notification of this identifier (not scheduled, not
        /// on screen, not kept for its next activation).
        public static let unknownNotification = "org.applifecycle.Lifecycled1.Error.UnknownNotification"
        /// The change could not be made durable (the schedule file could not be written: the
        /// message says why and what to do, such as freeing space); nothing was changed.
        public static let notSaved = "org.applifecycle.Lifecycled1.Error.NotSaved"
    }

    /// Limits on arguments; larger ones are refused with `InvalidArgs`.
    public enum Limits {
        /// The longest app id.
        public static let appIDLength = 255
        /// The longest URL.
        public static let urlLength = 8192
        /// The longest notification name.
        public static let notificationNameLength = 255
        /// The most entries in a userInfo (all levels).
        public static let userInfoEntries = 1024
        /// The deepest userInfo nesting.
        public static let userInfoDepth = 8
        /// The largest userInfo, in bytes of its D-Bus form (``UserInfoBusCodec/wireSize(of:)``):
        /// what is really sent.
        public static let userInfoBytes = 64 * 1024
        /// The largest message the smallest common bus configuration carries: dbus-daemon's
        /// built-in `max_message_size` (32 MiB, also the system bus's; a session bus usually
        /// allows more, the D-Bus specification at most 128 MiB). Every message lifecycled sends
        /// stays a quarter of it or less (``scheduleBytes``).
        public static let busMessageBytes = 32 * 1024 * 1024
        /// The most one app may have scheduled, in bytes of the D-Bus form of its
        /// `ListNotifications` entries; the registration's `scheduled-local-notifications`
        /// `Command` carries at most this much (beyond it, `ScheduleNotification` replies
        /// `LimitsExceeded`). About 32 notifications with the largest userInfo, thousands of
        /// ordinary ones.
        public static let scheduleBytesPerApp = 2 * 1024 * 1024
        /// The most all apps together may have scheduled, in the same bytes: the bound of the
        /// largest `ListNotifications("")` reply (a quarter of ``busMessageBytes``).
        public static let scheduleBytes = 8 * 1024 * 1024
        /// The most fired notifications kept for one app's next activation (when no notification
        /// server could show them; the oldest are dropped, with a log line). As iOS, which keeps
        /// 64 pending notifications per app.
        public static let keptNotificationsPerApp = 64
        /// The most bytes (as ``scheduleBytesPerApp`` counts them) kept for one app's next
        /// activation, and for all apps together; the oldest are dropped beyond either.
        public static let keptBytesPerApp = 2 * 1024 * 1024
        /// See ``keptBytesPerApp``.
        public static let keptBytes = 8 * 1024 * 1024
    }

    /// Whether a string is a valid app id: reverse-DNS, 2+ dot-separated elements of
    /// `[A-Za-z0-9_-]`, not starting with a digit or `-`, at most ``Limits/appIDLength``.
    ///
    /// - Parameters:
    ///   - id: The candidate.
    public static func isValidAppID(_ id: String) -> Bool {
        // On the UTF-8 bytes: every subscriber checks the id of every notification it receives, and
        // Character-level tests (grapheme breaking, Unicode properties) cost more than the rest of
        // the delivery. The rule is ASCII-only, so bytes decide it exactly.
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= Limits.appIDLength else { return false }
        var elements = 1
        var elementStart = true
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "."):
                guard !elementStart else { return false }  // an empty element
                elements += 1
                elementStart = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
                elementStart = false
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                guard !elementStart else { return false }  // an element may not start with a digit or '-'
            default:
                return false
            }
        }
        return elements >= 2 && !elementStart
    }

    /// Checks a userInfo against ``Limits``, and refuses a number that is not finite.
    ///
    /// D-Bus carries NaN and the infinities, but JSON (traces, `lifecyclectl monitor --json`, the
    /// restoration archive) cannot, so a userInfo holding one would not survive every path a
    /// notification takes: it is refused here, on the app side, in the daemon and in lifecyclectl alike.
    /// The size is that of the D-Bus form, the one that is sent.
    ///
    /// - Parameters:
    ///   - userInfo: A notification's or command's payload.
    /// - Throws: `ApplicationError` with code `invalidInput` naming the limit or the key.
    public static func validate(_ userInfo: UserInfo) throws {
        guard userInfo.nestingDepth <= Limits.userInfoDepth else {
            throw ApplicationError(.invalidInput, "userInfo nested deeper than \(Limits.userInfoDepth)")
        }
        func count(_ value: UserInfoValue) -> Int {
            switch value {
            case .array(let values): return values.count + values.map(count).reduce(0, +)
            case .dictionary(let values): return values.count + values.values.map(count).reduce(0, +)
            default: return 0
            }
        }
        guard count(.dictionary(userInfo.values)) <= Limits.userInfoEntries else {
            throw ApplicationError(.invalidInput, "userInfo has more than \(Limits.userInfoEntries) entries")
        }
        if let (key, isDate) = firstUnrepresentableNumber(in: .dictionary(userInfo.values), path: "") {
            throw ApplicationError(
                .invalidInput,
                isDate
                    ? "userInfo holds a date outside year 1 to 9999 (or not a number) at '\(key)'"
                    : "userInfo holds a number that is not finite (NaN or infinity) at '\(key)'")
        }
        let size = UserInfoBusCodec.wireSize(of: userInfo)
        guard size <= Limits.userInfoBytes else {
            throw ApplicationError(.invalidInput, "userInfo is \(size) bytes, larger than \(Limits.userInfoBytes)")
        }
    }

    /// The key path of the first NaN or infinity, or of the first date outside
    /// `UserInfoValue.representableDateSeconds`, in a value; `nil` if there is none.
    private static func firstUnrepresentableNumber(in value: UserInfoValue, path: String) -> (String, isDate: Bool)? {
        switch value {
        case .double(let number): return number.isFinite ? nil : (path, false)
        case .date(let date):
            return UserInfoValue.representableDateSeconds.contains(date.timeIntervalSince1970) ? nil : (path, true)
        case .array(let values):
            for (index, element) in values.enumerated() {
                if let found = firstUnrepresentableNumber(in: element, path: "\(path)[\(index)]") { return found }
            }
            return nil
        case .dictionary(let values):
            for key in values.keys.sorted() {
                if let found = firstUnrepresentableNumber(
                    in: values[key]!, path: path.isEmpty ? key : "\(path).\(key)")
                {
                    return found
                }
            }
            return nil
        default: return nil
        }
    }
}
