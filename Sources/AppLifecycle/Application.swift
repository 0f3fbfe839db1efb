import FoundationEssentials
import Glibc
import Logging
import Synchronization

/// The app object: the life-cycle state machine that calls the delegate and posts the
/// notifications, in the order the UIKit documents give.
///
/// The Linux counterpart of `UIApplication`. In production there is one per process, created
/// by ``main(delegate:host:launchOptions:configuration:)`` and reachable as ``shared``; tests create as many
/// as they like, each with its own host and notification center.
///
/// ## How state follows the host
///
/// A host hands the app facts (``HostEvent``): the machine sleeps, the session is locked, the
/// session is switched away, the host wants the app in the foreground. The app's target state
/// follows from them: in the foreground only when the host wants it there, the session is
/// active and the machine awake; active only when, in addition, the session is unlocked. The
/// app then moves to its target one legal transition at a time (``ApplicationState/canTransition(to:)``),
/// calling the delegate and posting the notification for each step. A background app with no
/// background task and no pending completion handler is suspended.
///
/// ## Order
///
/// For each callback the delegate is called first and the notification posted after it returns,
/// except where the UIKit documents say the notification comes "shortly before":
/// `UIApplicationWillEnterForegroundNotification` and `UIApplicationSignificantTimeChangeNotification`.
/// Events that arrive while a callback runs (a delegate that posts, or a host that reports a
/// fact from inside a callback) are queued and handled after it returns.
@MainActor
public final class Application {
    /// The tunable limits of the life cycle.
    public struct Configuration: Sendable {
        /// The app's identifier, used for its state directory (default: the executable's name).
        public var applicationIdentifier: String
        /// The background time an app gets after entering the background (default 30 s).
        public var backgroundTimeLimit: Duration
        /// The deadline of `applicationWillTerminate(_:)` and `applicationDidEnterBackground(_:)` (default 5 s).
        public var callbackDeadline: Duration
        /// How long completion handlers (background fetch, remote-notification fetch, actions) have (default 30 s).
        public var completionHandlerDeadline: Duration
        /// The orientations used when the delegate does not implement `supportedInterfaceOrientationsFor`.
        public var supportedInterfaceOrientations: InterfaceOrientationMask
        /// Whether state preservation and restoration run at all (default `true`).
        public var isStateRestorationEnabled: Bool
        /// Where the restoration archive lives (default: ``RestorationArchive/defaultDirectory(applicationIdentifier:environment:)``).
        public var stateRestorationDirectory: URL?
        /// Where the app's diagnostics go (a refused transition, an overrun deadline, a misused
        /// background task), at `info` or below: the executable decides what it shows.
        public var logger: Logger

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - applicationIdentifier: The app's identifier.
        ///   - backgroundTimeLimit: Background time after entering the background.
        ///   - callbackDeadline: The deadline of the terminate and enter-background callbacks.
        ///   - completionHandlerDeadline: How long completion handlers have.
        ///   - supportedInterfaceOrientations: The default orientations.
        ///   - isStateRestorationEnabled: Whether state preservation runs.
        ///   - stateRestorationDirectory: Where the restoration archive lives.
        ///   - logger: Where the app's diagnostics go.
        public init(
            applicationIdentifier: String = ProcessInfo.processInfo.processName,
            backgroundTimeLimit: Duration = .seconds(30),
            callbackDeadline: Duration = .seconds(5),
            completionHandlerDeadline: Duration = .seconds(30),
            supportedInterfaceOrientations: InterfaceOrientationMask = .all,
            isStateRestorationEnabled: Bool = true,
            stateRestorationDirectory: URL? = nil,
            logger: Logger = Logger(label: "AppLifecycle")
        ) {
            self.logger = logger
            self.applicationIdentifier = applicationIdentifier
            self.backgroundTimeLimit = backgroundTimeLimit
            self.callbackDeadline = callbackDeadline
            self.completionHandlerDeadline = completionHandlerDeadline
            self.supportedInterfaceOrientations = supportedInterfaceOrientations
            self.isStateRestorationEnabled = isStateRestorationEnabled
            self.stateRestorationDirectory = stateRestorationDirectory
        }
    }

    /// A delegate invocation, reported to ``delegateCallTracer``.
    public enum DelegateCall: Sendable, Hashable {
        /// The app is about to call this delegate method.
        case willCall(String)
        /// The call returned; `implemented` is `false` when the protocol's default ran.
        case didCall(String, implemented: Bool)
    }

    private static weak var sharedInstance: Application?

    /// The app of this process: the one ``main(delegate:host:launchOptions:configuration:)`` runs, else the first one created.
    ///
    /// Stops the program with a message when no app exists yet (a programming error, like
    /// touching `UIApplication.shared` before `UIApplicationMain`).
    public static var shared: Application {
        guard let app = sharedInstance else {
            preconditionFailure("Application.shared used before an Application was created")
        }
        return app
    }

    /// The app's delegate.
    public let delegate: any ApplicationDelegate
    /// The host that drives the app.
    public let host: any ApplicationHost
    /// The center the app posts its notifications to.
    public let notificationCenter: LifecycleNotificationCenter
    /// The app's limits.
    public let configuration: Configuration
    /// Receives every delegate invocation (the test kit's recorder and traces use it).
    public var delegateCallTracer: (@MainActor (DelegateCall) -> Void)?

    /// The app's current state.
    public internal(set) var applicationState: ApplicationState = .notRunning
    /// The launch options of the current launch.
    public internal(set) var launchOptions = LaunchOptions()
    /// Whether protected files are available (`false` while the session is locked).
    public internal(set) var isProtectedDataAvailable = true
    /// The status bar's orientation, as last reported by the host.
    public internal(set) var statusBarOrientation: InterfaceOrientation = .portrait
    /// The status bar's frame, as last reported by the host.
    public internal(set) var statusBarFrame: Rect = .zero
    /// Whether Low Power Mode is on (`ProcessInfo.isLowPowerModeEnabled`): on Linux, power-profiles-daemon's
    /// `power-saver` profile, as the host last reported it (`false` until it reports one).
    ///
    /// Always the host's latest value, also while the app is suspended; the
    /// ``powerStateDidChangeNotification`` that announces a change waits for the foreground then
    /// (see <doc:DeviceConditions>).
    public internal(set) var isLowPowerModeEnabled = false
    /// How hot the device is (`ProcessInfo.thermalState`), as the host last reported it
    /// (``ThermalState/nominal`` until it reports one); announced by ``thermalStateDidChangeNotification``.
    public internal(set) var thermalState = ThermalState.nominal
    /// Whether the app may be woken to fetch in the background (`backgroundRefreshStatus`), as the
    /// host last reported it (``BackgroundRefreshStatus/available`` until it reports one); announced by
    /// ``backgroundRefreshStatusDidChangeNotification``.
    public internal(set) var backgroundRefreshStatus = BackgroundRefreshStatus.available
    /// What the app registered with ``registerUserNotificationSettings(_:)``, or `nil`.
    public internal(set) var currentUserNotificationSettings: UserNotificationSettings?

    /// The badge on the app's launcher entry; setting it announces it on the desktop (the
    /// `com.canonical.Unity.LauncherEntry` `Update` signal: `count`, and `count-visible` unless 0).
    public var applicationIconBadgeNumber: Int {
        get { badgeNumber }
        set {
            guard newValue != badgeNumber else { return }
            badgeNumber = newValue
            host.application(self, didChangeApplicationIconBadgeNumber: newValue)
        }
    }

    /// Whether the screen must not blank or lock while the app is active: the host holds a logind
    /// `idle` inhibitor in `block` mode while this is `true` and the app is active, and drops it
    /// when the app resigns active or this becomes `false`.
    public var isIdleTimerDisabled: Bool {
        get { idleTimerDisabled }
        set {
            guard newValue != idleTimerDisabled else { return }
            idleTimerDisabled = newValue
            host.application(self, didChangeIdleTimerDisabled: newValue)
        }
    }

    /// The app's dynamic quick actions (`shortcutItems`), shown after the static ones of its
    /// manifest; setting them publishes them through the host.
    public var shortcutItems: [ShortcutItem]? {
        get { dynamicShortcutItems }
        set {
            guard newValue != dynamicShortcutItems else { return }
            dynamicShortcutItems = newValue
            host.application(self, didChangeShortcutItems: newValue ?? [])
        }
    }

    /// Opens a URL in the app that handles it (`open(_:options:completionHandler:)`): an app
    /// lifecycled hosts when one claims the scheme, else the desktop's handler (the
    /// OpenURI portal, or the default application of the XDG MIME-apps files).
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - options: ``OpenExternalURLOptionsKey/universalLinksOnly`` restricts it to hosted apps.
    ///   - completionHandler: Called on the main actor with whether a handler took the URL.
    public func open(
        _ url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue] = [:],
        completionHandler: (@MainActor @Sendable (Bool) -> Void)? = nil
    ) {
        host.application(self, open: url, options: options) { opened in completionHandler?(opened) }
    }

    /// Whether an app would handle the URL (`canOpenURL(_:)`): a hosted app claims its scheme, or
    /// the desktop has a handler for it. Launches nothing.
    public func canOpenURL(_ url: URL) -> Bool {
        host.application(self, canOpen: url)
    }

    var dynamicShortcutItems: [ShortcutItem]?
    var badgeNumber = 0
    var idleTimerDisabled = false
    var backgroundFetchInterval: TimeInterval = Application.backgroundFetchIntervalNever
    var scheduledLocalNotificationsMirror: [LocalNotification] = []
    var remoteNotificationsRegistered = false

    // Host facts.
    var foregroundRequested = true
    /// `.focused(_:)`: whether one of the app's windows has the focus (inactive when not).
    var focused = true
    var sessionActive = true
    var sleeping = false
    var locked = false
    var launched = false
    var terminating = false
    /// True while the launch sequence handles what the app was launched for: a background launch
    /// must not suspend before that (the reason it was launched).
    var launchInProgress = false
    /// `.foreground(_:)` reported before launch; it decides where the launch ends.
    var pendingForeground: Bool?

    // Event processing.
    var queue: [Work] = []
    var isDraining = false
    var pendingTimeChange: SignificantTimeChange?
    /// The device's conditions as the app was last told of them by a notification (or at launch):
    /// while the app is suspended the properties move on and these wait for its return.
    var announcedConditions = AnnouncedConditions()
    /// The latest `.statusBarOrientation(_:duration:)` not yet applied (the app was suspended).
    var pendingStatusBarOrientation: (orientation: InterfaceOrientation, duration: Double)?
    var eventsBeforeLaunch: [HostEvent] = []

    // Background execution.
    var backgroundTasks: [(id: BackgroundTaskIdentifier, name: String?, expiration: (@MainActor () -> Void)?)] = []
    var nextBackgroundTaskID = 1
    var backgroundDeadline: Duration?
    var backgroundTimer: (any ScheduledAction)?
    /// The completion handlers the app waits for, by id: what each completes, its deadline's
    /// timer, the background task the host sees for it, and whether an overrun ends the app.
    var pendingCompletions:
        [Int: (name: String, timer: any ScheduledAction, hostTask: BackgroundTaskIdentifier?, endsApp: Bool)] = [:]
    var nextCompletionID = 1

    var terminationContinuations: [CheckedContinuation<Void, Never>] = []
    var logger: Logger { configuration.logger }

    /// Creates an app.
    ///
    /// - Parameters:
    ///   - delegate: The object that receives the lifecycle callbacks; the app keeps it for its whole life.
    ///   - host: The host that drives the app.
    ///   - notificationCenter: Where the app posts (default: ``LifecycleNotificationCenter/default``).
    ///   - configuration: The app's limits.
    public init(
        delegate: any ApplicationDelegate, host: any ApplicationHost,
        notificationCenter: LifecycleNotificationCenter = .default,
        configuration: Configuration = Configuration()
    ) {
        self.delegate = delegate
        self.host = host
        self.notificationCenter = notificationCenter
        self.configuration = configuration
        if Self.sharedInstance == nil { Self.sharedInstance = self }
    }

    // MARK: Entry points

    /// Creates the app, launches it, runs it until it terminates, and exits the process.
    ///
    /// The counterpart of `UIApplicationMain`: call it from your `@main` type's `static func main() async`.
    ///
    /// - Parameters:
    ///   - delegate: The object that receives the lifecycle callbacks; the app keeps it for its whole life.
    ///   - host: The host that drives the app.
    ///   - launchOptions: Why the app was launched (default: read from the service manager's environment).
    ///   - configuration: The app's limits.
    public static func main(
        delegate: any ApplicationDelegate, host: any ApplicationHost,
        launchOptions: LaunchOptions? = nil, configuration: Configuration = Configuration()
    ) async -> Never {
        let app = Application(delegate: delegate, host: host, configuration: configuration)
        sharedInstance = app
        await app.run(launchOptions: launchOptions ?? .fromServiceManager())
        exit(0)
    }

    /// Lets the host prepare (``ApplicationHost/prepare(_:)``), launches the app, and returns when
    /// it has terminated.
    ///
    /// - Parameters:
    ///   - launchOptions: Why the app was launched.
    public func run(launchOptions: LaunchOptions = LaunchOptions()) async {
        await host.prepare(self)
        let options =
            host.hostLaunchOptions.map { LaunchOptions(userInfo: launchOptions.userInfo.merging($0.userInfo)) }
            ?? launchOptions
        launch(options: options)
        await waitUntilTerminated()
    }

    /// Returns when the app has terminated (at once if it is not running and was launched before).
    public func waitUntilTerminated() async {
        if launched && applicationState == .notRunning { return }
        await withCheckedContinuation { terminationContinuations.append($0) }
    }

    /// Runs the launch sequence: will finish → restoration → did finish → DidFinishLaunching
    /// notification → launch URL / notification → active (or background).
    ///
    /// Calling it twice is refused with a log line.
    ///
    /// - Parameters:
    ///   - options: Why the app was launched.
    public func launch(options: LaunchOptions = LaunchOptions()) {
        guard !launched, applicationState == .notRunning else {
            logger.info("launch refused: the app was launched before")
            return
        }
        host.applicationWillLaunch(self)
        enqueue(.launch(options))
    }

    /// Hands the app a fact about the host.
    ///
    /// Safe to call at any time on the main actor, also from inside a delegate callback (the
    /// event is then handled after the callback returns). Events after termination are ignored.
    ///
    /// - Parameters:
    ///   - event: The fact.
    public func handle(_ event: HostEvent) {
        enqueue(.host(event))
    }

    // MARK: Queries

    /// The background time the app has left: unlimited (`.greatestFiniteMagnitude`) in the foreground.
    public var backgroundTimeRemaining: TimeInterval {
        guard !applicationState.isForeground, applicationState != .notRunning else { return .greatestFiniteMagnitude }
        guard let backgroundDeadline else { return .greatestFiniteMagnitude }
        return max(0, (backgroundDeadline - host.scheduler.now).timeInterval)
    }

    /// Asks the delegate for the orientations to use in a window, and posts its answer.
    ///
    /// - Parameters:
    ///   - window: The window (default: the delegate's ``ApplicationDelegate/window``).
    public func supportedInterfaceOrientations(for window: Window?) -> InterfaceOrientationMask {
        let (mask, _) = invoke("application(_:supportedInterfaceOrientationsFor:)") {
            delegate.application(self, supportedInterfaceOrientationsFor: window)
        }
        notificationCenter.post(SupportedInterfaceOrientationsMessage(window: window, orientations: mask), object: self)
        return mask
    }

    /// Asks the delegate whether to allow extensions of a kind, and posts its answer.
    ///
    /// - Parameters:
    ///   - extensionPoint: The kind of extension.
    public func allowsExtensionPoint(_ extensionPoint: ExtensionPointIdentifier) -> Bool {
        let (allowed, _) = invoke("application(_:shouldAllowExtensionPointIdentifier:)") {
            delegate.application(self, shouldAllowExtensionPointIdentifier: extensionPoint)
        }
        notificationCenter.post(
            ShouldAllowExtensionPointMessage(extensionPoint: extensionPoint, result: allowed), object: self)
        return allowed
    }

    // MARK: The work queue

    enum Work {
        case launch(LaunchOptions)
        case host(HostEvent)
        case settle
        case backgroundTimeExpired
    }

    func enqueue(_ work: Work) {
        queue.append(work)
        drain()
    }

    func drain() {
        guard !isDraining else { return }
        isDraining = true
        defer { isDraining = false }
        while !queue.isEmpty {
            let work = queue.removeFirst()
            switch work {
            case .launch(let options): performLaunch(options)
            case .host(let event): process(event)
            case .settle: settle()
            case .backgroundTimeExpired: expireBackgroundTime()
            }
        }
    }

    // MARK: Delegate calls and posting

    /// Calls a delegate method inside a frame that tells whether the default implementation ran.
    func invoke<Result>(_ name: String, _ body: () -> Result) -> (result: Result, implemented: Bool) {
        delegateCallTracer?(.willCall(name))
        DelegateDefaults.frames.append(false)
        let result = body()
        let defaultRan = DelegateDefaults.frames.removeLast()
        delegateCallTracer?(.didCall(name, implemented: !defaultRan))
        return (result, !defaultRan)
    }

    /// Calls a delegate method and posts its message, in the documented order.
    func deliver<Message: LifecycleMessage>(
        _ message: Message, notificationFirst: Bool = false, _ name: String, _ call: () -> Void
    ) {
        if notificationFirst { notificationCenter.post(message, object: self) }
        _ = invoke(name, call)
        if !notificationFirst { notificationCenter.post(message, object: self) }
    }

    /// Calls a delegate method and then posts its notification under the callback deadline.
    ///
    /// - Returns: `false` when the deadline passed during the delegate call or the notification:
    ///   the process would have been killed there, so nothing after that point happens (the
    ///   notification is not posted when the delegate overran), and the caller stops the app as
    ///   if it had been killed. The host's deadline handler decides what really happens to the
    ///   process (by default it ends it at once).
    func deliverUnderDeadline<Message: LifecycleMessage>(_ message: Message, _ name: String, _ call: () -> Void) -> Bool
    {
        let overran = OverrunFlag()
        let handler = host.callbackDeadlineHandler
        let deadline = configuration.callbackDeadline
        let watchdog = host.scheduler.watchdog(after: deadline) {
            overran.set()
            handler(name)
        }
        defer { watchdog.cancel() }
        let start = host.scheduler.now
        let alive = { !overran.isSet && self.host.scheduler.now - start <= deadline }
        _ = invoke(name, call)
        if alive() { notificationCenter.post(message, object: self) }
        if !alive() {
            logger.info("\(name) overran its \(deadline) deadline; the app is ended")
            return false
        }
        return true
    }

    // MARK: State changes

    func setState(_ state: ApplicationState) {
        let previous = applicationState
        guard previous != state else { return }
        guard previous.canTransition(to: state) else {
            logger.info("illegal transition \(previous) → \(state) refused")
            assertionFailure("illegal transition \(previous) → \(state)")
            return
        }
        applicationState = state
        logger.debug("state \(previous) → \(state)")
        host.application(self, didChangeStateFrom: previous, to: state)
        notificationCenter.post(StateDidChangeMessage(previousState: previous, state: state), object: self)
    }

    /// The state the facts call for.
    var targetState: ApplicationState {
        if !(foregroundRequested && sessionActive && !sleeping) {
            return isQuiescent ? .suspended : .background
        }
        return locked || !focused ? .inactive : .active
    }

    /// Whether nothing keeps a background app running.
    var isQuiescent: Bool { backgroundTasks.isEmpty && pendingCompletions.isEmpty && !launchInProgress }

    /// Moves the app toward its target one legal step at a time, never above `ceiling`.
    func settle(ceiling: ApplicationState = .active) {
        guard launched, !terminating else { return }
        var steps = 0
        while steps < 16 {
            steps += 1
            if applicationState.isRunningCode { reconcileProtectedData() }
            var target = targetState
            if ceiling == .inactive && target == .active { target = .inactive }
            guard step(toward: target) else { break }
        }
        deliverWhatWaitedForTheForeground()
    }

    /// Takes one step toward a target; returns whether it moved.
    func step(toward target: ApplicationState) -> Bool {
        switch (applicationState, target) {
        case (.active, .inactive), (.active, .background), (.active, .suspended):
            deliver(WillResignActiveMessage(), "applicationWillResignActive(_:)") {
                delegate.applicationWillResignActive(self)
            }
            setState(.inactive)
        case (.inactive, .active):
            setState(.active)
            deliver(DidBecomeActiveMessage(), "applicationDidBecomeActive(_:)") {
                delegate.applicationDidBecomeActive(self)
            }
        case (.inactive, .background), (.inactive, .suspended):
            setState(.background)
            startBackgroundTime()
            let survived = deliverUnderDeadline(DidEnterBackgroundMessage(), "applicationDidEnterBackground(_:)") {
                delegate.applicationDidEnterBackground(self)
            }
            guard survived else {
                endAsKilled()
                return false
            }
            preserveStateIfRequested()
        case (.background, .inactive), (.background, .active):
            // The app is still in the background while it hears that it will enter the
            // foreground, as on iOS; the state changes once the callbacks returned.
            stopBackgroundTime()
            deliver(WillEnterForegroundMessage(), notificationFirst: true, "applicationWillEnterForeground(_:)") {
                delegate.applicationWillEnterForeground(self)
            }
            setState(.inactive)
        case (.background, .suspended):
            guard isQuiescent else { return false }
            stopBackgroundTime()
            setState(.suspended)
        case (.suspended, .background) where !isQuiescent:
            setState(.background)
            startBackgroundTime()
        case (.suspended, .inactive), (.suspended, .active):
            setState(.background)
        default:
            return false
        }
        return true
    }

    /// Delivers the protected-data callback the app has not been told yet.
    func reconcileProtectedData() {
        if locked && isProtectedDataAvailable {
            isProtectedDataAvailable = false
            deliver(ProtectedDataWillBecomeUnavailableMessage(), "applicationProtectedDataWillBecomeUnavailable(_:)") {
                delegate.applicationProtectedDataWillBecomeUnavailable(self)
            }
        } else if !locked && !isProtectedDataAvailable {
            isProtectedDataAvailable = true
            deliver(ProtectedDataDidBecomeAvailableMessage(), "applicationProtectedDataDidBecomeAvailable(_:)") {
                delegate.applicationProtectedDataDidBecomeAvailable(self)
            }
        }
    }

    /// Wakes a suspended app into the background to run code (a fetch, a notification action).
    func wakeIfSuspended() {
        if applicationState == .suspended {
            setState(.background)
            startBackgroundTime()
            reconcileProtectedData()
        }
    }

    // MARK: Termination

    func terminate(_ reason: TerminationReason) {
        guard launched, !terminating, applicationState != .notRunning else { return }
        logger.info("terminating (\(reason.rawValue))")
        if applicationState == .active { _ = step(toward: .inactive) }
        if applicationState == .suspended { setState(.background) }
        terminating = true
        host.applicationWillTerminate(self, deadline: configuration.callbackDeadline)
        _ = deliverUnderDeadline(WillTerminateMessage(), "applicationWillTerminate(_:)") {
            delegate.applicationWillTerminate(self)
        }
        finishTermination()
    }

    /// Stops the app as if the system had killed it after a callback overran its deadline.
    func endAsKilled() {
        finishTermination()
    }

    func finishTermination() {
        terminating = true
        stopBackgroundTime()
        for (_, completion) in pendingCompletions { completion.timer.cancel() }
        pendingCompletions.removeAll()
        backgroundTasks.removeAll()
        queue.removeAll()
        setState(.notRunning)
        host.applicationDidTerminate(self)
        let waiting = terminationContinuations
        terminationContinuations.removeAll()
        for continuation in waiting { continuation.resume() }
    }
}

/// Set by a watchdog thread, read on the main actor.
final class OverrunFlag: Sendable {
    private let flag = Synchronization.Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}
