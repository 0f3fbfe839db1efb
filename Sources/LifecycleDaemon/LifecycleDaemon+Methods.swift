import AppLifecycle
import AppLifecycleSystemd
import FetchScheduling
import FoundationEssentials
import Glibc
import LifecycledProtocol
import SystemdBus

extension LifecycleDaemon {
    /// The most background tasks one app may report at once (bounds what a caller can store).
    static let maximumBackgroundTasks = 64
    /// The most apps without a manifest registered at once (each a registry entry a caller creates).
    static let maximumUnknownApps = 256
    /// The most commands queued for a launched app that has not registered yet (the oldest go first).
    static let maximumPendingCommands = 64

    /// The exported interface: every method of ``LifecycledProtocol`` with its handler, the
    /// three signals, and the four properties, readable by the daemon's own user only.
    func makeInterface() -> ExportedInterface {
        // Declared once in LifecycledProtocol: names, argument names and signatures, which the typed
        // entries (``exportedMethods``) are checked against. Answered in arrival order on the main
        // actor (``serveCalls(of:)``).
        var interface = ExportedInterface(
            name: LifecycledProtocol.interface,
            methods: Self.exportedMethods.map(\.declaration),
            signals: LifecycledProtocol.Signal.allCases.map { signal in
                ExportedInterface.Signal(
                    signal.name, signature: signal.signature, argumentNames: signal.arguments.map(\.name))
            },
            properties: LifecycledProtocol.Property.allCases.map { property in
                let value: BusValue
                switch property {
                case .hostState: value = UserInfoBusCodec.encode(hostFacts.userInfo)
                case .apps: value = registry.listValue
                case .simulationEnabled: value = .bool(configuration.simulationEnabled)
                case .version: value = .uint32(LifecycledProtocol.version)
                }
                precondition(
                    value.signature == property.signature, "\(property.name) is declared \(property.signature)")
                return ExportedInterface.Property(
                    property.name, initialValue: value, changeSignal: property.isConstant ? .constant : .emitsValue)
            },
            // Reading the properties is a call like any other: the same uid check as the methods.
            propertyAccessCheck: { [policy] credentials throws(BusError) in
                try policy.check(credentials, member: "org.freedesktop.DBus.Properties")
            })
        interface.callDelivery = .inOrder
        interface.maximumPendingCalls = Self.maximumPendingCalls
        return interface
    }

    /// The most method calls queued or being answered at once (from all callers together).
    static let maximumPendingCalls = 512

    /// Answers the exported object's calls in the order they arrived, on the main actor.
    ///
    /// Each call starts at once (`Task.immediate`), before the next is taken: the part of a handler
    /// before its first suspension, which is all of `ReportState`, `ReportNotification` and the
    /// background-task reports, runs in arrival order, so an app that pipelines its reports has them
    /// applied as it sent them. A call that suspends (`Terminate` waits for the app) does not hold
    /// up the ones behind it.
    ///
    /// - Parameters:
    ///   - object: The exported interface (``ExportedInterface/CallDelivery/inOrder``).
    /// - Returns: The task that serves until the object is unexported.
    func serveCalls(of object: ExportedObject) -> Task<Void, Never> {
        object.serve(self, methods: Self.exportedMethods, whenGone: "lifecycled is stopping") {
            daemon, call throws(BusError) in try daemon.admit(call)
        }
    }

    /// Answers one method call as the exported object does: ``admit(_:)``, then the typed method.
    ///
    /// - Returns: The reply's values.
    /// - Throws: ``BusError`` with the protocol's error names (see each method).
    func handle(_ call: BusMethodCall) async throws -> [BusValue] {
        try admit(call)
        guard let method = Self.exportedMethods.first(where: { $0.name == call.member }) else {
            throw BusError(name: BusError.Name.unknownMethod, message: "no method \(call.member)")
        }
        return try await method.answer(self, call)
    }

    /// What every call passes before its arguments are looked at: the uid check, and a daemon that
    /// has not stopped yet (while stopping, apps still report their final state; launches are
    /// refused in `launch`).
    private func admit(_ call: BusMethodCall) throws(BusError) {
        try policy.check(call.credentials, member: call.member)
        guard phase != .stopped else { throw BusError(name: BusError.Name.failed, message: "lifecycled has stopped") }
    }

    /// Every method of ``LifecycledProtocol/Method`` with its typed handler, in declaration order.
    nonisolated static let exportedMethods = LifecycledProtocol.Method.allCases.map(exportedMethod)

    /// The typed entry of one method: its arguments decoded and checked (``AppIDArgument``,
    /// ``UserInfoArgument``, …) before the handler runs. An exhaustive switch, so a method added to
    /// the protocol does not compile until it is answered.
    private nonisolated static func exportedMethod(_ method: LifecycledProtocol.Method) -> ExportedMethod<
        LifecycleDaemon
    > {
        switch method {
        case .registerApp:
            return ExportedMethod(method, arguments: AppIDArgument.self) { daemon, call, id in
                try await daemon.registerApp(call, id.id)
            }
        case .reportState:
            return ExportedMethod(method, arguments: (AppIDArgument.self, StateArgument.self), results: ()) {
                daemon, call, id, state in try daemon.reportState(call, id.id, state.state)
            }
        case .scheduleNotification:
            return ExportedMethod(method, arguments: (AppIDArgument.self, UserInfoArgument.self), results: String.self)
            {
                daemon, call, id, notification in try await daemon.scheduleNotification(id.id, notification.userInfo)
            }
        case .cancelNotification:
            return ExportedMethod(method, arguments: (AppIDArgument.self, String.self), results: ()) {
                daemon, call, id, identifier in try await daemon.cancelNotifications(id.id, identifier: identifier)
            }
        case .listNotifications:
            return ExportedMethod(method, arguments: String.self) { daemon, call, id in
                guard id.isEmpty || LifecycledProtocol.isValidAppID(id) else {
                    throw DaemonError.invalidArgs("'\(id.prefix(64))' is not a valid app id")
                }
                return [daemon.listNotifications(id)]
            }
        case .presentNotification:
            return ExportedMethod(method, arguments: (AppIDArgument.self, UserInfoArgument.self), results: ()) {
                daemon, call, id, notification in
                _ = try daemon.registeredApp(id.id, call)
                try daemon.presentNotification(id.id, notification.userInfo)
            }
        case .setBadge:
            return ExportedMethod(method, arguments: (AppIDArgument.self, Int64.self), results: ()) {
                daemon, call, id, count in
                guard let value = Int32(exactly: count) else {
                    throw DaemonError.invalidArgs("the badge must be a 32-bit count")
                }
                guard daemon.store.manifest(id: id.id) != nil || daemon.registry[id.id]?.isRegistered == true else {
                    throw DaemonError.unknownApp(id.id)
                }
                // The badge is the app's own, like every app-only method: only its registered connection sets it.
                _ = try daemon.registeredApp(id.id, call)
                daemon.setBadge(id.id, Int(value))
            }
        case .listManifests:
            return ExportedMethod(method, arguments: ()) { daemon, call in [daemon.manifestList()] }
        case .setIdleTimerDisabled:
            return ExportedMethod(method, arguments: (AppIDArgument.self, Bool.self), results: ()) {
                daemon, call, id, disabled in
                _ = try daemon.registeredApp(id.id, call)
                daemon.setIdleTimerDisabled(id.id, disabled)
            }
        case .setFreezeExempt:
            return ExportedMethod(method, arguments: (AppIDArgument.self, Bool.self), results: ()) {
                daemon, call, id, exempt in try await daemon.setFreezeExempt(id.id, exempt)
            }
        case .describeApps:
            return ExportedMethod(method, arguments: ()) { daemon, call in [daemon.describeApps()] }
        case .setMinimumBackgroundFetchInterval:
            return ExportedMethod(method, arguments: (AppIDArgument.self, Double.self), results: ()) {
                daemon, call, id, interval in
                try await daemon.setMinimumBackgroundFetchInterval(call, id.id, interval)
            }
        case .performFetch:
            return ExportedMethod(method, arguments: AppIDArgument.self, results: ()) { daemon, call, id in
                try await daemon.performFetch(id.id)
            }
        case .setBackgroundRefresh:
            return ExportedMethod(method, arguments: (AppIDArgument.self, Bool.self), results: ()) {
                daemon, call, id, enabled in try await daemon.setBackgroundRefresh(id.id, enabled)
            }
        case .reportNotification:
            return ExportedMethod(
                method, arguments: (AppIDArgument.self, NotificationNameArgument.self, UserInfoArgument.self),
                results: ()
            ) { daemon, call, id, name, userInfo in
                _ = try daemon.registeredApp(id.id, call)
                if name.name == Application.performFetchNotification.rawValue {
                    daemon.fetchResultReported(id.id, userInfo.userInfo)
                }
                daemon.emit(
                    LifecycledProtocol.Signal.notification.name,
                    [.string(id.id), .string(name.name), userInfo.busValue])
            }
        case .backgroundTaskBegan:
            return ExportedMethod(method, arguments: (AppIDArgument.self, UInt32.self, String.self), results: ()) {
                daemon, call, id, task, name in try daemon.backgroundTaskBegan(call, id.id, task: task, name: name)
            }
        case .backgroundTaskEnded:
            return ExportedMethod(method, arguments: (AppIDArgument.self, UInt32.self), results: ()) {
                daemon, call, id, task in
                _ = try daemon.registeredApp(id.id, call)
                let name = daemon.registry[id.id]?.backgroundTasks[task]
                daemon.registry[id.id]?.setBackgroundTask(task, nil)
                // The last task of an app that reported suspended may have been what held sleep.
                daemon.checkSleepRelease()
                await daemon.fetchTaskEnded(id.id, name: name)
            }
        case .openURL:
            return ExportedMethod(method, arguments: (URLArgument.self, UserInfoArgument.self), results: String.self) {
                daemon, call, url, options in try await daemon.openURL(call, url.url, options: options.userInfo)
            }
        case .launch:
            return ExportedMethod(method, arguments: (AppIDArgument.self, UserInfoArgument.self), results: ()) {
                daemon, call, id, options in try await daemon.launch(call, id.id, options: options.userInfo)
            }
        case .terminate:
            return ExportedMethod(method, arguments: AppIDArgument.self, results: ()) { daemon, call, id in
                guard daemon.registry[id.id] != nil else { throw DaemonError.unknownApp(id.id) }
                await daemon.terminateApp(id.id, reason: .hostRequest)
            }
        case .post:
            return ExportedMethod(
                method, arguments: (AppIDArgument.self, NotificationNameArgument.self, UserInfoArgument.self),
                results: ()
            ) { daemon, call, id, name, userInfo in
                guard let app = daemon.registry[id.id] else { throw DaemonError.unknownApp(id.id) }
                guard app.isRegistered || app.isRunning else {
                    throw DaemonError.notRegistered("\(id.id) is not running; Post needs a running app")
                }
                await daemon.send(.post(name: name.name, userInfo: userInfo.userInfo), to: id.id)
            }
        case .simulate:
            return ExportedMethod(method, arguments: (String.self, UserInfoArgument.self), results: ()) {
                daemon, call, kind, arguments in try await daemon.simulate(kind: kind, arguments: arguments.userInfo)
            }
        case .getState:
            return ExportedMethod(method, arguments: AppIDArgument.self, results: String.self) { daemon, call, id in
                guard let app = daemon.registry[id.id] else { throw DaemonError.unknownApp(id.id) }
                return app.state.rawValue
            }
        case .listApps:
            return ExportedMethod(method, arguments: ()) { daemon, call in [daemon.registry.listValue] }
        case .getCounters:
            return ExportedMethod(method, arguments: ()) { daemon, call in
                [UserInfoBusCodec.encode(UserInfo(daemon.counters.mapValues { .int(Int64($0)) }))]
            }
        }
    }

    /// `GetCounters`: the push distributor's and the local notifications' counters, the push
    /// queue's length and the registrations (all 0 without a distributor).
    var counters: [String: Int] {
        var counters = (push?.counters ?? PushCounters()).values
        counters["push-queued"] = push?.queuedCount ?? 0
        counters["push-registrations"] = push?.registrationCount ?? 0
        counters.merge(localNotifications.counters.values) { $1 }
        return counters
    }

    /// `ListManifests() → aa{sv}`: every manifest's id, name, URL schemes, quick actions and
    /// background modes, by id.
    private func manifestList() -> BusValue {
        .array(
            elementSignature: "a{sv}",
            store.manifests.sorted { $0.id < $1.id }.map { manifest in
                var info: UserInfo = [
                    "id": .string(manifest.id), "name": .string(manifest.name ?? manifest.id),
                    "urlSchemes": .array(manifest.urlSchemes.map(UserInfoValue.string)),
                    "shortcutItems": .array(manifest.shortcutItems.map(\.propertyList)),
                ]
                info["backgroundModes"] = .array(manifest.backgroundModes.sorted().map { .string($0.rawValue) })
                return UserInfoBusCodec.encode(info)
            })
    }

    /// `BackgroundTaskBegan(appId, task, name)`: records a task of the registered app, at most
    /// ``maximumBackgroundTasks`` at once.
    private func backgroundTaskBegan(_ call: BusMethodCall, _ id: String, task: UInt32, name: String)
        throws(BusError)
    {
        guard name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength else {
            throw DaemonError.invalidArgs(
                "the task name is longer than \(LifecycledProtocol.Limits.notificationNameLength) bytes")
        }
        _ = try registeredApp(id, call)
        guard
            registry[id]?.backgroundTasks[task] != nil
                || (registry[id]?.backgroundTasks.count ?? 0) < LifecycleDaemon.maximumBackgroundTasks
        else {
            throw DaemonError.invalidArgs(
                "more than \(LifecycleDaemon.maximumBackgroundTasks) background tasks at once")
        }
        registry[id]?.setBackgroundTask(task, name)
    }

    /// `Launch(appId, options)`: checks the options (no URL: that is `OpenURL`'s; a quick action must
    /// be one of the manifest's), then ``launchApp(_:options:)``. The source is the caller, as the
    /// daemon sees it, never what the caller says it is.
    private func launch(_ call: BusMethodCall, _ id: String, options userInfo: UserInfo) async throws(BusError) {
        var options = LaunchOptions(userInfo: userInfo)
        guard options.userInfo[LaunchOptions.Key.url.rawValue] == nil else {
            throw DaemonError.invalidArgs(
                "Launch takes no \(LaunchOptions.Key.url.rawValue); open the URL with OpenURL")
        }
        options.sourceApplication = callerIdentity(call)
        if options.userInfo[LaunchOptions.Key.shortcutItem.rawValue] != nil {
            // A quick action names one of the manifest's by type; the manifest says what it is.
            guard let type = options.shortcutItem?.type,
                let item = store.manifest(id: id)?.shortcutItems.first(where: { $0.type == type })
            else {
                throw DaemonError.invalidArgs(
                    "\(id) has no quick action '\(options.shortcutItem?.type ?? "?")' in its manifest")
            }
            options.shortcutItem = item
            options.launchedInBackground = false
        }
        try await launchApp(id, options: options)
    }

    // MARK: Registration

    /// `RegisterApp(appId) → (launchOptions, hostFacts)`.
    ///
    /// Binds the id to the caller's unique name until that name leaves the bus. For an app
    /// lifecycled launched, only that process or a member of its process group may register
    /// (`NotRegistered` otherwise); an id already bound to another live connection is refused
    /// too. Commands queued for the app before it registered follow the reply.
    ///
    /// - Parameters:
    ///   - call: The call.
    ///   - id: The app id.
    private func registerApp(_ call: BusMethodCall, _ id: String) async throws(BusError) -> [BusValue] {
        guard let sender = call.sender else {
            throw DaemonError.notRegistered("RegisterApp needs a bus connection with a unique name")
        }
        // Unknown means refused: a pid of 0 would make getpgid(0) the daemon's own process group.
        guard let callerPID = call.credentials?.pid, callerPID > 0, let callerProcess = pid_t(exactly: callerPID) else {
            throw DaemonError.notRegistered("RegisterApp needs the caller's pid, which the bus could not tell")
        }
        // A previous registration whose connection has just gone (its NameOwnerChanged not handled yet) is stale.
        if let other = registry[id]?.busName, other != sender, await hasLeftTheBus(other) {
            busNameVanished(other)
        }
        // Looked at, not yet stored: a refused call leaves nothing behind.
        let app = registry.candidate(for: id)
        if let process = app.process, process.exitStatus == nil,
            !CallerPolicy.isSameApp(callerPID: callerProcess, appPID: process.pid)
        {
            throw DaemonError.notRegistered(
                "\(id) was launched by lifecycled as pid \(process.pid); the caller (pid \(callerPID)) is not that process or in its process group"
            )
        }
        if let other = app.busName, other != sender {
            throw DaemonError.notRegistered("\(id) is already registered by \(other)")
        }
        if let bound = registry.app(registeredFrom: sender), bound.id != id {
            throw DaemonError.notRegistered("\(sender) is already registered as \(bound.id)")
        }
        if registry[id] == nil, registry.unknownCount >= Self.maximumUnknownApps {
            throw BusError(
                name: BusError.Name.limitsExceeded,
                message: "\(Self.maximumUnknownApps) apps without a manifest are registered already")
        }
        var updated = app
        var pending = updated.registered(from: sender, pid: callerPID)
        // An app starts in portrait: one that registers while the device is turned hears where it is.
        if let orientation = bridge?.statusBarOrientation, orientation != .portrait,
            let (command, arguments) = LifecycledCommand.hostEvent(.statusBarOrientation(orientation, duration: 0))
                .encode()
        {
            pending.append((command, arguments))
        }
        registry[id] = updated
        logger.info("\(id) registered from \(sender) (pid \(callerPID))", metadata: .app(id))
        publishApps()

        var facts = hostFacts.userInfo
        facts["foreground"] = .bool(updated.foreground)
        // The device's conditions as the app starts with them (no did-change notification for these).
        for event in deviceConditionFacts(for: id) {
            if let (name, arguments) = HostEventBusCodec.encode(event), let value = arguments["value"] {
                facts[name] = value
            }
        }
        // What the app's canOpenURL answers from without a round trip.
        facts["url-schemes"] = .array(store.claimedSchemes.map(UserInfoValue.string))
        if let items = store.manifest(id: id)?.shortcutItems, !items.isEmpty {
            facts["shortcut-items"] = .array(items.map(\.propertyList))
        }
        if let badge = localNotifications.badges[id] { facts["badge"] = .int(Int64(badge)) }
        sendSchedule(to: id)
        let reply: [BusValue] = [
            UserInfoBusCodec.encode(updated.launchOptions.userInfo), UserInfoBusCodec.encode(facts),
        ]
        // The commands that waited for the registration follow the reply on the wire, so the app
        // has its launch options and facts before the first of them.
        if !pending.isEmpty, let object {
            let signals = pending.map {
                [BusValue.string(id), .string($0.command), UserInfoBusCodec.encode($0.arguments)]
            }
            for arguments in signals { noteEmitted(LifecycledProtocol.Signal.command.name, arguments, to: sender) }
            let logger = self.logger
            call.afterReply {
                for arguments in signals {
                    do {
                        try object.emitSignal(
                            LifecycledProtocol.Signal.command.name, arguments: arguments, destination: sender)
                    } catch {
                        logger.warning("cannot emit a queued command: \(error)")
                    }
                }
            }
        }
        // The caller may have left between its call and now; the vanishing was then not matched to it.
        if await hasLeftTheBus(sender) {
            busNameVanished(sender)
        }
        return reply
    }

    /// Whether a unique name is known to have left the bus: the bus said `NameHasNoOwner`.
    ///
    /// Any other outcome (a timeout, a bus that does not answer) keeps the registration: another
    /// connection of the same user must not take an app id because a look-up failed.
    ///
    /// - Parameters:
    ///   - busName: A unique name such as `:1.42`.
    private func hasLeftTheBus(_ busName: String) async -> Bool {
        guard let connection else { return false }
        do {
            return try await connection.nameOwner(busName) == nil
        } catch {
            logger.notice("cannot tell whether \(busName) is still on the bus (\(error)); keeping its registration")
            return false
        }
    }

    /// The app registered under `id` from this caller, or `NotRegistered`.
    ///
    /// Every report (state, notification, background task) must come from the connection the
    /// app registered from.
    func registeredApp(_ id: String, _ call: BusMethodCall) throws(BusError) -> HostedApp {
        guard let app = registry[id], let busName = app.busName else {
            throw DaemonError.notRegistered("\(id) is not registered; call RegisterApp first")
        }
        guard busName == call.sender else {
            throw DaemonError.notRegistered("\(id) is registered by \(busName), not by \(call.sender ?? "?")")
        }
        return app
    }

    /// `ReportState(appId, state)`: records it, emits `StateChanged`, and really stops an app
    /// that reports `suspended` (also when it reports it again after a command woke it).
    ///
    /// - Parameters:
    ///   - call: The call.
    ///   - id: The app id.
    ///   - state: The state the app reports.
    private func reportState(_ call: BusMethodCall, _ id: String, _ state: ApplicationState) throws(BusError) {
        let app = try registeredApp(id, call)
        if !app.state.canTransition(to: state) && app.state != state {
            // Not refused: an app that re-registers (daemon restart) reports where it is.
            logger.debug("\(id) reports \(app.state) -> \(state), not a legal transition", metadata: .app(id))
        }
        setState(id, state)
        if state == .suspended { suspendProcess(id) }
        if state != .suspended && state != .notRunning { cancelStaleStop(id) }
    }

    // MARK: Launch on demand

    /// `OpenURL(url, options) → appId`: the app whose manifest claims the scheme opens the URL.
    ///
    /// `sourceApplication` is always the caller's identity (its app id if it is a registered
    /// app, else its executable's name), whatever the options say. A running app gets
    /// `Command open-url` (resumed first); otherwise it is launched with the URL and the source
    /// in its launch options.
    ///
    /// - Parameters:
    ///   - call: The call.
    ///   - url: The URL.
    ///   - options: The open options.
    private func openURL(_ call: BusMethodCall, _ url: URL, options: UserInfo) async throws(BusError) -> String {
        guard let manifest = store.manifest(for: url) else { throw DaemonError.noHandler(url.scheme ?? "") }
        let source = callerIdentity(call)
        let id = manifest.id
        if let app = registry[id], app.isRegistered || app.isRunning {
            var openOptions = OpenURLOptions(userInfo: options)
            openOptions.sourceApplication = source
            await send(.hostEvent(.openURL(url, openOptions)), to: id)
        } else {
            var launchOptions = LaunchOptions()
            launchOptions.url = url
            launchOptions.sourceApplication = source
            if let annotation = options[OpenURLOptions.Key.annotation.rawValue] {
                launchOptions.userInfo[LaunchOptions.Key.annotation.rawValue] = annotation
            }
            try launch(manifest, options: launchOptions)
        }
        return id
    }

    /// `Launch(appId, options)`: launches the app, or brings a running one to the foreground.
    ///
    /// An app without a manifest cannot be launched (`UnknownApp`, or `LaunchFailed` when it
    /// registered by itself); a running app gets `foreground(true)` unless the options say background.
    ///
    /// - Parameters:
    ///   - options: The launch options.
    private func launchApp(_ id: String, options: LaunchOptions) async throws(BusError) {
        guard let manifest = store.manifest(id: id) else {
            if registry[id] != nil {
                throw DaemonError.launchFailed(id, "it has no manifest (it registered by itself)")
            }
            throw DaemonError.unknownApp(id)
        }
        if let app = registry[id], app.isRegistered || app.isRunning {
            guard !options.launchedInBackground else { return }
            registry[id]?.foreground = true
            if let item = options.shortcutItem {
                // The quick action brings the app to the foreground itself (performActionFor first).
                await send(.hostEvent(.shortcutItem(item)), to: id)
            } else {
                await send(.hostEvent(.foreground(true)), to: id)
            }
            return
        }
        try launch(manifest, options: options)
    }

    // MARK: Simulation

    /// `Simulate(kind, arguments)`: refused with `SimulationDisabled` unless enabled; otherwise
    /// the event is handled as if the bridge had reported it (``Simulation``).
    ///
    /// - Parameters:
    ///   - kind: What to simulate.
    ///   - arguments: Its arguments.
    private func simulate(kind: String, arguments: UserInfo) async throws(BusError) {
        guard configuration.simulationEnabled else { throw DaemonError.simulationDisabled }
        switch try Simulation.parse(kind: kind, arguments: arguments) {
        case .terminateApp(let id):
            guard registry[id] != nil else { throw DaemonError.unknownApp(id) }
            await terminateApp(id, reason: .hostRequest)
        case .advanceFetchClock(let seconds):
            advanceFetchClock(by: seconds)
        case .fetchConditions(let conditions):
            setFetchConditions(conditions)
        case .event(.terminate(let reason)):
            // The daemon stops: reply first, it would close the connection under the reply.
            Task { @MainActor in await self.handleHostEvent(.terminate(reason)) }
        case .event(let event):
            await handleHostEvent(event)
        }
    }
}
