extension LifecycledProtocol {
    /// The methods of `org.applifecycle.Lifecycled1`, each with its arguments and results.
    ///
    /// The daemon dispatches on this enum with an exhaustive switch, so a method added here does not
    /// compile until it is answered.
    public enum Method: String, CaseIterable, Sendable {
        case registerApp = "RegisterApp"
        case reportState = "ReportState"
        case reportNotification = "ReportNotification"
        case backgroundTaskBegan = "BackgroundTaskBegan"
        case backgroundTaskEnded = "BackgroundTaskEnded"
        case openURL = "OpenURL"
        case launch = "Launch"
        case terminate = "Terminate"
        case post = "Post"
        case simulate = "Simulate"
        case getState = "GetState"
        case listApps = "ListApps"
        case scheduleNotification = "ScheduleNotification"
        case cancelNotification = "CancelNotification"
        case listNotifications = "ListNotifications"
        case presentNotification = "PresentNotification"
        case setBadge = "SetBadge"
        case setIdleTimerDisabled = "SetIdleTimerDisabled"
        case listManifests = "ListManifests"
        case setFreezeExempt = "SetFreezeExempt"
        case describeApps = "DescribeApps"
        /// The app's `setMinimumBackgroundFetchInterval(_:)`: seconds, `Double.greatestFiniteMagnitude` for never.
        case setMinimumBackgroundFetchInterval = "SetMinimumBackgroundFetchInterval"
        /// Runs one background fetch of the app now (`lifecyclectl fetch APP`, Xcode's "simulate background fetch").
        case performFetch = "PerformFetch"
        /// The user's background-refresh switch for one app (`lifecyclectl background-refresh APP on|off`).
        case setBackgroundRefresh = "SetBackgroundRefresh"
        /// What lifecycled counted since it started (`lifecyclectl status`): pushes received, delivered,
        /// failed, expired and dropped (`push-received`, …), the queue's length and the push
        /// registrations (`push-queued`, `push-registrations`), and local notifications scheduled,
        /// fired, shown and handed to an active app (`notifications-scheduled`, …), as integers.
        /// The same names, upper-cased, are the journal fields of the lines that count them.
        case getCounters = "GetCounters"

        /// The member name on the bus.
        public var name: String { rawValue }

        /// The input arguments.
        public var arguments: [Argument] {
            switch self {
            case .registerApp: return [Argument("app_id", "s")]
            case .reportState: return [Argument("app_id", "s"), Argument("state", "s")]
            case .reportNotification, .post:
                return [Argument("app_id", "s"), Argument("name", "s"), Argument("user_info", "a{sv}")]
            case .backgroundTaskBegan:
                return [Argument("app_id", "s"), Argument("task", "u"), Argument("name", "s")]
            case .backgroundTaskEnded: return [Argument("app_id", "s"), Argument("task", "u")]
            case .openURL: return [Argument("url", "s"), Argument("options", "a{sv}")]
            case .launch: return [Argument("app_id", "s"), Argument("options", "a{sv}")]
            case .terminate, .getState: return [Argument("app_id", "s")]
            case .simulate: return [Argument("kind", "s"), Argument("arguments", "a{sv}")]
            case .listApps, .listManifests, .getCounters: return []
            case .scheduleNotification, .presentNotification:
                return [Argument("app_id", "s"), Argument("notification", "a{sv}")]
            case .cancelNotification: return [Argument("app_id", "s"), Argument("identifier", "s")]
            case .listNotifications: return [Argument("app_id", "s")]
            case .setBadge: return [Argument("app_id", "s"), Argument("count", "x")]
            case .setIdleTimerDisabled: return [Argument("app_id", "s"), Argument("disabled", "b")]
            case .setFreezeExempt: return [Argument("app_id", "s"), Argument("exempt", "b")]
            case .describeApps: return []
            case .setMinimumBackgroundFetchInterval: return [Argument("app_id", "s"), Argument("interval", "d")]
            case .performFetch: return [Argument("app_id", "s")]
            case .setBackgroundRefresh: return [Argument("app_id", "s"), Argument("enabled", "b")]
            }
        }

        /// The results.
        public var results: [Argument] {
            switch self {
            case .registerApp: return [Argument("launch_options", "a{sv}"), Argument("host_facts", "a{sv}")]
            case .openURL: return [Argument("app_id", "s")]
            case .getState: return [Argument("state", "s")]
            case .listApps: return [Argument("apps", "a(sssu)")]
            case .scheduleNotification: return [Argument("identifier", "s")]
            case .listNotifications: return [Argument("notifications", "aa{sv}")]
            case .listManifests: return [Argument("manifests", "aa{sv}")]
            case .describeApps: return [Argument("apps", "aa{sv}")]
            case .getCounters: return [Argument("counters", "a{sv}")]
            case .reportState, .reportNotification, .backgroundTaskBegan, .backgroundTaskEnded, .launch, .terminate,
                .post, .simulate, .cancelNotification, .presentNotification, .setBadge, .setIdleTimerDisabled,
                .setFreezeExempt, .setMinimumBackgroundFetchInterval, .performFetch, .setBackgroundRefresh:
                return []
            }
        }

        /// The input signature: the arguments' signatures in order.
        public var inSignature: String { arguments.map(\.signature).joined() }
        /// The output signature.
        public var outSignature: String { results.map(\.signature).joined() }
    }
}
