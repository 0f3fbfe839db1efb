import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials
import LifecycledProtocol
import Logging
import SystemdBus
import UnifiedPushClient

/// The host of an app that `lifecycled` hosts: the daemon's `Command` signals drive the app,
/// and the app reports back what it does.
///
/// ## What it does
///
/// In ``prepare(_:)`` (before the launch sequence) the host connects to the session bus (or
/// ``Configuration/busAddress``), subscribes to `Command` signals whose first argument is its
/// app id, accepting them only from the current owner of `org.applifecycle.Lifecycled1`, and
/// calls `RegisterApp(appID)`. The reply's host facts (`sleeping`, `locked`, `session-active`,
/// `foreground`, and the device's conditions `low-power-mode`, `thermal-state`,
/// `background-refresh-status`) are handed to the app before it launches, so it launches straight
/// into the right state; the reply's launch options are kept in ``launchOptions``.
///
/// From then on each `Command` is decoded with `HostEventBusCodec` and handed to
/// `Application/handle(_:)`, in the order the daemon sent them. The app's state changes go
/// to the daemon as `ReportState`, every notification it posts (all names, the app as object)
/// as `ReportNotification`, and the background tasks it begins and ends as
/// `BackgroundTaskBegan` / `BackgroundTaskEnded`. Reports are sent one at a time, in order.
///
/// ## When the daemon goes away
///
/// When `lifecycled` restarts (its name vanishes, then appears with a new owner) the host
/// registers again and reports its current state and background tasks. While it is away the
/// app keeps running on the last facts it was told; the host logs that once and sends nothing.
///
/// ## Background tasks
///
/// The app's `ApplicationHost` hooks report each background task as it begins (with its name)
/// and ends, so the daemon knows at once what keeps the app awake.
///
/// ## Launch options
///
/// The options from `RegisterApp` (or `$LIFECYCLE_LAUNCH_OPTIONS`) are ``hostLaunchOptions``:
/// `Application/run(launchOptions:)` lays them over its own after ``prepare(_:)``.
@MainActor
public final class LifecycledHost: ApplicationHost {
    /// Where and how the host reaches the daemon.
    public struct Configuration: Sendable {
        /// The app id; `nil` uses `$LIFECYCLE_APP_ID`, else the app's `Application/Configuration/applicationIdentifier`.
        public var appID: String?
        /// The bus the daemon is on (default: the session bus).
        public var busAddress: BusConnection.Address
        /// The environment (`$LIFECYCLE_APP_ID`, `$LIFECYCLE_LAUNCH_OPTIONS`).
        public var environment: [String: String]
        /// How long `RegisterApp` and each report may take before it is given up.
        public var callTimeout: Duration
        /// Whether SIGTERM, SIGINT and SIGHUP terminate the app through `applicationWillTerminate`
        /// (lifecycled sends SIGTERM after the `terminate` Command when an app lingers; the kernel
        /// sends SIGHUP to a stopped app whose daemon died).
        public var handlesTerminationSignals: Bool
        /// Whether the app owns its id on the bus and serves `org.freedesktop.Application` there
        /// (launchers, `gio launch`, `xdg-open` reach its delegate); `true` by default.
        public var servesFreedesktopApplication: Bool
        /// Where the host's diagnostics go, at `info` or below (the push connector and
        /// `org.freedesktop.Application` log through it too).
        public var logger: Logger

        /// Creates a configuration.
        ///
        /// The defaults suit a process `lifecycled` launched on the user's session bus.
        ///
        /// - Parameters:
        ///   - appID: The app id, or `nil` to take it from the environment or the app.
        ///   - busAddress: The bus the daemon is on.
        ///   - environment: The environment to read.
        ///   - callTimeout: The timeout of each call to the daemon.
        ///   - handlesTerminationSignals: Whether SIGTERM, SIGINT and SIGHUP terminate the app (turn it off in tests).
        ///   - servesFreedesktopApplication: Whether the app owns its id and serves `org.freedesktop.Application`.
        ///   - logger: Where the host's diagnostics go.
        public init(
            appID: String? = nil, busAddress: BusConnection.Address = .session,
            environment: [String: String] = ProcessInfo.processInfo.environment,
            callTimeout: Duration = .seconds(5), handlesTerminationSignals: Bool = true,
            servesFreedesktopApplication: Bool = true, logger: Logger = Logger(label: "AppLifecycle.LifecycledHost")
        ) {
            self.logger = logger
            self.servesFreedesktopApplication = servesFreedesktopApplication
            self.handlesTerminationSignals = handlesTerminationSignals
            self.appID = appID
            self.busAddress = busAddress
            self.environment = environment
            self.callTimeout = callTimeout
        }
    }

    /// The real scheduler.
    public let scheduler: any LifecycleScheduler = SystemLifecycleScheduler()
    /// The configuration.
    public let configuration: Configuration
    /// Whether the process is hosted right now, readable from any thread.
    public nonisolated let status = LifecycledHostStatus()
    /// The app being hosted.
    public private(set) weak var application: Application?
    /// The app id in use (set by ``prepare(_:)``).
    public private(set) var appID: String?
    /// The launch options: `$LIFECYCLE_LAUNCH_OPTIONS`, then those `RegisterApp` returned.
    public internal(set) var launchOptions: LaunchOptions
    /// The host facts last received, by `RegisterApp` or a `Command`.
    public private(set) var hostFacts = UserInfo()

    var logger: Logger { configuration.logger }
    private var prepared = false
    private var loop: EventLoop?
    private var connection: BusConnection?
    /// Who owns lifecycled's name, as the bus last said.
    private var daemonTracker: NameOwnerTracker?
    /// How many registrations are on their way (the start-up one counts from before its
    /// activatable check): a daemon that appears meanwhile is the one they start (D-Bus
    /// activation) or reach, not one to register with again.
    private var registrationsInFlight = 0
    /// An owner change was set aside because a registration was on its way; if that registration
    /// fails, the app registers again with the daemon that appeared.
    private var ownerChangeSetAside = false
    private var subscriptions: [BusSubscription] = []
    private var observation: NotificationObservation?
    private var inbound: AsyncStream<Inbound>.Continuation?
    var outbound: AsyncStream<Outbound>.Continuation?
    private var inboundTask: Task<Void, Never>?
    private var outboundTask: Task<Void, Never>?
    private var reportedTasks: [(id: BackgroundTaskIdentifier, name: String)] = []
    /// Reports sent and not answered yet, oldest first (at most ``maximumReportsInFlight``).
    private var inFlight: [(member: String, reply: BusPendingReply)] = []
    /// How many reports may be on their way at once before the next waits for the oldest reply.
    static let maximumReportsInFlight = 32
    private var daemonAbsenceLogged = false
    /// The app's `org.freedesktop.Application`.
    var applicationService: FreedesktopApplicationService?
    /// The app's UnifiedPush connector.
    var pushConnector: UnifiedPushConnector?
    /// The manifest's quick actions (from the registration).
    var staticShortcutItems: [ShortcutItem] = [] {
        didSet { applicationService?.staticShortcutItems = staticShortcutItems }
    }
    /// The URL schemes hosted apps claim (from the registration), for `canOpenURL` and `open`.
    private var claimedSchemes: Set<String> = []
    /// The app's dynamic quick actions.
    private(set) var shortcutItems: [ShortcutItem] = []
    private var signalWatcher: TerminationSignalWatcher?
    private var signalTask: Task<Void, Never>?

    enum Inbound: Sendable {
        case command(String, UserInfo)
        case ownerChanged(NameOwnerChange)
        case disconnected
    }

    enum Outbound: Sendable {
        case reregister
        case report(member: String, arguments: [BusValue])
        case flush(CheckedContinuation<Void, Never>)
        case close
    }

    /// Creates the host; nothing connects until the app runs (``prepare(_:)``).
    ///
    /// Reads `$LIFECYCLE_LAUNCH_OPTIONS` (the launch options' userInfo as JSON) at once, so
    /// ``launchOptions`` is usable before the app runs; malformed JSON is logged and ignored.
    ///
    /// - Parameters:
    ///   - configuration: Where and how to reach the daemon.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        var options = LaunchOptions()
        if let json = configuration.environment[LifecycledProtocol.launchOptionsEnvironment], !json.isEmpty {
            do {
                let userInfo = try UserInfo(json: json)
                try LifecycledProtocol.validate(userInfo)
                options = LaunchOptions(userInfo: userInfo)
            } catch {
                configuration.logger.info("ignoring $\(LifecycledProtocol.launchOptionsEnvironment): \(error)")
            }
        }
        self.launchOptions = options
    }

    /// Creates the host for an app id.
    ///
    /// The same as ``init(configuration:)`` with ``Configuration/appID`` set.
    ///
    /// - Parameters:
    ///   - appID: The app id to register under.
    ///   - busAddress: The bus the daemon is on.
    public convenience init(appID: String, busAddress: BusConnection.Address = .session) {
        self.init(configuration: Configuration(appID: appID, busAddress: busAddress))
    }

    // MARK: ApplicationHost

    /// Connects, subscribes to the app's `Command` signals and registers with the daemon.
    ///
    /// Returns when the registration was answered (or failed: the app then runs on its
    /// defaults and registers when the daemon appears). Calling it again does nothing, so a
    /// caller may prepare before `Application/run(launchOptions:)` to get the launch options.
    public func prepare(_ application: Application) async {
        guard !prepared else { return }
        prepared = true
        self.application = application
        // First: SIGTERM means applicationWillTerminate even if the app cannot register below.
        // SIGHUP too: lifecycled stops a suspended app's process group; if lifecycled dies, the
        // kernel sends an orphaned group with stopped members SIGHUP then SIGCONT, and by default
        // SIGHUP would kill the app without its applicationWillTerminate.
        if configuration.handlesTerminationSignals {
            let watcher = await TerminationSignalWatcher(trapping: [.sigterm, .sigint, .sighup])
            signalWatcher = watcher
            signalTask = Task { @MainActor [weak application] in
                for await event in watcher.events { application?.handle(event) }
            }
        }
        let id =
            configuration.appID
            ?? LifecycledHostStatus.environmentAppID(in: configuration.environment)
            ?? application.configuration.applicationIdentifier
        guard LifecycledProtocol.isValidAppID(id) else {
            logger.info(
                "'\(id)' is not a valid app id (reverse-DNS, like org.example.App); not registering with lifecycled")
            return
        }
        appID = id
        status.update { $0.appID = id }

        let (inStream, inContinuation) = AsyncStream<Inbound>.makeStream()
        let (outStream, outContinuation) = AsyncStream<Outbound>.makeStream()
        inbound = inContinuation
        outbound = outContinuation
        inboundTask = Task { @MainActor [weak self] in
            for await item in inStream {
                guard let self else { return }
                self.receive(item)
            }
        }
        outboundTask = Task { @MainActor [weak self] in
            for await item in outStream {
                guard let self else { return }
                if await !self.send(item) { return }
            }
        }
        observation = application.notificationCenter.addObserver(forName: nil, object: application) {
            [weak self] notification in
            self?.applicationPosted(notification)
        }

        do {
            let loop = try EventLoop(name: "lifecycled-app")
            self.loop = loop
            let connection = try await BusConnection(
                configuration.busAddress, loop: loop, description: "lifecycled-app",
                timeout: configuration.callTimeout)
            self.connection = connection
            connection.addDisconnectHandler { inContinuation.yield(.disconnected) }
            let tracker = try await connection.trackNameOwner(LifecycledProtocol.busName)
            daemonTracker = tracker
            subscriptions.append(
                try await tracker.addOwnerChangeHandler { change in
                    inContinuation.yield(.ownerChanged(change))
                })
            let logger = self.logger
            subscriptions.append(
                try await connection.subscribe(
                    sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                    interface: LifecycledProtocol.interface, member: LifecycledProtocol.Signal.command.name,
                    signature: "ssa{sv}", arg0: id
                ) { signal in
                    guard signal.arguments[0].stringValue == id, let command = signal.arguments[1].stringValue else {
                        return
                    }
                    do {
                        inContinuation.yield(
                            .command(command, try UserInfoBusCodec.decodeUserInfo(signal.arguments[2])))
                    } catch {
                        logger.info("dropped Command '\(command)': \(error)")
                    }
                })
            let owner = tracker.currentOwner
            status.update { $0.daemonOwner = owner }
            // Counted from here: a daemon that appears during the activatable check is the one
            // the registration below reaches.
            registrationsInFlight += 1
            defer { endRegistration() }
            // A failed activatable look-up counts as not installed: it must not keep the app off
            // the bus (its name, org.freedesktop.Application, its push connector).
            if owner != nil {
                await register(initial: true)
            } else if (try? await connection.activatableNames(timeout: configuration.callTimeout))?.contains(
                LifecycledProtocol.busName) == true
            {
                // Installed but not running: RegisterApp, sent with auto-start, starts it.
                logger.info("starting lifecycled through D-Bus activation")
                await register(initial: true)
            } else {
                logDaemonAbsence("lifecycled is not running; the app runs on its defaults until it appears")
            }
            // Before the app's name is requested: a distributor that activates the app calls the
            // connector as soon as the name has an owner.
            await startPushConnector(on: connection, id: id)
            // After the registration, so the manifest's quick actions are known to ActivateAction.
            if configuration.servesFreedesktopApplication {
                await exportApplicationInterface(on: connection, id: id)
                pushConnector?.resumeRegistration()
                if launchOptions[.dbusActivation]?.boolValue == true { await foldLaunchCall(into: application) }
            } else {
                await requestPushName(on: connection, id: id)
                pushConnector?.resumeRegistration()
            }
        } catch {
            logDaemonAbsence(
                "cannot reach lifecycled on the \(configuration.busAddress) bus: \(error); the app runs on its defaults"
            )
        }
    }

    /// Reports the new state (after the background tasks that changed with it).
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - previousState: The state before.
    ///   - state: The state after.
    public func application(
        _ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState
    ) {
        guard let appID else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.reportState.name,
                arguments: [.string(appID), .string(state.rawValue)]))
    }

    /// Sends the last reports, then disconnects.
    public func applicationDidTerminate(_ application: Application) {
        stop()
    }

    /// Waits until every report queued so far has been answered (or failed).
    ///
    /// Call it before exiting the process so the daemon hears the final state.
    public func flush() async {
        guard let outbound else {
            // Stopped (the app terminated): the queue is closed; wait until what it held is sent.
            await outboundTask?.value
            return
        }
        await withCheckedContinuation { continuation in
            if case .terminated = outbound.yield(.flush(continuation)) { continuation.resume() }
        }
    }

    /// Sends the queued reports, then closes the connection and stops the loop; idempotent.
    public func stop() {
        observation?.cancel()
        observation = nil
        outbound?.yield(.close)
        outbound?.finish()
        outbound = nil
        if outboundTask == nil { closeConnection() }
    }

    // MARK: Inbound

    private func receive(_ item: Inbound) {
        switch item {
        case .command(let name, let arguments):
            guard let command = LifecycledCommand.decode(command: name, arguments: arguments) else {
                logger.info(
                    "dropped Command '\(name)' with arguments \(arguments): unknown command or invalid argument")
                return
            }
            logger.debug("command \(name) \(arguments)")
            apply(command)
            if command.resumesSuspendedApp { reportSuspendedAgainIfStill() }
        case .ownerChanged(let change):
            let current = status.snapshot
            if change.newOwner != nil, registrationsInFlight > 0 {
                // The daemon this app's RegisterApp starts or reaches; registered with it once that returns.
                ownerChangeSetAside = true
                return
            }
            if change.newOwner != nil, change.newOwner == current.daemonOwner, current.isRegistered {
                return  // the daemon registered with already
            }
            status.update {
                $0.daemonOwner = change.newOwner
                $0.isRegistered = false
            }
            if change.newOwner == nil {
                logDaemonAbsence("lifecycled went away; the app keeps running on the last host facts")
            } else {
                logger.info("lifecycled appeared as \(change.newOwner ?? "?"); registering again")
                daemonAbsenceLogged = false
                outbound?.yield(.reregister)
            }
        case .disconnected:
            status.update {
                $0.daemonOwner = nil
                $0.isRegistered = false
            }
            // A session bus does not come back (a new one is a new session): the app ends, as GLib
            // apps do when theirs closes, instead of running on idle and busless. A lifecycled that
            // restarts on a living bus is an owner change above, not this.
            logger.info("the session bus closed; terminating")
            application?.handle(.terminate(.sessionEnded))
        }
    }

    private func record(_ event: HostEvent) {
        switch event {
        case .sleeping(let value): hostFacts["sleeping"] = .bool(value)
        case .locked(let value): hostFacts["locked"] = .bool(value)
        case .sessionActive(let value): hostFacts["session-active"] = .bool(value)
        case .foreground(let value): hostFacts["foreground"] = .bool(value)
        case .focused(let value): hostFacts["focused"] = .bool(value)
        default: return
        }
        let facts = hostFacts
        status.update { $0.hostFacts = facts }
    }

    private func logDaemonAbsence(_ message: String) {
        guard !daemonAbsenceLogged else { return }
        daemonAbsenceLogged = true
        logger.info("\(message)")
    }

    // MARK: Registration

    /// Calls `RegisterApp` and applies the reply; `initial` is the registration before launch.
    private func register(initial: Bool) async {
        guard let connection, let appID else { return }
        registrationsInFlight += 1
        defer { endRegistration() }
        do {
            let reply = try await connection.call(
                destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.registerApp.name,
                arguments: [.string(appID)], timeout: configuration.callTimeout)
            guard reply.count == 2 else {
                throw ApplicationError(
                    .host, "RegisterApp replied \(BusValue.signature(of: reply)), expected a{sv}a{sv}")
            }
            let options = try UserInfoBusCodec.decodeUserInfo(reply[0])
            let facts = try UserInfoBusCodec.decodeUserInfo(reply[1])
            try LifecycledProtocol.validate(options)
            // The owner that answered (the tracker saw NameOwnerChanged before the reply when
            // this call activated it), so that change is not taken for a new daemon.
            let owner = daemonTracker?.currentOwner
            status.update {
                $0.isRegistered = true
                $0.registrations += 1
                if owner != nil { $0.daemonOwner = owner }
            }
            logger.info("registered with lifecycled as \(appID)")
            if initial {
                launchOptions = LaunchOptions(userInfo: launchOptions.userInfo.merging(options))
                if facts["foreground"]?.boolValue == false { launchOptions.launchedInBackground = true }
            }
            apply(facts)
        } catch {
            logger.info("RegisterApp(\(appID)) failed: \(error)")
        }
    }

    /// Ends one registration; when the last one ends unregistered and a daemon appeared meanwhile,
    /// registers with that daemon (once: only a new owner change sets it aside again).
    private func endRegistration() {
        registrationsInFlight -= 1
        guard registrationsInFlight == 0, ownerChangeSetAside else { return }
        ownerChangeSetAside = false
        let owner = daemonTracker?.currentOwner
        status.update { $0.daemonOwner = owner }
        if owner != nil, !status.snapshot.isRegistered {
            logger.info("lifecycled appeared as \(owner ?? "?") while a registration failed; registering again")
            outbound?.yield(.reregister)
        }
    }

    /// Hands the host facts of a `RegisterApp` reply to the app.
    private func apply(_ facts: UserInfo) {
        if let items = facts["shortcut-items"]?.arrayValue {
            staticShortcutItems = items.compactMap(ShortcutItem.init(propertyList:))
        }
        if let schemes = facts["url-schemes"]?.arrayValue {
            claimedSchemes = Set(schemes.compactMap(\.stringValue))
        }
        if let badge = facts["badge"]?.intValue.flatMap({ Int(exactly: $0) }) {
            application?.handle(.applicationIconBadgeNumber(badge))
        }
        let events: [(String, (Bool) -> HostEvent)] = [
            ("sleeping", HostEvent.sleeping), ("locked", HostEvent.locked),
            ("session-active", HostEvent.sessionActive), ("foreground", HostEvent.foreground),
            ("focused", HostEvent.focused),
        ]
        for (key, make) in events {
            guard let value = facts[key]?.boolValue else { continue }
            let event = make(value)
            record(event)
            application?.handle(event)
        }
        // The device's conditions, each as the `value` of the Command of the same name: an app
        // that registers before it launches starts with them and is not told of a change.
        for key in ["low-power-mode", "thermal-state", "background-refresh-status"] {
            guard let value = facts[key] else { continue }
            guard let event = HostEventBusCodec.decode(command: key, arguments: ["value": value]) else {
                logger.info("RegisterApp's host fact \(key) = \(value) ignored: not a valid value")
                continue
            }
            application?.handle(event)
        }
    }

    // MARK: Outbound

    /// Applies one of the daemon's commands to the app.
    private func apply(_ command: LifecycledCommand) {
        switch command {
        case .post(let name, let userInfo):
            // `lifecyclectl post`: a named notification into the app's own center, from the app object.
            guard let application else { return }
            application.notificationCenter.post(
                name: LifecycleNotification.Name(name), object: application, userInfo: userInfo)
        case .scheduleChanged(let removed, let updated):
            // A change to the schedule: applied to what the app has.
            application?.applyScheduleChange(removed: removed, updated: updated)
        case .hostEvent(let event):
            record(event)
            application?.handle(event)
        }
    }

    /// lifecycled continued this stopped app to deliver a Command; if the app is still suspended
    /// afterwards (the Command did not wake it), say so again so the daemon stops it again. Not
    /// after a queued pure fact: the daemon did not continue the app for it, and a report then
    /// would race with the Command it did continue the app for.
    private func reportSuspendedAgainIfStill() {
        guard let application, application.applicationState == .suspended, let appID else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.reportState.name,
                arguments: [.string(appID), .string(ApplicationState.suspended.rawValue)]))
    }

    private func applicationPosted(_ notification: LifecycleNotification) {
        guard let appID else { return }
        let userInfo = notification.userInfo
        do {
            try LifecycledProtocol.validate(userInfo)
        } catch {
            logger.info("not reporting \(notification.name.rawValue): \(error)")
            return
        }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.reportNotification.name,
                arguments: [
                    .string(appID), .string(notification.name.rawValue), UserInfoBusCodec.encode(userInfo),
                ]))
    }

    /// Reports a background task the app began, with its name.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - identifier: The task, as `beginBackgroundTask` returned it to the app.
    ///   - name: Its name.
    public func application(
        _ application: Application, didBeginBackgroundTask identifier: BackgroundTaskIdentifier, name: String?
    ) {
        reportedTasks.append((identifier, name ?? ""))
        guard let appID else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.backgroundTaskBegan.name,
                arguments: [.string(appID), .uint32(UInt32(clamping: identifier.rawValue)), .string(name ?? "")]))
    }

    /// Reports a background task that ended.
    public func application(_ application: Application, didEndBackgroundTask identifier: BackgroundTaskIdentifier) {
        reportedTasks.removeAll { $0.id == identifier }
        guard let appID else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.backgroundTaskEnded.name,
                arguments: [.string(appID), .uint32(UInt32(clamping: identifier.rawValue))]))
    }

    // MARK: Local notifications, badge, idle timer

    /// Schedules the notification with lifecycled (`ScheduleNotification`), with its category's
    /// actions as the banner's buttons.
    public func application(
        _ application: Application, schedule notification: LocalNotification, actions: [UserNotificationAction]
    ) {
        guard let appID else { return }
        do {
            try LifecycledProtocol.validate(notification.userInfo)
        } catch {
            logger.info("local notification '\(notification.identifier)' not scheduled: \(error)")
            let kept = (application.scheduledLocalNotifications ?? []).filter {
                $0.identifier != notification.identifier
            }
            application.handle(.scheduledLocalNotifications(kept))
            return
        }
        report(
            LifecycledProtocol.Method.scheduleNotification.name, [.string(appID), Self.payload(notification, actions)])
    }

    /// Cancels notifications in lifecycled (`CancelNotification`; all of them with `""`).
    public func application(_ application: Application, cancelLocalNotifications identifiers: [String]?) {
        guard let appID else { return }
        for identifier in identifiers ?? [""] {
            report(LifecycledProtocol.Method.cancelNotification.name, [.string(appID), .string(identifier)])
        }
    }

    /// Shows a notification that fired while the app was not active (`PresentNotification`).
    public func application(_ application: Application, present notification: LocalNotification) {
        guard let appID else { return }
        let actions =
            notification.category.flatMap { application.currentUserNotificationSettings?.category($0) }?
            .actions ?? []
        report(
            LifecycledProtocol.Method.presentNotification.name, [.string(appID), Self.payload(notification, actions)])
    }

    /// Shows a push's `aps.alert` as a banner that remembers it is remote (`PresentNotification`
    /// with `remote: true`): a click on it comes back as `remote-notification-opened` (or a launch
    /// with `UIApplicationLaunchOptionsRemoteNotificationKey`), a button as `remote-notification-action`.
    public func application(
        _ application: Application, presentRemoteNotification payload: UserInfo, banner: LocalNotification,
        actions: [UserNotificationAction]
    ) {
        guard let appID else { return }
        report(
            LifecycledProtocol.Method.presentNotification.name,
            [.string(appID), Self.payload(banner, actions, remote: true)])
    }

    /// Announces the badge (`SetBadge`).
    public func application(_ application: Application, didChangeApplicationIconBadgeNumber number: Int) {
        guard let appID else { return }
        report(LifecycledProtocol.Method.setBadge.name, [.string(appID), .int64(Int64(number))])
    }

    /// Asks for (or gives up) the idle inhibitor (`SetIdleTimerDisabled`).
    public func application(_ application: Application, didChangeIdleTimerDisabled disabled: Bool) {
        guard let appID else { return }
        report(LifecycledProtocol.Method.setIdleTimerDisabled.name, [.string(appID), .bool(disabled)])
    }

    /// Asks lifecycled to schedule the app's background fetches (`SetMinimumBackgroundFetchInterval`).
    public func application(
        _ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval
    ) {
        guard let appID else { return }
        report(LifecycledProtocol.Method.setMinimumBackgroundFetchInterval.name, [.string(appID), .double(interval)])
    }

    /// Opens a URL: through lifecycled when a hosted app claims its scheme (the daemon names this
    /// app as the source), else (unless `universalLinksOnly`) the way the desktop would: the
    /// OpenURI portal, or the default application of the XDG MIME-apps files.
    public func application(
        _ application: Application, open url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue],
        completionHandler: @escaping @MainActor @Sendable (Bool) -> Void
    ) {
        let claimed = url.scheme.map { claimedSchemes.contains($0.lowercased()) } ?? false
        let connection = self.connection
        let logger = self.logger
        let environment = configuration.environment
        let timeout = configuration.callTimeout
        Task { @MainActor in
            if claimed, let connection, status.isHosted {
                do {
                    _ = try await connection.call(
                        destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                        interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.openURL.name,
                        arguments: [.string(url.absoluteString), UserInfoBusCodec.encode(UserInfo())], timeout: timeout)
                    completionHandler(true)
                } catch {
                    logger.info("lifecycled could not open \(url.absoluteString): \(error)")
                    completionHandler(false)
                }
                return
            }
            guard options[.universalLinksOnly]?.boolValue != true else {
                completionHandler(false)
                return
            }
            let opener = DesktopURLOpener(connection: connection, environment: environment, logger: logger)
            completionHandler(await opener.open(url))
        }
    }

    /// A hosted app claims the scheme, or the desktop's MIME-apps files name a handler for it.
    /// Reads those small files on the caller's thread; never waits on the bus.
    public func application(_ application: Application, canOpen url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        if claimedSchemes.contains(scheme) { return true }
        let apps = MIMEApps.current(environment: configuration.environment)
        for problem in apps.problems { logger.info("MIME apps: \(problem)") }
        return apps.handler(for: url) != nil
    }

    /// Keeps the app's dynamic quick actions for `org.freedesktop.Application.ActivateAction`.
    public func application(_ application: Application, didChangeShortcutItems items: [ShortcutItem]) {
        shortcutItems = items
    }

    /// A notification and its buttons as `ScheduleNotification`'s (and `PresentNotification`'s)
    /// `a{sv}`; `remote` marks a push's banner (`PresentNotification` only).
    public static func payload(
        _ notification: LocalNotification, _ actions: [UserNotificationAction], remote: Bool = false
    ) -> BusValue {
        var info = UserInfo(notification.propertyList.dictionaryValue ?? [:])
        if remote { info["remote"] = .bool(true) }
        if !actions.isEmpty {
            info["actions"] = .array(
                actions.map {
                    .dictionary([
                        "identifier": .string($0.identifier), "title": .string($0.title),
                        "foreground": .bool($0.activationMode == .foreground),
                    ])
                })
        }
        return UserInfoBusCodec.encode(info)
    }

    private func report(_ member: String, _ arguments: [BusValue]) {
        outbound?.yield(.report(member: member, arguments: arguments))
    }

    /// The launch options lifecycled returned at registration (laid over the app's own).
    public var hostLaunchOptions: LaunchOptions? { launchOptions.isEmpty ? nil : launchOptions }

    /// Handles one outbound item; returns `false` when the queue is closed.
    private func send(_ item: Outbound) async -> Bool {
        switch item {
        case .flush(let continuation):
            await awaitReplies(keeping: 0)
            continuation.resume()
        case .close:
            await awaitReplies(keeping: 0)
            closeConnection()
            return false
        case .reregister:
            await register(initial: false)
            guard let application, let appID, status.isHosted else { return true }
            // Resynchronise: the new daemon knows nothing of this process.
            await call(
                LifecycledProtocol.Method.reportState.name,
                [.string(appID), .string(application.applicationState.rawValue)])
            for task in reportedTasks {
                await call(
                    LifecycledProtocol.Method.backgroundTaskBegan.name,
                    [.string(appID), .uint32(UInt32(clamping: task.id.rawValue)), .string(task.name)])
            }
            // The interval the app asked for is the app's: a new daemon (or a registration the
            // first report missed) learns it again.
            if application.minimumBackgroundFetchInterval != Application.backgroundFetchIntervalNever {
                await call(
                    LifecycledProtocol.Method.setMinimumBackgroundFetchInterval.name,
                    [.string(appID), .double(application.minimumBackgroundFetchInterval)])
            }
            // The new daemon holds no inhibitor and knows no badge of this app.
            if application.isIdleTimerDisabled {
                await call(LifecycledProtocol.Method.setIdleTimerDisabled.name, [.string(appID), .bool(true)])
            }
            if application.applicationIconBadgeNumber != 0 {
                await call(
                    LifecycledProtocol.Method.setBadge.name,
                    [.string(appID), .int64(Int64(application.applicationIconBadgeNumber))])
            }
        case .report(let member, let arguments):
            // Until the current daemon accepted the registration, reports go nowhere (it would
            // refuse them with NotRegistered); the resync after registering covers them.
            guard status.isHosted else { return true }
            await call(member, arguments)
        }
        return true
    }

    /// Sends a report without waiting for its reply (pipelined): lifecycled applies calls in the
    /// order they arrive, and one connection sends them in order. Only when
    /// ``maximumReportsInFlight`` are on their way does it wait, for the oldest reply.
    private func call(_ member: String, _ arguments: [BusValue]) async {
        guard let connection, connection.isOpen else { return }
        let reply = connection.send(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: member, arguments: arguments,
            timeout: configuration.callTimeout)
        inFlight.append((member, reply))
        await awaitReplies(keeping: Self.maximumReportsInFlight - 1)
    }

    /// Waits for the oldest replies until at most `count` reports are still on their way; a
    /// refused report is logged (the daemon keeps what it had).
    private func awaitReplies(keeping count: Int) async {
        while inFlight.count > count {
            let (member, reply) = inFlight.removeFirst()
            do {
                _ = try await reply.value()
            } catch {
                // A refused schedule is a notification that will not fire: the app must hear of it.
                if member == LifecycledProtocol.Method.scheduleNotification.name
                    || member == LifecycledProtocol.Method.presentNotification.name
                {
                    logger.info("\(member) refused by lifecycled: \(error)")
                } else {
                    logger.debug("\(member) failed: \(error)")
                }
            }
        }
    }

    private func closeConnection() {
        applicationService?.stop()
        pushConnector?.stop()
        applicationService = nil
        signalWatcher?.cancel()
        signalWatcher = nil
        signalTask = nil
        for subscription in subscriptions { subscription.cancel() }
        subscriptions.removeAll()
        connection?.close()
        connection = nil
        loop?.shutdown()
        loop = nil
        inbound?.finish()
        inbound = nil
        status.update {
            $0.isRegistered = false
            $0.daemonOwner = nil
        }
    }
}
