import AppLifecycle
import AppLifecycleSystemd
import DurableState
import FoundationEssentials
import LifecycledProtocol
import LocalNotificationEngine
import SystemdBus

/// Local notifications and badges: the daemon's side of ``LocalNotificationCenter``, the engine
/// that owns the schedule, its file, the alarm and the banners.
///
/// What stays here is the daemon's: the D-Bus methods (`ScheduleNotification`,
/// `CancelNotification`, `ListNotifications`, `PresentNotification`, `SetBadge`) with their checks
/// and error names, and the center's host (``LocalNotificationCenterHost``): where a hosted app
/// is (the registry), how a delivery reaches it (a `Command`, queued until a launched app
/// registers), and how it is launched (its manifest, with the activation token in its environment).
extension LifecycleDaemon {
    /// The center's configuration: the schedule in the state directory, a failed write retried
    /// with the daemon's backoff for state writes.
    static func localNotificationConfiguration(stateDirectory: String) -> LocalNotificationCenter.Configuration {
        LocalNotificationCenter.Configuration(
            scheduleURL: URL(fileURLWithPath: stateDirectory).appendingPathComponent(
                LocalNotificationScheduleFile.fileName),
            retryDelay: { failures in
                var backoff = Backoff.stateWrite
                var delay = backoff.next()
                for _ in 1..<max(failures, 1) { delay = backoff.next() }
                return delay
            })
    }

    /// Loads the schedule, follows the notification server, then starts the alarm. Called by ``start()``.
    func startLocalNotifications() async {
        await localNotifications.start(connection: connection, loop: loop)
    }

    /// Stops the center and every idle inhibitor. Called by teardown.
    func stopLocalNotifications() {
        localNotifications.stop()
        stopIdleInhibitors()
    }

    // MARK: Methods

    /// `ScheduleNotification(appId, notification)`: validates, replaces one with the same
    /// identifier (withdrawing its banner and stopping its delivery), and replies once the
    /// schedule is on disk (``LocalNotificationCenter/schedule(_:)``).
    ///
    /// - Throws: `UnknownApp` for an app with neither a manifest nor a registration, `InvalidArgs`
    ///   for a notification that is not valid (the reason is in the message), `LimitsExceeded`
    ///   past the app's or the total budget (``LocalNotificationBudget``), `NotSaved` when the
    ///   file could not be written (then nothing changed: the notification is not scheduled).
    func scheduleNotification(_ id: String, _ info: UserInfo) async throws(BusError) -> String {
        localNotifications.ensureLoaded()
        guard store.manifest(id: id) != nil || registry[id]?.isRegistered == true else {
            throw DaemonError.unknownApp(id)
        }
        let notification = try Self.notification(from: info, appID: id)
        do {
            try await localNotifications.schedule(notification)
        } catch {
            throw busError(error, id: id, identifier: notification.identifier, "not scheduled")
        }
        return notification.identifier
    }

    /// `CancelNotification(appId, identifier)`; `""` cancels all of the app's: they leave the
    /// schedule, their banners are withdrawn (`CloseNotification`) and their kept copies dropped.
    ///
    /// - Throws: `UnknownNotification` for an identifier the app has nowhere; `NotSaved` when
    ///   the file could not be written (cancelled in memory; written by the next retry).
    func cancelNotifications(_ id: String, identifier: String) async throws(BusError) {
        do {
            try await localNotifications.cancel(id, identifier: identifier.isEmpty ? nil : identifier)
        } catch {
            throw busError(
                error, id: id, identifier: identifier,
                "cancelled, but not saved yet (it may fire after a restart until it is)")
        }
    }

    /// The D-Bus error for a refusal of the center.
    private func busError(
        _ refusal: LocalNotificationCenter.Refusal, id: String, identifier: String, _ what: String
    ) -> BusError {
        if refusal.code == .invalid {
            return DaemonError.invalidArgs("notification rejected: \(refusal.message)")
        } else if refusal.code == .limitsExceeded {
            return BusError(name: BusError.Name.limitsExceeded, message: "not scheduled: \(refusal.message)")
        } else if let failure = refusal.failure {
            return Self.notSaved(failure, what, directory: stateDirectory)
        } else {
            return BusError(
                name: LifecycledProtocol.ErrorName.unknownNotification,
                message:
                    "\(id) has no notification '\(identifier.prefix(255))': none is scheduled, on screen or kept for the app's next activation"
            )
        }
    }

    /// `NotSaved`, with what to do about it.
    static func notSaved(_ failure: GroupCommitFile.Failure, _ what: String, directory: String)
        -> BusError
    {
        let advice =
            failure.isOutOfSpace
            ? "the disk is full: free space in \(directory), then try again (lifecycled writes again by itself)"
            : "try again once the problem is fixed"
        return BusError(name: LifecycledProtocol.ErrorName.notSaved, message: "\(what): \(failure); \(advice)")
    }

    /// `ListNotifications(appId)`: each notification with `app` and `nextFireDate`; `""` lists every app's.
    ///
    /// At most ``LifecycledProtocol/Limits/scheduleBytes`` of entries (the budget), a quarter of
    /// the smallest bus message limit.
    func listNotifications(_ id: String) -> BusValue {
        localNotifications.ensureLoaded()
        let entries = localNotifications.schedule.notifications(appID: id.isEmpty ? nil : id)
        return .array(
            elementSignature: "a{sv}",
            entries.map { notification, instant in
                UserInfoBusCodec.encode(LocalNotificationCenter.listEntry(notification, instant: instant))
            })
    }

    /// `PresentNotification(appId, notification)`: the app shows a notification now; it is not
    /// active (an active app calls its own delegate), so it becomes a banner. With `remote: true`
    /// it is a push's banner (its `userInfo` the payload): a click or an action on it reaches the
    /// app through the remote path (``LocalNotificationCenter/Delivery/remoteOpened(_:activationToken:)``).
    func presentNotification(_ id: String, _ info: UserInfo) throws(BusError) {
        localNotifications.present(try Self.notification(from: info, appID: id))
    }

    /// `SetBadge(appId, count)` from the registered app.
    func setBadge(_ id: String, _ count: Int) {
        localNotifications.setBadge(id, count)
    }

    /// A notification from a method's `a{sv}`: its property list, `actions` (`identifier`,
    /// `title`, `foreground`) as the banner's buttons, and `remote` (a boolean: a push's banner,
    /// which only `PresentNotification` accepts).
    ///
    /// - Throws: `InvalidArgs` naming what is wrong.
    static func notification(from info: UserInfo, appID: String) throws(BusError) -> ScheduledLocalNotification {
        var payload = info.values
        let remote = payload.removeValue(forKey: "remote")
        if let remote, remote.boolValue == nil { throw DaemonError.invalidArgs("'remote' must be a boolean") }
        var buttons: [ScheduledLocalNotification.Button] = []
        for value in payload.removeValue(forKey: "actions")?.arrayValue ?? [] {
            guard let button = ScheduledLocalNotification.Button(propertyList: value) else {
                throw DaemonError.invalidArgs("an action needs an identifier and a title")
            }
            buttons.append(button)
        }
        do {
            return try ScheduledLocalNotification(
                appID: appID, payload: payload, buttons: buttons, scheduledAt: Date(),
                isRemote: remote?.boolValue ?? false)
        } catch {
            throw DaemonError.invalidArgs("notification rejected: \(error.message)")
        }
    }

    // MARK: Host events

    /// Tells a newly registered app what is scheduled for it, when anything is.
    ///
    /// One `Command`: at most ``LifecycledProtocol/Limits/scheduleBytesPerApp`` of notifications.
    func sendSchedule(to id: String) {
        guard registry[id]?.isRegistered == true else { return }
        let list = localNotifications.notifications(of: id)
        guard !list.isEmpty else { return }
        Task { @MainActor in await send(.hostEvent(.scheduledLocalNotifications(list)), to: id) }
    }

    /// The local time zone changed: floating notifications move, repeats keep their local time.
    ///
    /// - Parameters:
    ///   - zone: The new zone (default: the process's, read again).
    func localTimeZoneChanged(to zone: any UTCOffsetRules = SystemLocalTime.reload()) {
        localNotifications.timeZoneChanged(to: zone)
    }

    /// The app became active: hand it what could not be shown. Called by ``setState(_:_:)``.
    func appBecameActive(_ id: String) {
        localNotifications.appBecameActive(id)
    }
}

extension LifecycleDaemon: LocalNotificationCenterHost {
    /// Where a hosted app is: unknown, not running, launched and not registered yet, registered, active.
    package func presence(of appID: String) -> LocalNotificationCenter.AppPresence {
        guard let app = registry[appID] else { return .unknown }
        if app.isRegistered { return app.state == .active ? .active : .running }
        return app.isRunning ? .starting : .notRunning
    }

    /// The manifest's name, else the id.
    package func displayName(of appID: String) -> String {
        registry[appID]?.manifest?.name ?? appID
    }

    /// A `Command` to the app (queued until a launched app registers); a click or a foreground
    /// action marks it as in the foreground.
    package func deliver(_ delivery: LocalNotificationCenter.Delivery, to id: String) async {
        switch delivery {
        case .notification(let notification):
            await send(.hostEvent(.localNotification(notification)), to: id)
        case .opened(let notification, _):
            // The activation token is for the compositor (the launch's environment); the app's
            // decoder never read it from the command, so it is not sent.
            registry[id]?.foreground = true
            await send(.hostEvent(.localNotificationOpened(notification)), to: id)
        case .foreground:
            registry[id]?.foreground = true
            await send(.hostEvent(.foreground(true)), to: id)
        case .action(let identifier, let notification):
            await send(.hostEvent(.localNotificationAction(identifier: identifier, notification: notification)), to: id)
        case .remoteOpened(let payload, _):
            registry[id]?.foreground = true
            await send(.hostEvent(.remoteNotificationOpened(payload)), to: id)
        case .remoteAction(let identifier, let payload):
            await send(.hostEvent(.remoteNotificationAction(identifier: identifier, payload: payload)), to: id)
        case .badge(let count):
            await send(.hostEvent(.applicationIconBadgeNumber(count)), to: id)
        case .scheduleChanged(let removed, let updated):
            // A fact: it does not wake a suspended app (LifecycledCommand.resumesSuspendedApp).
            await send(.scheduleChanged(removed: removed, updated: updated), to: id)
        }
    }

    /// Launches the app from its manifest, with the activation token in its environment.
    package func launch(_ appID: String, options: LaunchOptions, activationToken: String?) throws {
        guard let manifest = store.manifest(id: appID) else {
            throw DaemonError.launchFailed(appID, "the app has no manifest to launch it from")
        }
        try launch(
            manifest, options: options, environment: activationToken.map { ["XDG_ACTIVATION_TOKEN": $0] } ?? [:])
    }
}
