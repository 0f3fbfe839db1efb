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
    /// Loads the schedule, follows the notification server, then starts the alarm. Called by ``start()``.
    ///
    /// The server's client comes first: notifications missed while lifecycled was not running
    /// fire as soon as the alarm is armed, and must find the server (or know there is none).
    func startLocalNotifications() async {
        ensureScheduleLoaded()
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
        guard phase == .running else { return }
        if let loop {
            do {
                let alarm = try RealtimeAlarm()
                // Read on the loop thread (the watch is level-triggered: an unread timerfd would
                // fire again at once); the main actor gets what the read found.
                let logger = self.logger
                let source: EventSourceToken
                do {
                    source = try await loop.addIO(fd: alarm.fileDescriptor, events: EventLoop.IOEvents.readable) {
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
                    alarm.close()
                    throw error
                }
                // The daemon may have stopped while the watch was added: then nothing stays armed.
                guard phase == .running else {
                    source.cancel()
                    alarm.close()
                    return
                }
                local.alarm = alarm
                local.alarmSource = source
            } catch {
                logger.error("local notifications: no alarm (\(error)); scheduled notifications will not fire")
            }
        }
        armAlarm()
    }

    /// Reads the schedule file, once: at start, or at the first call that needs it if one comes
    /// before (the bus name is owned before ``startLocalNotifications()`` runs).
    ///
    /// - A file that cannot be read as a schedule is set aside as `<name>.corrupt-<unix time>`
    ///   and a new one started; one of a newer version is left alone (nothing can be scheduled
    ///   until it is moved away, and each `ScheduleNotification` says so).
    /// - Every entry is checked as `ScheduleNotification` checks a notification (its size, its
    ///   app's and the total budget): one that fails is refused with a log line, the rest load,
    ///   and the file as it was is kept beside as `<name>.refused-<unix time>`.
    func ensureScheduleLoaded() {
        guard !local.loaded else { return }
        local.loaded = true
        let url = local.scheduleURL
        var loaded = LocalNotificationScheduleFile.load(from: url)
        if let problem = loaded.problem {
            if loaded.isCorrupt {
                if let kept = AtomicFile.setAside(url) {
                    logger.error("local notifications: \(problem); set aside as \(kept), a new schedule is started")
                    loaded = LocalNotificationScheduleFile.Loaded()
                } else {
                    logger.error(
                        "local notifications: \(problem), and it cannot be set aside; nothing can be scheduled until it is moved away"
                    )
                }
            } else {
                logger.error(
                    "local notifications: \(problem); nothing can be scheduled until it is moved away or this lifecycled is updated"
                )
            }
        }
        local.writable = loaded.writable
        var refused = 0
        var rejectedBytes = 0
        for (entry, reason) in loaded.rejected {
            // Kept verbatim, unless it is larger than any notification can be, or all of them
            // together are larger than a whole schedule: then it is refused.
            let size = UserInfoBusCodec.wireSize(of: UserInfo(["entry": entry]))
            guard size <= 2 * LifecycledProtocol.Limits.userInfoBytes,
                rejectedBytes + size <= LifecycledProtocol.Limits.scheduleBytes
            else {
                logger.error(
                    "local notifications: a rejected entry of \(url.path) (\(reason)) is \(size) bytes, \(rejectedBytes) kept already; refused at load"
                )
                refused += 1
                continue
            }
            rejectedBytes += size
            local.rejected.append((entry, reason))
            logger.error("local notifications: an entry of \(url.path) was rejected and kept: \(reason)")
        }
        for notification in loaded.notifications {
            let key = notification.key
            if let problem = admissionProblem(notification) {
                logger.error(
                    "local notifications: '\(notification.identifier.prefix(64))' of \(notification.appID.prefix(64)) in \(url.path) refused at load: \(problem)"
                )
                refused += 1
                continue
            }
            // Not advanced to now: an occurrence missed while lifecycled was not running (a repeat
            // too) is due at once and fires once.
            local.schedule.insert(notification, now: -.infinity)
            local.budget.set(key, Self.entryBytes(notification))
        }
        for notification in loaded.undelivered {
            if let problem = admissionProblem(notification, budget: false) {
                logger.error(
                    "local notifications: kept '\(notification.identifier.prefix(64))' of \(notification.appID.prefix(64)) in \(url.path) refused at load: \(problem)"
                )
                refused += 1
                continue
            }
            keep(notification)
        }
        if !loaded.notifications.isEmpty || !loaded.undelivered.isEmpty {
            logger.info(
                "local notifications: \(local.schedule.count) scheduled, \(local.undelivered.values.map(\.count).reduce(0, +)) kept for their app's activation, loaded from \(url.path)"
            )
        }
        if refused > 0 {
            // The file as it was stays beside (a hard link: the next write replaces the name only),
            // under a name of its own even when an earlier start refused entries in the same second.
            if let copy = AtomicFile.keepCopy(url, reason: "refused") {
                logger.error(
                    "local notifications: \(refused) entries refused at load; the file as it was is kept as \(copy)")
            } else {
                logger.error(
                    "local notifications: \(refused) entries refused at load; no copy kept (\(String(cString: strerror(errno))))"
                )
            }
            Task { @MainActor in await persist() }
        }
    }

    /// Why a notification may not be scheduled: the checks of `ScheduleNotification` (its
    /// userInfo's limits, its app id, and with `budget` its app's and the total budget), or `nil`.
    func admissionProblem(_ notification: ScheduledLocalNotification, budget: Bool = true) -> String? {
        guard LifecycledProtocol.isValidAppID(notification.appID) else {
            return "'\(notification.appID.prefix(64))' is not a valid app id"
        }
        var info = UserInfo(notification.payload)
        if !notification.buttons.isEmpty { info["actions"] = .array(notification.buttons.map(\.propertyList)) }
        do {
            try LifecycledProtocol.validate(info)
        } catch {
            return "\(error)"
        }
        guard budget else { return nil }
        let key = notification.key
        return local.budget.excess(Self.entryBytes(notification), for: key)
    }

    /// A notification's entry in `ListNotifications`: its property list, `app`, `nextFireDate`
    /// and `actions`.
    static func listEntry(_ notification: ScheduledLocalNotification, instant: Double) -> UserInfo {
        var info = UserInfo(notification.payload)
        info["app"] = .string(notification.appID)
        info["nextFireDate"] = .date(Date(timeIntervalSince1970: instant))
        if !notification.buttons.isEmpty {
            info["actions"] = .array(
                notification.buttons.map {
                    .dictionary(["identifier": .string($0.identifier), "title": .string($0.title)])
                })
        }
        return info
    }

    /// The bytes a notification counts for in ``LocalNotificationBudget``: its `ListNotifications` entry's D-Bus form.
    static func entryBytes(_ notification: ScheduledLocalNotification) -> Int {
        UserInfoBusCodec.wireSize(of: listEntry(notification, instant: 0))
    }

    /// Stops the alarm, the server client and every idle inhibitor. Called by teardown.
    func stopLocalNotifications() {
        local.alarmSource?.cancel()
        local.alarmSource = nil
        local.alarm?.close()
        local.alarm = nil
        local.serverTask?.cancel()
        local.serverTask = nil
        local.retryTask?.cancel()
        local.retryTask = nil
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

    /// `ScheduleNotification(appId, notification)`: validates, replaces one with the same
    /// identifier (withdrawing its banner and stopping its delivery), and replies once the
    /// schedule is on disk.
    ///
    /// The notification is saved before it is scheduled (``LocalNotificationState/pending``): it
    /// cannot fire while the write is out, so a `NotSaved` reply is the whole truth (it was never
    /// delivered either), and what it replaces stands, and may fire, until the write succeeded.
    ///
    /// - Throws: `UnknownApp` for an app with neither a manifest nor a registration, `InvalidArgs`
    ///   for a notification that is not valid (the reason is in the message), `LimitsExceeded`
    ///   past the app's or the total budget (``LocalNotificationBudget``), `NotSaved` when the
    ///   file could not be written (then nothing changed: the notification is not scheduled).
    func scheduleNotification(_ id: String, _ info: UserInfo) async throws(BusError) -> String {
        ensureScheduleLoaded()
        guard store.manifest(id: id) != nil || registry[id]?.isRegistered == true else {
            throw DaemonError.unknownApp(id)
        }
        let notification = try Self.notification(from: info, appID: id)
        let key = LocalNotificationSchedule.Key(appID: id, identifier: notification.identifier)
        let bytes = Self.entryBytes(notification)
        if let excess = local.budget.excess(bytes, for: key) {
            throw BusError(name: BusError.Name.limitsExceeded, message: "not scheduled: \(excess)")
        }
        let token = local.nextPendingToken
        local.nextPendingToken += 1
        local.pending[key] = (token, notification)
        local.budget.set(key, bytes)
        let failure = await persist()
        guard local.pending[key]?.token == token else {
            // A later call for this identifier (a cancel, another schedule) took over during the
            // write, and its own write says what stands; this one changes nothing more.
            if let failure { throw Self.notSaved(failure, "not scheduled", directory: local.stateDirectory) }
            return notification.identifier
        }
        local.pending[key] = nil
        if let failure {
            // Nothing changed: the budget counts what is scheduled under this identifier again.
            local.budget.set(key, local.schedule.entry(key).map { Self.entryBytes($0.notification) })
            logger.warning(
                "\(id): local notification '\(notification.identifier)' not scheduled: \(failure)", metadata: .app(id))
            throw Self.notSaved(failure, "not scheduled", directory: local.stateDirectory)
        }
        local.schedule.insert(notification, now: Self.nowSeconds())
        local.budget.set(key, bytes)
        // What it replaces is no longer announced, nor on its way to a banner (this one cannot
        // have fired yet: every banner and delivery of this identifier is the old one's).
        for ticket in local.delivering.filter({ $0.value.key == key }).map(\.key) {
            local.delivering[ticket] = nil
        }
        if let replacedBanner = local.bannerIDs.removeValue(forKey: key) { withdrawBanner(replacedBanner) }
        armAlarm()
        sendScheduleChange(to: id, updated: [notification.notification])
        logger.info(
            "\(id): scheduled local notification '\(notification.identifier)' (\(local.schedule.count) in all)",
            metadata: .app(id))
        return notification.identifier
    }

    /// `NotSaved`, with what to do about it.
    static func notSaved(_ failure: LocalNotificationScheduleWriter.Failure, _ what: String, directory: String)
        -> BusError
    {
        let advice =
            failure.isOutOfSpace
            ? "the disk is full: free space in \(directory), then try again (lifecycled writes again by itself)"
            : "try again once the problem is fixed"
        return BusError(name: LifecycledProtocol.ErrorName.notSaved, message: "\(what): \(failure); \(advice)")
    }

    /// `CancelNotification(appId, identifier)`; `""` cancels all of the app's: they leave the
    /// schedule, their banners are withdrawn (`CloseNotification`) and their kept copies dropped.
    ///
    /// - Throws: `UnknownNotification` for an identifier the app has nowhere; `NotSaved` when
    ///   the file could not be written (cancelled in memory; written by the next retry).
    func cancelNotifications(_ id: String, identifier: String) async throws(BusError) {
        ensureScheduleLoaded()
        let matches = { (other: String) in identifier.isEmpty || other == identifier }
        let removed: [ScheduledLocalNotification]
        if identifier.isEmpty {
            removed = local.schedule.removeAll(appID: id)
        } else {
            removed = local.schedule.remove(.init(appID: id, identifier: identifier)).map { [$0] } ?? []
        }
        for notification in removed {
            local.budget.set(.init(appID: id, identifier: notification.identifier), nil)
        }
        // Being saved by a `ScheduleNotification` still out: that call then schedules nothing.
        let pendingRemoved = local.pending.keys.filter { $0.appID == id && matches($0.identifier) }
        for key in pendingRemoved {
            local.pending[key] = nil
            local.budget.set(key, local.schedule.entry(key).map { Self.entryBytes($0.notification) })
        }
        // Fired and on their way to a banner: the delivery stops (withdrawing the banner it gets).
        let deliveriesRemoved = local.delivering.filter { $0.value.appID == id && matches($0.value.identifier) }
            .map(\.key)
        for ticket in deliveriesRemoved { local.delivering[ticket] = nil }
        let banners = local.bannerIDs.filter { $0.key.appID == id && matches($0.key.identifier) }
        for (key, serverID) in banners {
            local.bannerIDs[key] = nil
            withdrawBanner(serverID)
        }
        let keptBefore = local.undelivered[id]?.count ?? 0
        if var kept = local.undelivered[id] {
            let gone = kept.filter { matches($0.notification.identifier) }
            kept.removeAll { matches($0.notification.identifier) }
            local.keptBytes -= gone.reduce(0) { $0 + $1.bytes }
            local.undelivered[id] = kept.isEmpty ? nil : kept
        }
        let keptRemoved = keptBefore - (local.undelivered[id]?.count ?? 0)
        let found = !removed.isEmpty || !pendingRemoved.isEmpty || !deliveriesRemoved.isEmpty || keptRemoved > 0
        guard found || !banners.isEmpty else {
            guard identifier.isEmpty else {
                throw BusError(
                    name: LifecycledProtocol.ErrorName.unknownNotification,
                    message:
                        "\(id) has no notification '\(identifier.prefix(255))': none is scheduled, on screen or kept for the app's next activation"
                )
            }
            return
        }
        armAlarm()
        sendScheduleChange(to: id, removed: removed.map(\.identifier))
        guard found else { return }
        if let failure = await persist() {
            throw Self.notSaved(
                failure, "cancelled, but not saved yet (it may fire after a restart until it is)",
                directory: local.stateDirectory)
        }
    }

    /// `ListNotifications(appId)`: each notification with `app` and `nextFireDate`; `""` lists every app's.
    ///
    /// At most ``LifecycledProtocol/Limits/scheduleBytes`` of entries (the budget), a quarter of
    /// the smallest bus message limit.
    func listNotifications(_ id: String) -> BusValue {
        ensureScheduleLoaded()
        let entries = local.schedule.notifications(appID: id.isEmpty ? nil : id)
        return .array(
            elementSignature: "a{sv}",
            entries.map { notification, instant in
                UserInfoBusCodec.encode(Self.listEntry(notification, instant: instant))
            })
    }

    /// Returns once the schedule and the kept notifications as they are now are on disk (`nil`),
    /// or with why not (``LocalNotificationScheduleWriter``: a group commit, written off the main
    /// actor). After a failure the write is retried with a backoff until one succeeds, so what
    /// waits in memory (a firing's removal, a kept notification) reaches the disk when space returns.
    @discardableResult
    func persist() async -> LocalNotificationScheduleWriter.Failure? {
        ensureScheduleLoaded()
        let failure = await local.writer.persist { [weak self] in
            guard let self else { return .failure(.init("lifecycled is stopping")) }
            guard local.writable else {
                return .failure(
                    .init(
                        "\(local.scheduleURL.path) is not a schedule this lifecycled may replace (see the log); move it away"
                    ))
            }
            let kept = local.undelivered.keys.sorted().flatMap {
                local.undelivered[$0, default: []].map(\.notification)
            }
            // A notification being saved replaces what its identifier has in the schedule and on
            // its way to a banner (if this write fails, nothing is written; the next one has them).
            let pending = local.pending
            let scheduled =
                local.schedule.notifications().map(\.notification).filter { pending[$0.key] == nil }
                + pending.keys.sorted().compactMap { pending[$0]?.notification }
            let delivering = local.delivering.keys.sorted().compactMap { local.delivering[$0] }
                .filter { pending[$0.key] == nil }
            return .success(.init(notifications: scheduled, undelivered: kept + delivering, rejected: local.rejected))
        }
        if failure == nil {
            local.retryBackoff.reset()
            local.retryTask?.cancel()
            local.retryTask = nil
        } else if local.writable, local.retryTask == nil, phase == .running {
            let delay = local.retryBackoff.next()
            local.retryTask = Task { @MainActor [weak self] in
                try? await Task.sleep(for: delay)
                guard let self, !Task.isCancelled else { return }
                local.retryTask = nil
                await persist()
            }
        }
        return failure
    }

    /// Tells a newly registered app what is scheduled for it, when anything is.
    ///
    /// One `Command`: at most ``LifecycledProtocol/Limits/scheduleBytesPerApp`` of notifications.
    func sendSchedule(to id: String) {
        ensureScheduleLoaded()
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
            // Unless a call is saving a replacement: the budget counts that one.
            let key = firing.notification.key
            if local.pending[key] == nil { local.budget.set(key, nil) }
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
        ensureScheduleLoaded()
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
        let ticket = local.nextDeliveryTicket
        local.nextDeliveryTicket += 1
        local.delivering[ticket] = scheduled
        Task { @MainActor in await showBanner(scheduled, ticket: ticket) }
    }

    /// Shows a banner, or keeps the notification for the app's next activation when no server runs.
    ///
    /// Until the server has it, the notification is written as kept (``LocalNotificationState/delivering``).
    /// After each await the ticket is looked at again: a cancel or a replacement meanwhile removed
    /// it, and then nothing is kept, and a banner the server made meanwhile is withdrawn at once.
    func showBanner(_ scheduled: ScheduledLocalNotification, ticket: UInt64) async {
        let id = scheduled.appID
        let notification = scheduled.notification
        let server = local.server
        let available = await server?.isAvailable() ?? false
        guard local.delivering[ticket] != nil else { return }
        guard let server, available else {
            local.delivering[ticket] = nil
            keepUndelivered(scheduled, reason: "no notification server is on the bus")
            return
        }
        let key = LocalNotificationSchedule.Key(appID: id, identifier: notification.identifier)
        var banner = DesktopNotificationClient.Banner(
            notification: notification, buttons: scheduled.buttons, appID: id,
            appName: registry[id]?.manifest?.name ?? id)
        banner.replacesID = local.bannerIDs[key] ?? 0
        do {
            let serverID = try await server.notify(banner)
            guard local.delivering[ticket] != nil else {
                server.close(serverID)
                logger.info(
                    "\(id): local notification '\(notification.identifier)' was cancelled or replaced while banner \(serverID) was made; withdrawn",
                    metadata: .app(id))
                return
            }
            local.bannerIDs[key] = serverID
            local.banners[serverID] = LocalNotificationState.Banner(
                appID: id, notification: notification, buttons: scheduled.buttons)
            local.serverAbsenceLogged = false
            logger.info(
                "\(id): local notification '\(notification.identifier)' shown as banner \(serverID)", metadata: .app(id)
            )
            local.delivering[ticket] = nil
            await persist()
        } catch {
            guard local.delivering.removeValue(forKey: ticket) != nil else { return }
            keepUndelivered(scheduled, reason: "Notify failed: \(error)")
        }
    }

    private func keepUndelivered(_ scheduled: ScheduledLocalNotification, reason: String) {
        if !local.serverAbsenceLogged {
            local.serverAbsenceLogged = true
            logger.warning(
                "local notifications: \(reason); notifications are kept and delivered when their app is next active")
        }
        keep(scheduled)
        Task { @MainActor in await persist() }
    }

    /// Adds a notification to those kept for its app's activation, within the bounds
    /// (``LifecycledProtocol/Limits/keptNotificationsPerApp``, ``LifecycledProtocol/Limits/keptBytesPerApp``,
    /// ``LifecycledProtocol/Limits/keptBytes``): beyond them the oldest of the app, or of the app
    /// that keeps the most, is dropped with a log line.
    func keep(_ scheduled: ScheduledLocalNotification) {
        typealias Limits = LifecycledProtocol.Limits
        let id = scheduled.appID
        let bytes = UserInfoBusCodec.wireSize(of: UserInfo(scheduled.payload))
        local.undelivered[id, default: []].append(.init(notification: scheduled, bytes: bytes))
        local.keptBytes += bytes
        func dropOldest(of app: String, _ why: String) {
            guard let oldest = local.undelivered[app]?.first else { return }
            local.undelivered[app]?.removeFirst()
            if local.undelivered[app]?.isEmpty == true { local.undelivered[app] = nil }
            local.keptBytes -= oldest.bytes
            logger.warning(
                "\(app): kept local notification '\(oldest.notification.identifier)' dropped, the oldest of \(why)",
                metadata: .app(app))
        }
        while let kept = local.undelivered[id], kept.count > 1,
            kept.count > Limits.keptNotificationsPerApp || kept.reduce(0, { $0 + $1.bytes }) > Limits.keptBytesPerApp
        {
            dropOldest(of: id, "more than \(Limits.keptNotificationsPerApp) or \(Limits.keptBytesPerApp) bytes kept")
        }
        while local.keptBytes > Limits.keptBytes,
            let largest = local.undelivered.max(by: {
                $0.value.reduce(0) { $0 + $1.bytes } < $1.value.reduce(0) { $0 + $1.bytes }
            })?.key
        {
            dropOldest(of: largest, "the app that keeps the most: all apps keep more than \(Limits.keptBytes) bytes")
        }
    }

    /// The app became active: hand it what could not be shown. Called by ``setState(_:_:)``.
    func appBecameActive(_ id: String) {
        ensureScheduleLoaded()
        guard let waiting = local.undelivered.removeValue(forKey: id) else { return }
        local.keptBytes -= waiting.reduce(0) { $0 + $1.bytes }
        Task { @MainActor in
            for kept in waiting {
                await send("local-notification", ["notification": kept.notification.notification.propertyList], to: id)
            }
            await persist()
        }
    }

    /// Withdraws a banner (`CloseNotification`) and forgets it: a later `ActionInvoked` for it is ignored.
    func withdrawBanner(_ serverID: UInt32) {
        local.banners[serverID] = nil
        local.activationTokens[serverID] = nil
        local.server?.close(serverID)
    }

    // MARK: The server's signals

    func handleServerEvent(_ event: DesktopNotificationClient.Event) {
        switch event {
        case .activationToken(let serverID, let token):
            guard local.banners[serverID] != nil else { return }
            local.activationTokens[serverID] = token
        case .actionInvoked(let serverID, let key):
            guard let banner = local.banners[serverID] else {
                logger.debug("ActionInvoked(\(serverID), \(key)) for a banner that is not ours or was acted on")
                return
            }
            let button = banner.buttons.first { $0.identifier == key }
            guard key == "default" || button != nil else {
                logger.notice("ActionInvoked(\(serverID), '\(key)'): no such action on that banner; ignored")
                return
            }
            // Acted on once: the banner is withdrawn and forgotten before the action runs.
            let token = local.activationTokens[serverID]
            let notificationKey = LocalNotificationSchedule.Key(
                appID: banner.appID, identifier: banner.notification.identifier)
            if local.bannerIDs[notificationKey] == serverID { local.bannerIDs[notificationKey] = nil }
            withdrawBanner(serverID)
            if let button {
                Task { @MainActor in await runAction(button, of: banner, activationToken: token) }
            } else {
                Task { @MainActor in await openFromBanner(banner, activationToken: token) }
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
