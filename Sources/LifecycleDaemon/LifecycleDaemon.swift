import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import DurableState
import FetchScheduling
import FoundationEssentials
import Glibc
import LifecycledProtocol
import LocalNotificationEngine
import Logging
import SystemdBus

/// The per-session host daemon: serves `org.applifecycle.Lifecycled1` and hosts apps.
///
/// ``start()`` connects to the bus, exports ``LifecycledProtocol``'s interface at its path,
/// takes the well-known name (refusing to run beside another owner), starts one
/// ``HostBridge`` for the session and says `READY=1`. From then on the methods (see
/// `LifecycleDaemon+Methods.swift`) register and launch apps, and the host facts from the
/// bridge are forwarded to every registered app as `Command` signals (see
/// `LifecycleDaemon+HostFacts.swift`). ``shutdown(reason:)`` terminates every app (command,
/// then escalation) and stops; ``run()`` waits for that.
///
/// Everything the daemon knows lives on the main actor; the bus handlers and the process
/// supervisors call back into it with `Task { @MainActor … }`.
@MainActor
package final class LifecycleDaemon {
    /// Where the daemon is in its life.
    enum Phase: Sendable, Equatable {
        /// Created, not started.
        case idle
        /// Serving.
        case running
        /// Terminating its apps.
        case stopping
        /// Stopped for good.
        case stopped
    }

    /// The configuration.
    let configuration: DaemonConfiguration
    /// The caller checks.
    let policy: CallerPolicy
    /// The manifests.
    let store: ManifestStore
    /// The apps.
    var registry: AppRegistry
    /// Where the daemon is in its life.
    private(set) var phase = Phase.idle
    /// Whether the daemon stopped because the bus closed its connection (the bus daemon died or
    /// dropped it). `lifecycled` then exits with status 1, so that the unit's `Restart=on-failure`
    /// starts it again on the new bus rather than leaving an active unit that serves nobody.
    package private(set) var lostTheBus = false
    /// Method calls to an app (by id) not answered yet (``withCallOutstanding(to:_:reachedApp:)``).
    var outstandingCalls: [String: Int] = [:]
    /// Apps that reported `suspended` while a call to them was outstanding, and whose calls have
    /// not reached them since: stopped once the last call ends.
    var deferredSuspensions: Set<String> = []
    /// The host facts: `sleeping`, `locked`, `session-active`.
    var hostFacts = HostFacts()
    /// Called when the sleep delay lock is released, with the reason (`all-suspended`, `deadline`).
    var onSleepLockReleased: (@MainActor (String) -> Void)?
    /// Called when a launched app's process has exited, with how it ended.
    var onAppExit: (@MainActor (String, AppExitStatus) -> Void)?
    /// Called with every signal as it is handed to the bus, in the daemon's order: tests see the
    /// `Command`s there too, which the bus delivers to their app's connection alone.
    var onSignalEmitted: (@MainActor (BusSignal) -> Void)?

    /// Where the daemon tells what happens (``DaemonConfiguration/logger``).
    var logger: Logger { configuration.logger }
    var loop: EventLoop?
    var connection: BusConnection?
    var object: ExportedObject?
    var bridge: HostBridge?
    private var bridgeTask: Task<Void, Never>?
    private var callsTask: Task<Void, Never>?
    private var ownerChanges: BusSubscription?
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    var exitWaiters: [Int: [CheckedContinuation<Void, Never>]] = [:]
    var nextLaunchID = 1
    /// Where launched apps get cgroups of their own (resolved once, at creation).
    let cgroupPlacement: AppCgroupPlacement
    /// Takes memory back from frozen apps' cgroups under memory pressure (`LifecycleDaemon+HostFacts.swift`).
    let memoryReclaimer: CgroupMemoryReclaimer
    var sleep = SleepWait()
    /// lifecycled's state directory.
    let stateDirectory: String
    /// Local notifications and badges of every hosted app (`LifecycleDaemon+LocalNotifications.swift`).
    let localNotifications: LocalNotificationCenter
    /// The idle inhibitors held for apps (`LifecycleDaemon+IdleInhibitor.swift`).
    var idle = IdleInhibitorState()
    /// The UnifiedPush distributor and the fleet's broker link.
    var push: PushDistributor?
    /// The apps the user exempted from freezing (`lifecyclectl exempt`), persisted in the state directory.
    var userExemptions: Set<String> = []
    /// The exemptions as last written (or read): what is restored when a write fails.
    var savedExemptions: Set<String> = []
    /// Their file's writer (made on the first change).
    lazy var exemptionsFile = GroupCommitFile(url: exemptionsURL, logger: logger)
    /// The background-fetch schedule (`LifecycleDaemon+Fetch.swift`).
    var fetchScheduler = FetchScheduler()
    /// The fetch scheduler's clock: the wall clock, moved only by `Simulate("fetch-clock")`.
    var fetchClock = FetchClock()
    /// The writer of `fetch-schedule.json`.
    lazy var fetchScheduleFile = GroupCommitFile(url: fetchScheduleURL, logger: logger)
    /// The one timer of the next fetch wake-up.
    let fetchTimer = FetchTimer()
    /// Per app with a fetch running: the wait for its deadline and grace.
    var fetchWatchdogs: [String: Task<Void, Never>] = [:]
    /// Per app with a fetch running: the result it posted, until its fetch task ends.
    var fetchResults: [String: BackgroundFetchResult] = [:]
    /// How the windows move apps: the configuration's, then `lifecycled.conf`'s `[lifecycle]`.
    var lifecycleSettings: LifecycleSettings
    /// The session's window source, while one runs.
    var windowSource: (any WindowSource)?
    /// Reads the window source's updates.
    var windowTask: Task<Void, Never>?
    /// Starts the window source after READY.
    var windowStart: Task<Void, Never>?
    /// The window set being applied (or settling); the next one waits for it.
    var windowChain: Task<Void, Never>?
    /// How many window sets have arrived; a settling set applies only if it is still the latest.
    var windowGeneration = 0
    /// The ids of the windows in the last set that arrived (a window not among them is new).
    var windowIDsSeen: Set<UInt64> = []
    /// The cgroup2 mount point, read once (window ownership turns `/proc/PID/cgroup` paths into directories).
    lazy var cgroup2MountPoint: String? = ProcFS.cgroup2MountPoint()

    /// The session's host facts as the apps get them.
    struct HostFacts: Sendable, Equatable {
        /// The machine is about to sleep (or sleeps).
        var sleeping = false
        /// The session is locked.
        var locked = false
        /// The session is the active one on its seat.
        var sessionActive = true
        /// Whether frozen apps' cgroups have `memory.reclaim` (``CgroupMemoryReclaimer``): probed
        /// at start, then set by each round of reclaim (available if the kernel took any write).
        var memoryReclaimAvailable = false
        /// The bytes reclaimed from frozen apps since the daemon started.
        var memoryReclaimedBytes: UInt64 = 0

        /// The `HostState` property value (and the base of an app's facts at `RegisterApp`).
        var userInfo: UserInfo {
            [
                "sleeping": .bool(sleeping), "locked": .bool(locked), "session-active": .bool(sessionActive),
                "memory-reclaim": .string(memoryReclaimAvailable ? "available" : "unavailable"),
                "memory-reclaimed": .int(Int64(clamping: memoryReclaimedBytes)),
            ]
        }
    }

    /// The state of one sleep preparation.
    struct SleepWait {
        /// Whether the daemon holds back sleep, waiting for apps to suspend.
        var pending = false
        /// The timer that releases the lock at the deadline.
        var deadline: Task<Void, Never>?
    }

    /// Creates a daemon; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: How to run.
    ///   - policy: Who may call (the daemon's uid by default).
    package init(configuration: DaemonConfiguration, policy: CallerPolicy = CallerPolicy()) {
        self.configuration = configuration
        lifecycleSettings = configuration.lifecycle
        cgroupPlacement = AppCgroupPlacement(
            mode: configuration.appCgroups, movesIntoLeaf: configuration.movesIntoLeafCgroup,
            logger: configuration.logger)
        memoryReclaimer = CgroupMemoryReclaimer(files: configuration.memoryReclaimFiles)
        hostFacts.memoryReclaimAvailable = memoryReclaimer.isAvailable(under: cgroupPlacement.parentDirectory)
        self.policy = policy
        let store = configuration.appsDirectories.map { ManifestStore(directories: $0) } ?? ManifestStore()
        self.store = store
        self.registry = AppRegistry(manifests: store.manifests)
        let stateDirectory =
            configuration.stateDirectory
            ?? RestorationArchive.defaultDirectory(applicationIdentifier: "lifecycled").path
        self.stateDirectory = stateDirectory
        localNotifications = LocalNotificationCenter(
            configuration: Self.localNotificationConfiguration(stateDirectory: stateDirectory),
            logger: configuration.logger)
        for error in store.errors { logger.warning("manifest rejected: \(error)") }
        localNotifications.host = self
    }

    // MARK: Start and stop

    /// Why `directory` cannot hold the daemon's state files, after making it (and its parents,
    /// mode 0700) when it is missing; `nil` when it can.
    ///
    /// - Parameters:
    ///   - directory: The state directory.
    static func stateDirectoryProblem(_ directory: String) -> String? {
        var status = stat()
        if stat(directory, &status) != 0 {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                return "it does not exist and cannot be made (\(String(cString: strerror(errno))))"
            }
            guard stat(directory, &status) == 0 else { return "it cannot be made" }
        }
        guard status.st_mode & S_IFMT == S_IFDIR else { return "it is not a directory" }
        guard access(directory, W_OK | X_OK) == 0 else { return "this user (uid \(geteuid())) may not write in it" }
        return nil
    }

    /// Connects, serves the push distributor, exports the interface, takes the bus name, starts the
    /// host bridge, connects to the broker, `READY=1`.
    ///
    /// - Throws: ``StartError`` when the bus cannot be reached or another process owns
    ///   `org.applifecycle.Lifecycled1` (nothing is left running then).
    package func start() async throws {
        guard phase == .idle else { throw StartError(.alreadyStarted, "lifecycled was already started") }
        // What lifecycled acknowledges (a schedule, a push, a registration) is kept here: without
        // a directory it can write, it would answer and then lose it.
        if let problem = Self.stateDirectoryProblem(stateDirectory) {
            throw StartError(
                .stateDirectory,
                """
                cannot keep state in \(stateDirectory): \(problem); give --state-directory a directory lifecycled's \
                user can write, or fix that one's owner and permissions
                """)
        }
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "lifecycled")
        } catch {
            throw StartError(.eventLoop, "cannot start the event loop", underlying: error)
        }
        // What a caller may change or rely on from the first call: the user's exemptions and
        // lifecycled.conf's [lifecycle] settings, read before the interface is served.
        loadExemptions()
        loadFetchSchedule()
        let file = readConfigurationFile()
        applyLifecycleSettings(file)
        let connection: BusConnection
        do {
            connection = try await BusConnection(
                configuration.busAddress, loop: loop, description: "lifecycled", timeout: .seconds(25))
        } catch let error as BusError {
            loop.shutdown()
            // The bus's message says which bus, why and what to do; lifecycled adds its own option.
            throw StartError(
                .busUnavailable,
                error.message
                    + (configuration.busAddress == .session
                        ? "; or name the bus with --address ADDRESS (`lifecycled --address unix:path=…`)" : ""))
        } catch {
            loop.shutdown()
            throw StartError(
                .busUnavailable, "cannot connect to the \(configuration.busAddress) bus", underlying: error)
        }
        self.loop = loop
        self.connection = connection
        connection.addDisconnectHandler { [weak self] in
            Task { @MainActor in await self?.busDisconnected() }
        }
        do {
            // Follow every bus name's vanishing (one match), before any app can register.
            ownerChanges = try await connection.subscribe(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", signature: "sss"
            ) { [weak self] signal in
                guard let name = signal.arguments[0].stringValue, name.hasPrefix(":"),
                    signal.arguments[2].stringValue?.isEmpty == true
                else { return }
                Task { @MainActor in self?.busNameVanished(name) }
            }
            // The distributor's name first: the first call to Lifecycled1 may launch an app (the call
            // that activated lifecycled is handed over as soon as the name is granted), and the app
            // registers for remote notifications at once; before, it met no distributor.
            await servePush(loop: loop, connection: connection, file: file)
            let object = try await connection.export(makeInterface(), at: LifecycledProtocol.objectPath)
            self.object = object
            callsTask = serveCalls(of: object)
            // Running from here: the bus hands the name's first calls (a Launch from the client whose
            // call activated lifecycled) to the served interface as soon as it grants the name, which
            // can be before this task resumes with the reply. A refusal tears down (stopped).
            phase = .running
            let reply = try await connection.requestName(LifecycledProtocol.busName, flags: [.doNotQueue])
            guard reply == .primaryOwner || reply == .alreadyOwner else {
                let owner = try? await connection.nameOwner(LifecycledProtocol.busName)
                var process = ""
                if let owner, let pid = try? await connection.credentials(of: owner).pid {
                    process = "process \(pid), "
                }
                throw StartError(
                    .nameTaken,
                    """
                    another lifecycled already owns \(LifecycledProtocol.busName) on the \(configuration.busAddress) bus \
                    (\(process)connection \(owner ?? "?")); not starting a second one: use that one \
                    (`lifecyclectl status`), or stop it first (`systemctl --user stop lifecycled` when the user \
                    manager started it)
                    """)
            }
        } catch {
            teardown()
            if let error = error as? StartError { throw error }
            throw StartError(.serveFailed, "cannot serve \(LifecycledProtocol.busName)", underlying: error)
        }
        logger.info(
            "serving \(LifecycledProtocol.busName) on the \(configuration.busAddress) bus as \(connection.uniqueName); \(registry.all.count) app(s) known"
        )

        var bridgeConfiguration = HostBridge.Configuration(
            sources: configuration.bridgeSources, systemBus: configuration.systemBus,
            sessionBus: configuration.busAddress,
            inhibitorWho: "lifecycled")
        bridgeConfiguration.environment = ProcessInfo.processInfo.environment
        let bridge = HostBridge(configuration: bridgeConfiguration)
        bridge.isOrientationLocked = lifecycleSettings.orientationLocked
        // The fetch scheduler's conditions follow the device's (a deferred fetch runs when they allow).
        bridge.onDeviceConditionsChange = { [weak self] conditions in
            self?.setFetchConditions(FetchConditions(conditions))
        }
        self.bridge = bridge
        let events = await bridge.start(logger: logger)
        bridgeTask = Task { @MainActor [weak self] in
            for await event in events {
                guard let self, self.phase == .running else { return }
                await self.handleHostEvent(event)
            }
        }
        await startLocalNotifications()
        armFetchTimer()
        await push?.startDelivering(loop: loop)
        bridge.notify("READY=1\nSTATUS=hosting \(registry.all.count) known app(s)")
        // Off the start path: a display server that does not answer must not hold back READY.
        windowStart = Task { @MainActor [weak self] in await self?.startWindowSource(loop: loop) }
    }

    /// Waits until the daemon has stopped (after ``shutdown(reason:)``).
    package func run() async {
        guard phase != .stopped else { return }
        await withCheckedContinuation { stopWaiters.append($0) }
    }

    /// Terminates every app (a `terminate` command, then the escalation), then stops serving.
    ///
    /// `STOPPING=1` goes to the service manager first. Safe to call more than once: later
    /// calls wait for the first to finish.
    ///
    /// - Parameters:
    ///   - reason: Why (``TerminationReason``), passed to the apps.
    func shutdown(reason: TerminationReason) async {
        switch phase {
        case .idle:
            phase = .stopped
            return
        case .stopping:
            await run()
            return
        case .stopped:
            return
        case .running:
            break
        }
        phase = .stopping
        logger.info("stopping (\(reason.rawValue)): terminating every app")
        let microseconds = (configuration.termination.deadline + configuration.termination.grace + .seconds(1))
            .saturatingMicroseconds
        bridge?.notify("STOPPING=1\nEXTEND_TIMEOUT_USEC=\(microseconds)\nSTATUS=terminating apps")
        let ids = registry.all.filter { $0.isRegistered || $0.isRunning }.map(\.id)
        // All at once, so the deadlines run in parallel; then wait for every one.
        let terminations = ids.map { id in Task { @MainActor in await self.terminateApp(id, reason: reason) } }
        for termination in terminations { await termination.value }
        // Deliveries recorded since the last write are on disk before the daemon goes: a restart
        // must not deliver them again. So is the schedule (a write that failed, on a full disk, is
        // tried once more: what is kept for an activation and what fired must not be lost).
        if let failure = await localNotifications.persist() {
            logger.error("the schedule of local notifications could not be written before stopping: \(failure)")
        }
        // Deliveries under way end first (their outcome is part of the last write): nothing of
        // the daemon runs after "stopped", when the process exits under it.
        await push?.stop()
        await push?.flush()
        teardown()
        logger.info("stopped")
    }

    /// The bus closed the connection: everything acknowledged is written, the apps are terminated
    /// (with no bus, the escalation's SIGTERM reaches them, which `LifecycledHost` turns into
    /// `applicationWillTerminate`), and ``run()`` returns with ``lostTheBus`` set.
    private func busDisconnected() async {
        guard phase == .running else { return }
        lostTheBus = true
        logger.critical(
            "the \(configuration.busAddress) bus closed lifecycled's connection; stopping so that the service manager starts it again (exit status 1, Restart=on-failure)"
        )
        await shutdown(reason: .sessionEnded)
    }

    /// Stops serving at once, as a crash would: the apps keep running, unsupervised.
    ///
    /// For tests of a daemon restart (the apps must re-register with the next daemon).
    func abandonForTesting() {
        logger.warning("abandoning every app without terminating it")
        teardown()
    }

    /// Stops serving at once: the bridge, the bus and the loop (apps still running lose their supervisor).
    private func teardown() {
        stopLocalNotifications()
        fetchTimer.disarm()
        for watchdog in fetchWatchdogs.values { watchdog.cancel() }
        fetchWatchdogs.removeAll()
        push?.stopAbruptly()
        push = nil
        stopWindowSource()
        bridgeTask?.cancel()
        bridgeTask = nil
        bridge?.stop()
        bridge = nil
        sleep.deadline?.cancel()
        sleep = SleepWait()
        ownerChanges?.cancel()
        ownerChanges = nil
        object?.unexport()
        object = nil
        callsTask?.cancel()
        callsTask = nil
        connection?.close()
        connection = nil
        loop?.shutdown()
        loop = nil
        phase = .stopped
        let waiters = stopWaiters
        stopWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
        for waiters in exitWaiters.values { waiters.forEach { $0.resume() } }
        exitWaiters.removeAll()
    }

    // MARK: Properties and signals

    /// Publishes the `Apps` property (after any change of an app's state, pid or registration).
    func publishApps() {
        do {
            try object?.setProperty(LifecycledProtocol.Property.apps.name, registry.listValue)
        } catch {
            logger.debug("cannot update Apps: \(error)")
        }
    }

    /// Publishes the `HostState` property.
    func publishHostState() {
        do {
            try object?.setProperty(
                LifecycledProtocol.Property.hostState.name, UserInfoBusCodec.encode(hostFacts.userInfo))
        } catch {
            logger.debug("cannot update HostState: \(error)")
        }
    }

    /// Emits one of the interface's signals, logging a failure.
    ///
    /// - Parameters:
    ///   - destination: The unique name of the one app it is for (a `Command`), or `nil` to broadcast.
    func emit(_ member: String, _ arguments: [BusValue], to destination: String? = nil) {
        noteEmitted(member, arguments, to: destination)
        do {
            try object?.emitSignal(member, arguments: arguments, destination: destination)
        } catch {
            logger.warning("cannot emit \(member): \(error)")
        }
    }

    /// Hands a signal to ``onSignalEmitted``.
    ///
    /// - Parameters:
    ///   - destination: The unique name it goes to, or `nil` for a broadcast.
    func noteEmitted(_ member: String, _ arguments: [BusValue], to destination: String?) {
        if destination == nil { push?.fleet?.mirror(member, arguments) }
        guard let onSignalEmitted, let connection else { return }
        onSignalEmitted(
            BusSignal(
                sender: connection.uniqueName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface,
                member: member, arguments: arguments, destination: destination))
    }

    /// Records an app's new state: `StateChanged` when it differs, then `Apps`, then the sleep check.
    ///
    /// - Parameters:
    ///   - state: Its new state.
    func setState(_ id: String, _ state: ApplicationState) {
        guard let app = registry[id] else { return }
        let previous = app.state
        guard previous != state else { return }
        app.state = state
        logger.info("\(id): \(previous) -> \(state)", metadata: .app(id))
        emit(
            LifecycledProtocol.Signal.stateChanged.name,
            [.string(id), .string(previous.rawValue), .string(state.rawValue)])
        publishApps()
        checkSleepRelease()
        updateIdleInhibitor(id)
        if state == .active { appBecameActive(id) }
        updateAccelerometerClaim()
    }

    /// Claims iio-sensor-proxy's accelerometer while some app that adopts AppLifecycle is active (it
    /// may rotate), and releases it when none is, so the sensor is not kept powered for apps in the
    /// background; a frozen app hears only the latest orientation when it returns.
    func updateAccelerometerClaim() {
        guard let bridge else { return }
        let wanted = registry.all.contains { $0.state == .active && ($0.manifest?.adoptsLifecycle ?? true) }
        Task { await bridge.setAccelerometerWanted(wanted) }
    }

    // MARK: Commands

    /// Sends a `Command` to one app, resuming it first if it is stopped and the command can wake it.
    ///
    /// A launched app that has not registered yet gets the command when it registers.
    ///
    /// - Parameters:
    ///   - command: The command; a host event no daemon forwards (``HostEventBusCodec``) is not sent.
    func send(_ command: LifecycledCommand, to id: String) async {
        guard let (name, arguments) = command.encode() else { return }
        guard let app = registry[id] else { return }
        // A program that does not adopt AppLifecycle hears nothing; its windows freeze and thaw it,
        // and what brings an app to the foreground (a launcher, Activate, a banner) thaws it.
        guard app.manifest?.adoptsLifecycle ?? true else {
            if case .hostEvent(.foreground(true)) = command { await thaw(id) }
            return
        }
        guard let busName = app.busName else {
            guard app.isRunning else { return }
            // Bounded: callers could otherwise grow it without end for an app that never registers.
            if app.enqueue(name, arguments, limit: Self.maximumPendingCommands) {
                logger.warning(
                    "\(id) has not registered; its oldest queued command was dropped (\(Self.maximumPendingCommands) at most)",
                    metadata: .app(id))
            }
            return
        }
        if command.resumesSuspendedApp { await resume(id) }
        // For the app alone: its payload (a posted userInfo, an opened URL) is no one else's business.
        // To the connection it registered from when this began: never to everyone (a nil
        // destination), should it leave the bus meanwhile.
        emit(
            LifecycledProtocol.Signal.command.name, [.string(id), .string(name), UserInfoBusCodec.encode(arguments)],
            to: busName)
    }

    /// Sends a host event as a command to every registered app, in registration order.
    ///
    /// - Parameters:
    ///   - event: The event; one without a command (``HostEventBusCodec``) is not sent.
    func broadcast(_ event: HostEvent) async {
        for app in registry.registered {
            await send(.hostEvent(event), to: app.id)
        }
    }

    /// Takes back a stop the app has outrun: it reported a running state (its report was on its way
    /// while the stop for its earlier `suspended` went out), so it must not be left stopped. The
    /// request is made at once, so it stays in main-actor order with later suspend requests.
    func cancelStaleStop(_ id: String) {
        _ = registry[id]?.withdrawStaleStop { [weak self] result in
            if case .failure(let error) = result {
                Task { @MainActor in self?.logger.info("\(id): not resumed: \(error)", metadata: .app(id)) }
            }
        }
    }

    /// Resumes a stopped (or stopping) app and waits for the kernel's confirmation.
    func resume(_ id: String) async {
        do {
            try await registry[id]?.resumeProcess()
        } catch {
            logger.warning("\(id): cannot resume: \(error)", metadata: .app(id))
        }
    }

    /// Runs `body` with a method call to an app outstanding: meanwhile the app is not suspended
    /// (it would not read the call until resumed, and the caller would wait for its timeout).
    ///
    /// A `suspended` reported meanwhile is deferred. A call that reached the app (a push's
    /// `Message`) wakes it into the background, and it reports `suspended` again once its
    /// completion handler has run, so the deferred stop is dropped: stopping it at the reply would
    /// stop it mid-handler. If no call reached it, it is stopped once the last one has ended.
    ///
    /// - Parameters:
    ///   - id: The app (its id is its bus name).
    ///   - body: Makes the call.
    ///   - reachedApp: Whether the call's outcome means the app took it.
    func withCallOutstanding<T>(to id: String, _ body: () async -> T, reachedApp: (T) -> Bool) async -> T {
        outstandingCalls[id, default: 0] += 1
        let result = await body()
        outstandingCalls[id, default: 1] -= 1
        if reachedApp(result) { deferredSuspensions.remove(id) }
        if outstandingCalls[id] == 0 {
            outstandingCalls[id] = nil
            if deferredSuspensions.remove(id) != nil, registry[id]?.state == .suspended { suspendProcess(id) }
        }
        return result
    }

    /// Really stops an app that reported `suspended` (cgroup freezer or `SIGSTOP`, confirmed).
    ///
    /// Not while a call to it is outstanding (``withCallOutstanding(to:_:reachedApp:)``).
    func suspendProcess(_ id: String) {
        guard let app = registry[id], app.canStopProcess else { return }
        if let exemption = freezeExemption(app) {
            logger.info("\(id) is suspended but not frozen: \(exemption)", metadata: .app(id))
            return
        }
        if let calls = outstandingCalls[id], calls > 0 {
            deferredSuspensions.insert(id)
            logger.debug(
                "\(id) reported suspended with \(calls) call(s) to it outstanding; stopped after them unless they wake it",
                metadata: .app(id))
            return
        }
        // Requested synchronously, so the loop sees stop and continue requests in main-actor order:
        // a stop requested from a later task could overtake a continue and leave the app stopped
        // with a Command it never reads.
        _ = app.stopProcess { result in
            Task { @MainActor [weak self] in
                if case .failure(let error) = result {
                    self?.logger.info("\(id): not suspended: \(error)", metadata: .app(id))
                }
                self?.checkSleepRelease()
            }
        }
    }

    // MARK: Launch and exit

    /// Launches an app from its manifest with launch options.
    ///
    /// - Parameters:
    ///   - manifest: The app.
    ///   - options: Its launch options (kept and returned by `RegisterApp`).
    /// - Throws: `LaunchFailed` when the process cannot be started.
    func launch(
        _ manifest: AppManifest, options: LaunchOptions, environment extra: [String: String] = [:]
    ) throws(BusError) {
        guard let loop, phase == .running else { throw DaemonError.launchFailed(manifest.id, "lifecycled is stopping") }
        let id = manifest.id
        let launchID = nextLaunchID
        nextLaunchID += 1
        let process: AppProcess
        let cgroup = cgroupPlacement.makeDirectory(appID: id, launchID: launchID)
        do {
            process = try AppProcess.launch(
                manifest: manifest, launchOptions: options,
                environment: configuration.launchEnvironment.merging(extra) { _, new in new },
                cgroupDirectory: cgroup, loop: loop, logger: logger
            ) { [weak self] status in
                Task { @MainActor in
                    if let cgroup { await self?.cgroupPlacement.removeDirectory(cgroup) }
                    self?.processExited(id, launchID: launchID, status: status)
                }
            }
        } catch {
            if let cgroup { Task { await cgroupPlacement.removeDirectory(cgroup) } }
            throw DaemonError.launchFailed(id, "\(error)")
        }
        let app = registry.candidate(for: id)
        app.launched(process, launchID: launchID, manifest: manifest, options: options, cgroupDirectory: cgroup)
        registry[id] = app
        logger.info("launched \(id) as pid \(process.pid)", metadata: .app(id))
        publishApps()
    }

    /// A launched process ended: the app is not running any more.
    ///
    /// - Parameters:
    ///   - launchID: Which launch ended.
    ///   - status: How it ended.
    func processExited(_ id: String, launchID: Int, status: AppExitStatus) {
        defer {
            for waiter in exitWaiters.removeValue(forKey: launchID) ?? [] { waiter.resume() }
        }
        guard let app = registry[id], app.launchID == launchID else { return }
        logger.info("\(id) (pid \(app.process.map { String($0.pid) } ?? "?")) \(status)", metadata: .app(id))
        // The connection dies with the process; the registration ends here too.
        app.exited()
        Task { @MainActor [weak self] in await self?.fetchAppGone(id) }
        setState(id, .notRunning)
        publishApps()
        checkSleepRelease()
        onAppExit?(id, status)
    }

    /// A unique bus name vanished: the app registered from it is gone.
    ///
    /// - Parameters:
    ///   - busName: The unique name.
    func busNameVanished(_ busName: String) {
        guard let app = registry.app(registeredFrom: busName) else { return }
        logger.info("\(app.id) left the bus (\(busName))", metadata: .app(app.id))
        app.leftTheBus()
        Task { @MainActor [weak self] in await self?.fetchAppGone(app.id) }
        setState(app.id, .notRunning)
        // An app known only from its registration (no manifest, not launched here) is
        // forgotten once it is gone, so the registry does not grow with every id ever seen.
        if app.manifest == nil, app.process == nil { registry[app.id] = nil }
        publishApps()
    }

    /// Waits until the given launch of an app has exited (at once if it has).
    func waitForExit(_ id: String) async {
        // The record keeps the process until its exit has been handled here, on the main actor.
        guard let app = registry[id], app.process != nil else { return }
        let launchID = app.launchID
        await withCheckedContinuation { exitWaiters[launchID, default: []].append($0) }
    }

    /// Terminates one app: a `terminate` command, then (for a launched app) the escalation,
    /// returning once the process has exited.
    ///
    /// - Parameters:
    ///   - reason: Why.
    func terminateApp(_ id: String, reason: TerminationReason) async {
        guard let app = registry[id] else { return }
        // The process to end is the one running now: if it exits and the app is launched again
        // while the command goes out, the new launch never got `terminate` and is left alone.
        let process = app.process
        registry[id]?.beginTerminating()
        // Queued like any command when the app runs but has not registered yet (launched a moment
        // ago by OpenURL, say): it gets it right after its registration and can exit by itself.
        await send(.hostEvent(.terminate(reason)), to: id)
        guard let process, registry[id]?.process === process else { return }
        // Without its bus the command cannot reach the app: SIGTERM at once (LifecycledHost turns it
        // into applicationWillTerminate), with the whole budget as its grace. The same for a program
        // that does not adopt AppLifecycle (it hears no command), thawed first so it can exit.
        let adopts = app.manifest?.adoptsLifecycle ?? true
        if !adopts { await resume(id) }
        let termination = configuration.termination
        let policy =
            lostTheBus || !adopts
            ? TerminationPolicy(deadline: .zero, grace: termination.deadline + termination.grace) : termination
        process.terminate(policy: policy) { [logger] step in
            logger.notice(
                "\(id) did not exit in time: \(step == .sentTerminate ? "SIGTERM" : "SIGKILL")", metadata: .app(id))
        }
        await waitForExit(id)
    }

    /// Who a caller is, for `sourceApplication`: its app id if registered, else its executable's name.
    ///
    /// - Parameters:
    ///   - call: The method call.
    func callerIdentity(_ call: BusMethodCall) -> String? {
        if let sender = call.sender, let app = registry.app(registeredFrom: sender) { return app.id }
        return call.credentials?.pid.flatMap { pid_t(exactly: $0) }.flatMap { CallerPolicy.executableName(of: $0) }
    }
}
