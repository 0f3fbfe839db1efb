import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import Glibc
import LifecycledClient
import SystemdBus

/// Local notifications, badges and the idle inhibitor.
///
/// - The schedule lives here, persisted in the state directory after every change; one
///   `CLOCK_REALTIME` alarm is armed at the earliest fire time and re-armed after it goes off,
///   after a clock set, and after a time-zone change (``localTimeZoneChanged()``).
/// - A notification that fires goes to its app as `local-notification` when the app is active;
///   otherwise it becomes a banner (`org.freedesktop.Notifications.Notify`), and with no server
///   on the bus it waits for the app's next activation.
/// - A click on a banner brings the app to the foreground (`local-notification-opened`) or
///   launches it with the notification in its launch options; an action button runs
///   `handleActionWithIdentifier` (launching the app in the background if needed).
extension LifecycleDaemon {
    /// Loads the schedule, starts the alarm and follows the notification server. Called by ``start()``.
    func startLocalNotifications() async {
        let loaded = LocalNotificationScheduleFile.load(from: local.scheduleURL)
        if let problem = loaded.problem {
            logger.error("local notifications: \(problem); the schedule is kept in memory only until it is fixed")
        }
        local.writable = loaded.writable
        local.rejected = loaded.rejected
        for (_, reason) in loaded.rejected {
            logger.error("local notifications: an entry of \(local.scheduleURL.path) was rejected and kept: \(reason)")
        }
        for notification in loaded.notifications {
            guard LifecycledProtocol.isValidAppID(notification.appID) else {
                local.rejected.append(
                    (LocalNotificationScheduleFile.entry(notification), "'\(notification.appID)' is not a valid app id")
                )
                continue
            }
            // Not advanced to now: an occurrence missed while lifecycled was not running (a repeat
            // too) is due at once and fires once.
            local.schedule.insert(notification, now: -.infinity)
        }
        if !loaded.notifications.isEmpty {
            logger.info("local notifications: \(local.schedule.count) scheduled, loaded from \(local.scheduleURL.path)")
        }
        if let loop {
            do {
                let alarm = try RealtimeAlarm()
                local.alarm = alarm
                // Read on the loop thread (the watch is level-triggered: an unread timerfd would
                // fire again at once); the main actor gets what the read found.
                let logger = self.logger
                local.alarmSource = try loop.addIO(fd: alarm.fileDescriptor, events: EventLoop.IOEvents.readable) {
                    [weak self] _ in
                    let reading: RealtimeAlarm.Reading
                    do {
                        reading = try alarm.read()
                    } catch {
                        logger.error("local notifications: \(error)")
                        return
                    }
                    guard reading != .nothing else { return }
                    Task { @MainActor in self?.alarmWentOff(reading) }
                }
            } catch {
                logger.error("local notifications: no alarm (\(error)); scheduled notifications will not fire")
            }
        }
        armAlarm()
        if let connection {
            let server = DesktopNotificationClient(connection: connection)
            do {
                try await server.start()
                local.server = server
                local.serverTask = Task { @MainActor [weak self] in
                    for await event in server.events { self?.handleServerEvent(event) }
                }
            } catch {
                logger.warning("local notifications: cannot follow the notification server: \(error)")
            }
        }
    }

    /// Stops the alarm, the server client and every idle inhibitor. Called by teardown.
    func stopLocalNotifications() {
        local.alarmSource?.cancel()
        local.alarmSource = nil
        local.alarm?.close()
        local.alarm = nil
        local.serverTask?.cancel()
        local.serverTask = nil
        local.server?.stop()
        local.server = nil
        for descriptor in local.idleInhibitors.values { descriptor.close() }
        local.idleInhibitors.removeAll()
        for cookie in local.screenSaverCookies.values { releaseScreenSaverInhibit(cookie) }
        local.screenSaverCookies.removeAll()
        local.systemBus?.close()
        local.systemBus = nil
    }

    /// `CLOCK_REALTIME` now, in seconds since the epoch (what the alarm measures against).
    static func nowSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }

    // MARK: Schedule

    /// `ScheduleNotification(appId, notification)`: validates, replaces one with the same identifier, persists.
    ///
    /// - Throws: `UnknownApp` for an app with neither a manifest nor a registration, `InvalidArgs`
    ///   for a notification that is not valid (the reason is in the message).
    func scheduleNotification(_ id: String, _ info: UserInfo) async throws(BusError) -> String {
        guard store.manifest(id: id) != nil || registry[id]?.isRegistered == true else {
            throw DaemonError.unknownApp(id)
        }
        let notification = try Self.notification(from: info, appID: id)
        local.schedule.insert(notification, now: Self.nowSeconds())
        logger.info(
            "\(id): scheduled local notification '\(notification.identifier)' (\(local.schedule.count) in all)",
            metadata: .app(id))
        armAlarm()
        sendScheduleChange(to: id, updated: [notification.notification])
        await persist()
        return notification.identifier
    }

    /// `CancelNotification(appId, identifier)`; `""` cancels all of the app's.
    func cancelNotifications(_ id: String, identifier: String) async {
        let removed: [String]
        if identifier.isEmpty {
            removed = local.schedule.removeAll(appID: id).map(\.identifier)
        } else {
            removed = local.schedule.remove(.init(appID: id, identifier: identifier)).map { [$0.identifier] } ?? []
        }
        guard !removed.isEmpty else { return }
        armAlarm()
        sendScheduleChange(to: id, removed: removed)
        await persist()
    }

    /// `ListNotifications(appId)`: each notification with `app` and `nextFireDate`; `""` lists every app's.
    func listNotifications(_ id: String) -> BusValue {
        let entries = local.schedule.notifications(appID: id.isEmpty ? nil : id)
        return .array(
            elementSignature: "a{sv}",
            entries.map { notification, instant in
                var info = UserInfo(notification.payload)
                info["app"] = .string(notification.appID)
                info["nextFireDate"] = .date(Date(timeIntervalSince1970: instant))
                if !notification.buttons.isEmpty {
                    info["actions"] = .array(
                        notification.buttons.map {
                            .dictionary(["identifier": .string($0.identifier), "title": .string($0.title)])
                        })
                }
                return UserInfoBusCodec.encode(info)
            })
    }

    /// Returns once the schedule as it is now is on disk (``LocalNotificationScheduleWriter``: a
    /// group commit, written off the main actor). A file that could not be read is left alone.
    func persist() async {
        await local.writer.persist { [weak self] in
            guard let self else { return nil }
            guard local.writable else {
                logger.warning(
                    "local notifications: not saved: \(local.scheduleURL.path) could not be read and is left as it is")
                return nil
            }
            return (local.schedule.notifications().map(\.notification), local.rejected)
        }
    }

    /// Tells a newly registered app what is scheduled for it, when anything is.
    func sendSchedule(to id: String) {
        guard registry[id]?.isRegistered == true else { return }
        let list = local.schedule.notifications(appID: id).map { $0.notification.notification.propertyList }
        guard !list.isEmpty else { return }
        Task { @MainActor in await send("scheduled-local-notifications", ["notifications": .array(list)], to: id) }
    }

    /// Tells a registered app what changed in its schedule (a fact: it does not wake a suspended
    /// app): the notifications added or replaced, and the identifiers that left.
    func sendScheduleChange(to id: String, removed: [String] = [], updated: [LocalNotification] = []) {
        guard registry[id]?.isRegistered == true, !(removed.isEmpty && updated.isEmpty) else { return }
        let arguments: UserInfo = [
            "removed": .array(removed.map(UserInfoValue.string)), "updated": .array(updated.map(\.propertyList)),
        ]
        Task { @MainActor in await send("scheduled-local-notifications", arguments, to: id) }
    }

    private func armAlarm() {
        guard let alarm = local.alarm else { return }
        do {
            try alarm.arm(at: local.schedule.earliestInstant())
        } catch {
            logger.error("local notifications: cannot arm the alarm: \(error)")
        }
    }

    /// The alarm went off (the fire time, a resume past it, or a clock set): fire what is due, re-arm.
    func alarmWentOff(_ reading: RealtimeAlarm.Reading) {
        guard local.alarm != nil else { return }
        if reading == .clockSet {
            local.clockSets += 1
            logger.info("local notifications: the clock was set; re-arming")
        }
        fireDue()
    }

    /// Fires every notification that is due now, re-arms, then persists.
    ///
    /// The deliveries go out first and the file is written after them (its `fsync` costs
    /// milliseconds): a crash in between fires those notifications again after the restart, which
    /// is better than losing them.
    func fireDue() {
        let firings = local.schedule.takeDue(now: Self.nowSeconds())
        armAlarm()
        guard !firings.isEmpty else { return }
        for firing in firings { deliver(firing.notification) }
        var gone: [String: [String]] = [:]
        for firing in firings where !firing.repeats {
            gone[firing.notification.appID, default: []].append(firing.notification.identifier)
        }
        for (id, identifiers) in gone { sendScheduleChange(to: id, removed: identifiers) }
        // Behind the deliveries' tasks on the main actor; one write for a burst of firings.
        Task { @MainActor in await persist() }
    }

    /// The local time zone changed: floating notifications move, repeats keep their local time.
    ///
    /// - Parameters:
    ///   - zone: The new zone (default: the process's, read again).
    func localTimeZoneChanged(to zone: any UTCOffsetRules = SystemLocalTime.reload()) {
        local.schedule.setTimeZone(zone, now: Self.nowSeconds())
        logger.info("local notifications: time zone now \(zone.identifier); re-armed")
        armAlarm()
        fireDue()
    }

    // MARK: Delivery

    /// Delivers a notification that fired: to the app when it is active, else as a banner.
    func deliver(_ scheduled: ScheduledLocalNotification) {
        let id = scheduled.appID
        let notification = scheduled.notification
        guard let app = registry[id] else {
            logger.notice("local notification '\(scheduled.identifier)' of \(id) dropped: the app is unknown now")
            return
        }
        if app.isRegistered, app.state == .active {
            Task { @MainActor in
                await send("local-notification", ["notification": notification.propertyList], to: id)
            }
            return
        }
        if notification.applicationIconBadgeNumber != 0 { setBadge(id, notification.applicationIconBadgeNumber) }
        Task { @MainActor in await showBanner(id, notification, buttons: scheduled.buttons) }
    }

    /// Shows a banner, or keeps the notification for the app's next activation when no server runs.
    func showBanner(_ id: String, _ notification: LocalNotification, buttons: [ScheduledLocalNotification.Button])
        async
    {
        guard let server = local.server, await server.isAvailable() else {
            keepUndelivered(id, notification, reason: "no notification server is on the bus")
            return
        }
        let key = LocalNotificationSchedule.Key(appID: id, identifier: notification.identifier)
        var banner = DesktopNotificationClient.Banner(
            notification: notification, buttons: buttons, appID: id, appName: registry[id]?.manifest?.name ?? id)
        banner.replacesID = local.bannerIDs[key] ?? 0
        do {
            let serverID = try await server.notify(banner)
            local.bannerIDs[key] = serverID
            local.banners[serverID] = LocalNotificationState.Banner(
                appID: id, notification: notification, buttons: buttons)
            local.serverAbsenceLogged = false
            logger.info(
                "\(id): local notification '\(notification.identifier)' shown as banner \(serverID)", metadata: .app(id)
            )
        } catch {
            keepUndelivered(id, notification, reason: "Notify failed: \(error)")
        }
    }

    private func keepUndelivered(_ id: String, _ notification: LocalNotification, reason: String) {
        local.undelivered[id, default: []].append(notification)
        if !local.serverAbsenceLogged {
            local.serverAbsenceLogged = true
            logger.warning(
                "local notifications: \(reason); notifications are kept and delivered when their app is next active")
        }
    }

    /// The app became active: hand it what could not be shown. Called by ``setState(_:_:)``.
    func appBecameActive(_ id: String) {
        guard let waiting = local.undelivered.removeValue(forKey: id) else { return }
        Task { @MainActor in
            for notification in waiting {
                await send("local-notification", ["notification": notification.propertyList], to: id)
            }
        }
    }

    // MARK: The server's signals

    func handleServerEvent(_ event: DesktopNotificationClient.Event) {
        switch event {
        case .activationToken(let serverID, let token):
            guard local.banners[serverID] != nil else { return }
            local.activationTokens[serverID] = token
        case .actionInvoked(let serverID, let key):
            guard let banner = local.banners[serverID] else {
                logger.debug("ActionInvoked(\(serverID), \(key)) for a banner that is not ours")
                return
            }
            let token = local.activationTokens.removeValue(forKey: serverID)
            if key == "default" {
                Task { @MainActor in await openFromBanner(banner, activationToken: token) }
            } else if let button = banner.buttons.first(where: { $0.identifier == key }) {
                Task { @MainActor in await runAction(button, of: banner, activationToken: token) }
            } else {
                logger.notice("ActionInvoked(\(serverID), '\(key)'): no such action on that banner; ignored")
            }
        case .closed(let serverID, _):
            guard let banner = local.banners.removeValue(forKey: serverID) else { return }
            local.activationTokens[serverID] = nil
            let key = LocalNotificationSchedule.Key(appID: banner.appID, identifier: banner.notification.identifier)
            if local.bannerIDs[key] == serverID { local.bannerIDs[key] = nil }
        case .serverChanged(let owner):
            // A new server knows none of the old one's banners.
            local.banners.removeAll()
            local.bannerIDs.removeAll()
            local.activationTokens.removeAll()
            if owner != nil { local.serverAbsenceLogged = false }
        }
    }

    /// A click on the banner: the app comes to the foreground with the notification, or is launched with it.
    func openFromBanner(_ banner: LocalNotificationState.Banner, activationToken: String?) async {
        let id = banner.appID
        var arguments: UserInfo = ["notification": banner.notification.propertyList]
        if let activationToken { arguments["activation-token"] = .string(activationToken) }
        if let app = registry[id], app.isRegistered || app.isRunning {
            registry[id]?.foreground = true
            await send("local-notification-opened", arguments, to: id)
            return
        }
        guard let manifest = store.manifest(id: id) else {
            logger.notice("\(id): banner clicked, but the app has no manifest to launch it from", metadata: .app(id))
            return
        }
        var options = LaunchOptions()
        options.localNotification = banner.notification
        if let activationToken { options[.activationToken] = .string(activationToken) }
        do {
            try launch(
                manifest, options: options,
                environment: activationToken.map { ["XDG_ACTIVATION_TOKEN": $0] } ?? [:])
        } catch {
            logger.error("\(id): cannot launch for a banner click: \(error)", metadata: .app(id))
        }
    }

    /// An action button: `handleActionWithIdentifier` in the app, launched in the background if needed.
    func runAction(
        _ button: ScheduledLocalNotification.Button, of banner: LocalNotificationState.Banner, activationToken: String?
    ) async {
        let id = banner.appID
        let arguments: UserInfo = [
            "identifier": .string(button.identifier), "notification": banner.notification.propertyList,
        ]
        if let app = registry[id], app.isRegistered || app.isRunning {
            if button.foreground {
                registry[id]?.foreground = true
                await send("foreground", ["value": .bool(true)], to: id)
            }
            await send("local-notification-action", arguments, to: id)
            return
        }
        guard let manifest = store.manifest(id: id) else {
            logger.notice("\(id): action chosen, but the app has no manifest to launch it from", metadata: .app(id))
            return
        }
        var options = LaunchOptions()
        options.launchedInBackground = !button.foreground
        if let activationToken, button.foreground { options[.activationToken] = .string(activationToken) }
        do {
            try launch(
                manifest, options: options,
                environment: activationToken.map { ["XDG_ACTIVATION_TOKEN": $0] } ?? [:])
            // Queued until the app registers, then sent after its launch.
            await send("local-notification-action", arguments, to: id)
        } catch {
            logger.error("\(id): cannot launch for an action: \(error)", metadata: .app(id))
        }
    }

    // MARK: Badge

    /// Sets an app's badge: `com.canonical.Unity.LauncherEntry.Update` for docks, and the app is told.
    func setBadge(_ id: String, _ count: Int) {
        guard local.badges[id, default: 0] != count else { return }
        local.badges[id] = count
        do {
            if let connection { try DesktopNotificationClient.announceBadge(count, appID: id, on: connection) }
        } catch {
            logger.warning("\(id): cannot announce the badge: \(error)", metadata: .app(id))
        }
        if registry[id]?.isRegistered == true {
            Task { @MainActor in await send("badge", ["value": .int(Int64(count))], to: id) }
        }
    }

    // MARK: Idle inhibitor

    /// `SetIdleTimerDisabled(appId, disabled)` from the registered app.
    func setIdleTimerDisabled(_ id: String, _ disabled: Bool) {
        if disabled { local.idleTimerDisabled.insert(id) } else { local.idleTimerDisabled.remove(id) }
        updateIdleInhibitor(id)
    }

    /// Holds a logind `idle` block inhibitor for an app exactly while it wants one and is active.
    /// Called on every state change of the app and when it leaves.
    func updateIdleInhibitor(_ id: String) {
        let wanted =
            local.idleTimerDisabled.contains(id) && registry[id]?.isRegistered == true
            && registry[id]?.state == .active
        local.idleGeneration[id, default: 0] += 1
        if !wanted {
            if let descriptor = local.idleInhibitors.removeValue(forKey: id) {
                descriptor.close()
                logger.info("\(id): idle inhibitor released", metadata: .app(id))
            }
            if let cookie = local.screenSaverCookies.removeValue(forKey: id) { releaseScreenSaverInhibit(cookie) }
            if registry[id]?.isRegistered != true { local.idleTimerDisabled.remove(id) }
            return
        }
        let generation = local.idleGeneration[id, default: 0]
        if local.screenSaverCookies[id] == nil { takeScreenSaverInhibit(for: id, generation: generation) }
        guard local.idleInhibitors[id] == nil else { return }
        Task { @MainActor in
            do {
                let descriptor = try await takeIdleInhibitor(for: id)
                // The wish ended (or changed and changed back) while Inhibit was out: a later
                // update took over; this fd is not needed. Nor after the daemon stopped.
                guard phase == .running, local.idleGeneration[id] == generation, local.idleInhibitors[id] == nil
                else {
                    descriptor.close()
                    return
                }
                local.idleInhibitors[id] = descriptor
                logger.info("\(id): idle inhibitor held", metadata: .app(id))
            } catch {
                logger.warning("\(id): cannot inhibit idle: \(error)", metadata: .app(id))
            }
        }
    }

    /// The desktop's own idle inhibition (``IdleInhibitor/takeScreenSaver(on:who:why:)``), beside logind's.
    private func takeScreenSaverInhibit(for id: String, generation: Int) {
        guard let connection else { return }
        Task { @MainActor in
            do {
                guard
                    let cookie = try await IdleInhibitor.takeScreenSaver(
                        on: connection, who: registry[id]?.manifest?.name ?? id, why: "\(id) disabled the idle timer")
                else { return }
                guard phase == .running, local.idleGeneration[id] == generation, local.screenSaverCookies[id] == nil
                else {
                    releaseScreenSaverInhibit(cookie)
                    return
                }
                local.screenSaverCookies[id] = cookie
                logger.info("\(id): screensaver inhibited (cookie \(cookie))", metadata: .app(id))
            } catch {
                logger.warning("\(id): cannot inhibit the screensaver: \(error)", metadata: .app(id))
            }
        }
    }

    func releaseScreenSaverInhibit(_ cookie: UInt32) {
        guard let connection else { return }
        IdleInhibitor.releaseScreenSaver(cookie, on: connection, logger: logger)
    }

    private func takeIdleInhibitor(for id: String) async throws -> BusFileDescriptor {
        // One connection, opened by the first request; the others wait for the same one.
        if local.systemBus == nil || local.systemBus?.isOpen == false, local.systemBusOpening == nil {
            guard let loop else { throw DaemonError.launchFailed(id, "lifecycled is stopping") }
            let address = configuration.systemBus
            local.systemBusOpening = Task { @MainActor in
                try await BusConnection(address, loop: loop, description: "lifecycled-inhibit", timeout: .seconds(5))
            }
        }
        if let opening = local.systemBusOpening {
            defer { local.systemBusOpening = nil }
            let opened = try await opening.value
            if local.systemBus !== opened {
                local.systemBus?.close()
                local.systemBus = opened
            }
        }
        guard phase == .running, let bus = local.systemBus else {
            throw DaemonError.launchFailed(id, "lifecycled is stopping")
        }
        return try await IdleInhibitor.takeLogind(
            on: bus, who: id, why: "\(id) disabled the idle timer while active")
    }
}

extension LifecycleDaemon {
    /// A notification from a method's `a{sv}`: its property list, and `actions` (`identifier`,
    /// `title`, `foreground`) as the banner's buttons.
    ///
    /// - Throws: `InvalidArgs` naming what is wrong.
    static func notification(from info: UserInfo, appID: String) throws(BusError) -> ScheduledLocalNotification {
        var payload = info.values
        var buttons: [ScheduledLocalNotification.Button] = []
        for value in payload.removeValue(forKey: "actions")?.arrayValue ?? [] {
            guard let button = ScheduledLocalNotification.Button(propertyList: value) else {
                throw DaemonError.invalidArgs("an action needs an identifier and a title")
            }
            buttons.append(button)
        }
        do {
            return try ScheduledLocalNotification(appID: appID, payload: payload, buttons: buttons, scheduledAt: Date())
        } catch {
            throw DaemonError.invalidArgs("notification rejected: \(error.message)")
        }
    }

    /// `PresentNotification(appId, notification)`: the app shows a notification now; it is not
    /// active (an active app calls its own delegate), so it becomes a banner.
    func presentNotification(_ id: String, _ info: UserInfo) throws(BusError) {
        let scheduled = try Self.notification(from: info, appID: id)
        deliver(scheduled)
    }
}
