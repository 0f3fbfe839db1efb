import AppLifecycle
import Foundation
import Synchronization

/// A host that drives an app through any sequence of events, deterministically.
///
/// ```swift
/// let host = VirtualHost()
/// let app = Application(delegate: MyDelegate(), host: host, notificationCenter: LifecycleNotificationCenter())
/// let recorder = LifecycleRecorder(application: app)
/// app.launch()
/// host.send(.locked(true))
/// host.advance(by: .seconds(31))
/// try recorder.verifyOrder(["applicationWillResignActive(_:)", "UIApplicationWillResignActiveNotification"])
/// ```
///
/// It records what the app acknowledged (state changes, URLs opened, notifications it asked the
/// host to present, callbacks that overran their deadline) so tests can assert on the host side too.
@MainActor
public final class VirtualHost: ApplicationHost {
    /// One step of a script.
    public enum Step: Sendable, Hashable {
        /// Hand the app a host event.
        case event(HostEvent)
        /// Move the virtual clock.
        case advance(Duration)
        /// A line for the timeline (printed by the example; no effect on the app).
        case note(String)
    }

    /// The virtual clock.
    public let clock = VirtualClock()
    /// The app this host drives (set by ``applicationWillLaunch(_:)``).
    public private(set) weak var application: Application?
    /// Every state change the app reported, in order.
    public private(set) var stateChanges: [(from: ApplicationState, to: ApplicationState)] = []
    /// Every URL the app handled or refused, in order.
    public private(set) var openedURLs: [(url: URL, handled: Bool)] = []
    /// Local notifications the app asked the host to present.
    public private(set) var presentedNotifications: [LocalNotification] = []
    /// Pushes the app asked the host to show as banners (each also in ``presentedNotifications``),
    /// with the banner's buttons, in order.
    public private(set) var presentedRemoteNotifications: [(payload: UserInfo, actions: [UserNotificationAction])] =
        []
    /// The notifications the app scheduled, with their banner buttons, in order.
    public private(set) var scheduledNotifications:
        [(notification: LocalNotification, actions: [UserNotificationAction])] =
            []
    /// The cancellations the app asked for (`nil`: all).
    public private(set) var cancelledNotifications: [[String]?] = []
    /// Every badge number the app set.
    public private(set) var badgeNumbers: [Int] = []
    /// Every change of `isIdleTimerDisabled`.
    public private(set) var idleTimerChanges: [Bool] = []
    /// The background tasks the app reported to its host, as `began <id> <name>` and `ended <id>`, in order.
    public private(set) var backgroundTaskReports: [String] = []
    /// Every interval the app passed to `setMinimumBackgroundFetchInterval(_:)` that changed it, in order.
    public private(set) var backgroundFetchIntervals: [TimeInterval] = []
    /// The URLs the app asked to open outside itself.
    public private(set) var openRequests: [URL] = []
    /// The dynamic quick actions the app published, in order.
    public private(set) var publishedShortcutItems: [[ShortcutItem]] = []
    /// `registerForRemoteNotifications()` (`true`) and `unregisterForRemoteNotifications()`
    /// (`false`) calls, in order.
    public private(set) var remoteNotificationRequests: [Bool] = []
    /// What `canOpenURL` and `open` answer for a scheme (absent: `false`).
    public var openableSchemes: Set<String> = []
    /// Whether the app finished launching.
    public private(set) var didFinishLaunching = false
    /// Whether the app terminated.
    public private(set) var didTerminate = false
    /// The deadline announced when termination began, if it did.
    public private(set) var terminationDeadline: Duration?
    /// Called for each script note (the example prints them).
    public var noteHandler: (@MainActor (String) -> Void)?

    private let overrunLog = OverrunLog()

    /// Creates a host with its clock at zero.
    public init() {}

    /// The virtual clock.
    public var scheduler: any LifecycleScheduler { clock }

    /// The callbacks that overran their deadline, in order.
    public var overruns: [String] { overrunLog.entries }

    /// Records the overrun instead of ending the process.
    public var callbackDeadlineHandler: @Sendable (String) -> Void {
        { [overrunLog] callback in overrunLog.append(callback) }
    }

    /// Remembers the app.
    public func applicationWillLaunch(_ application: Application) { self.application = application }
    /// Records that launching finished.
    public func applicationDidFinishLaunching(_ application: Application) { didFinishLaunching = true }
    /// Records the state change.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - previousState: The state before.
    ///   - state: The state after.
    public func application(
        _ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState
    ) {
        stateChanges.append((previousState, state))
    }
    /// Records the termination deadline.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - deadline: The deadline.
    public func applicationWillTerminate(_ application: Application, deadline: Duration) {
        terminationDeadline = deadline
    }
    /// Records that the app terminated.
    public func applicationDidTerminate(_ application: Application) { didTerminate = true }
    /// Records the URL.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - url: The URL the app was asked to open.
    ///   - handled: Whether it was handled.
    public func application(_ application: Application, didOpen url: URL, handled: Bool) {
        openedURLs.append((url, handled))
    }
    /// Records the notification.
    public func application(
        _ application: Application, schedule notification: LocalNotification, actions: [UserNotificationAction]
    ) {
        scheduledNotifications.append((notification, actions))
    }

    public func application(_ application: Application, cancelLocalNotifications identifiers: [String]?) {
        cancelledNotifications.append(identifiers)
    }

    public func application(_ application: Application, didChangeApplicationIconBadgeNumber number: Int) {
        badgeNumbers.append(number)
    }

    public func application(_ application: Application, didChangeIdleTimerDisabled disabled: Bool) {
        idleTimerChanges.append(disabled)
    }

    public func application(
        _ application: Application, didBeginBackgroundTask identifier: BackgroundTaskIdentifier, name: String?
    ) {
        backgroundTaskReports.append("began \(identifier.rawValue) \(name ?? "")")
    }

    public func application(_ application: Application, didEndBackgroundTask identifier: BackgroundTaskIdentifier) {
        backgroundTaskReports.append("ended \(identifier.rawValue)")
    }

    public func application(
        _ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval
    ) {
        backgroundFetchIntervals.append(interval)
    }

    public func application(
        _ application: Application, open url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue],
        completionHandler: @escaping @MainActor @Sendable (Bool) -> Void
    ) {
        openRequests.append(url)
        completionHandler(url.scheme.map(openableSchemes.contains) ?? false)
    }

    public func application(_ application: Application, canOpen url: URL) -> Bool {
        url.scheme.map(openableSchemes.contains) ?? false
    }

    public func application(_ application: Application, didChangeShortcutItems items: [ShortcutItem]) {
        publishedShortcutItems.append(items)
    }

    public func application(_ application: Application, present notification: LocalNotification) {
        presentedNotifications.append(notification)
    }

    public func application(
        _ application: Application, presentRemoteNotification payload: UserInfo, banner: LocalNotification,
        actions: [UserNotificationAction]
    ) {
        presentedRemoteNotifications.append((payload, actions))
        presentedNotifications.append(banner)
    }

    /// Records the request; the test answers it with ``send(_:)``
    /// (`.registeredForRemoteNotifications` or `.failedToRegisterForRemoteNotifications`).
    public func registerForRemoteNotifications(_ application: Application) {
        remoteNotificationRequests.append(true)
    }

    /// Records the request.
    public func unregisterForRemoteNotifications(_ application: Application) {
        remoteNotificationRequests.append(false)
    }

    /// Hands the app an event (it must have been launched with this host).
    public func send(_ event: HostEvent) {
        guard let application else { preconditionFailure("VirtualHost.send before the app launched") }
        application.handle(event)
    }

    /// Moves the virtual clock, firing due timers.
    ///
    /// - Parameters:
    ///   - duration: How far.
    public func advance(by duration: Duration) { clock.advance(by: duration) }

    /// Performs one script step.
    ///
    /// - Parameters:
    ///   - step: The step.
    public func perform(_ step: Step) {
        switch step {
        case .event(let event): send(event)
        case .advance(let duration): advance(by: duration)
        case .note(let text): noteHandler?(text)
        }
    }

    /// Performs a script's steps in order.
    ///
    /// - Parameters:
    ///   - script: The steps.
    public func run(_ script: [Step]) {
        for step in script { perform(step) }
    }

    /// Performs a script's steps in order, letting other main-actor work (an app's own tasks,
    /// such as a save that ends a background task) run between steps.
    ///
    /// After each step the host yields until the main actor has had `turns` chances to run
    /// queued work; time on the virtual clock does not move while it yields.
    ///
    /// - Parameters:
    ///   - script: The steps.
    ///   - turns: How many times to yield after each step (default 16).
    public func play(_ script: [Step], turns: Int = 16) async {
        for step in script {
            perform(step)
            for _ in 0..<turns { await Task.yield() }
        }
    }

    /// A day in the life of an app, after launch: lock, unlock, sleep, resume, a memory
    /// warning, a clock change (while suspended, delivered on return), and termination.
    public static let scriptedDay: [Step] = [
        .note("09:00 the user locks the screen"),
        .event(.locked(true)),
        .advance(.seconds(60)),
        .note("09:01 the user unlocks"),
        .event(.locked(false)),
        .note("12:30 the lid closes: the machine prepares for sleep"),
        .event(.sleeping(true)),
        .advance(.seconds(5)),
        .note("12:30 while asleep, NTP steps the clock"),
        .event(.significantTimeChange(SignificantTimeChange(reason: .clockSet))),
        .advance(.seconds(3600)),
        .note("13:30 the lid opens: the machine resumes"),
        .event(.sleeping(false)),
        .note("15:00 the system runs short of memory"),
        .event(.memoryWarning(MemoryWarning(level: .medium, source: "virtual"))),
        .note("18:00 the system shuts down"),
        .event(.terminate(.shutdown)),
    ]
}

/// The overruns a watchdog reports, from any thread; Sendable because its state is behind a mutex.
final class OverrunLog: Sendable {
    private let log = Mutex<[String]>([])
    func append(_ callback: String) { log.withLock { $0.append(callback) } }
    var entries: [String] { log.withLock { $0 } }
}
