import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import DurableState
import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus

/// The one local-notification engine: the schedule, its file, the alarm, the banners and what a
/// click or an action on them does, for every app of a host (lifecycled) or for one (`SystemdHost`).
///
/// - The schedule (``LocalNotificationSchedule``) is persisted after every change
///   (`GroupCommitFile`); one `CLOCK_REALTIME` ``RealtimeAlarm`` is armed at the
///   earliest fire time and re-armed after it goes off, after a clock set, and after a time-zone
///   change (``timeZoneChanged(to:)``).
/// - A notification that fires goes to its app (``Delivery/notification(_:)``) when the app is
///   active; otherwise it becomes a banner (`org.freedesktop.Notifications.Notify`), and with no
///   server on the bus it is kept, in the file, for the app's next activation (``appBecameActive(_:)``).
/// - A click on a banner brings a running app to the foreground (``Delivery/opened(_:activationToken:)``)
///   or launches it with the notification in its launch options; an action button runs
///   `handleActionWithIdentifier` (launching the app in the background if needed). A banner is
///   closed when its notification is handled, cancelled or replaced.
/// - The badge is announced on `com.canonical.Unity.LauncherEntry` and told to a running app.
/// - A push's banner (``ScheduledLocalNotification/isRemote``, from ``present(_:)``) takes the
///   same way and remembers it is remote: a click brings a running app to the foreground with
///   ``Delivery/remoteOpened(_:activationToken:)`` (`didReceiveRemoteNotification`) or launches it
///   with `UIApplicationLaunchOptionsRemoteNotificationKey` and the activation token; a button
///   runs ``Delivery/remoteAction(identifier:payload:)``
///   (`handleActionWithIdentifier:forRemoteNotification:`), launching the app in the background
///   if needed. It is never scheduled; kept (no server), it reaches the app at its next
///   activation as a click would.
///
/// Where an app is, how to reach it and how to launch it are the host's
/// (``LocalNotificationCenterHost``). Main actor only.
@MainActor
package final class LocalNotificationCenter {
    /// Where the center keeps its schedule and what it serves.
    package struct Configuration: Sendable {
        /// The schedule file, or `nil` to keep the schedule in memory only.
        package var scheduleURL: URL?
        /// The one app this center serves, or `nil` for every app. Entries of other apps in the
        /// file (a shared state directory) are written back as they were read.
        package var appScope: String?
        /// The delay before the next try after the given number of failed writes in a row, or
        /// `nil` to wait for the next change instead.
        package var retryDelay: (@Sendable (_ failures: Int) -> Duration)?
        /// `CLOCK_REALTIME` now, in seconds since the epoch (what the alarm measures against).
        package var now: @Sendable () -> Double = LocalNotificationCenter.realtimeNow
        /// The time zone the schedule starts in.
        package var timeZone: any UTCOffsetRules = SystemLocalTime()

        /// A configuration.
        package init(
            scheduleURL: URL?, appScope: String? = nil, retryDelay: (@Sendable (_ failures: Int) -> Duration)? = nil
        ) {
            self.scheduleURL = scheduleURL
            self.appScope = appScope
            self.retryDelay = retryDelay
        }
    }

    /// Where an app is, as its host sees it.
    package enum AppPresence: Sendable, Equatable {
        /// The host knows no such app (a notification of it that fires is dropped).
        case unknown
        /// Known, not running: a click or an action launches it.
        case notRunning
        /// Its process runs but has not connected yet: what it is handed waits for it.
        case starting
        /// Running and connected, not active: what fires is a banner.
        case running
        /// Active: what fires is handed to it.
        case active

        /// Whether the app takes deliveries now (it is connected).
        package var isConnected: Bool { self == .running || self == .active }
        /// Whether a click or an action reaches the app without a launch.
        package var isRunning: Bool { self != .unknown && self != .notRunning }
    }

    /// What the center hands an app.
    package enum Delivery: Sendable, Equatable {
        /// A notification fired (or was kept for this activation): `didReceiveLocalNotification`.
        case notification(LocalNotification)
        /// Its banner was clicked: the app comes to the foreground with it.
        case opened(LocalNotification, activationToken: String?)
        /// An action of a foreground kind was chosen: the app comes to the foreground first.
        case foreground
        /// An action button was chosen: `handleActionWithIdentifier`.
        case action(identifier: String, notification: LocalNotification)
        /// A push's banner was clicked (or kept for this activation): the app comes to the
        /// foreground and gets the payload in `didReceiveRemoteNotification`.
        case remoteOpened(UserInfo, activationToken: String?)
        /// An action button of a push's banner was chosen:
        /// `handleActionWithIdentifier:forRemoteNotification:`.
        case remoteAction(identifier: String, payload: UserInfo)
        /// The badge changed.
        case badge(Int)
        /// The app's schedule changed: these identifiers left, these notifications were added or
        /// replaced (``notifications(of:)`` is the schedule after the change).
        case scheduleChanged(removed: [String], updated: [LocalNotification])
    }

    /// A banner on screen, by the server's id.
    package struct Banner: Sendable {
        /// The app it is for.
        package var appID: String
        /// The notification as the app gets it back.
        package var notification: LocalNotification
        /// Its buttons beyond the default action.
        package var buttons: [ScheduledLocalNotification.Button]
        /// The push's payload when it is a push's banner (``ScheduledLocalNotification/remotePayload``).
        package var remotePayload: UserInfo? = nil
    }

    /// A notification kept for its app's next activation, with its bytes (as ``LocalNotificationBudget`` counts).
    package struct Kept: Sendable {
        /// The notification.
        package var notification: ScheduledLocalNotification
        /// Its userInfo's D-Bus size.
        package var bytes: Int
    }

    /// The host: where apps are, how to reach and launch them.
    package weak var host: (any LocalNotificationCenterHost)?
    /// The configuration.
    package let configuration: Configuration
    /// The schedule file, or `nil` in memory only.
    package var scheduleURL: URL? { configuration.scheduleURL }
    /// What it did since it started (``LocalNotificationCounters``).
    package private(set) var counters = LocalNotificationCounters()
    /// Writes the file (a test may replace it with one whose save it holds); `nil` in memory only.
    package var writer: GroupCommitFile?
    /// The schedule, ordered by fire time.
    package private(set) var schedule: LocalNotificationSchedule
    /// The bytes of what is scheduled, per app and in all.
    package private(set) var budget = LocalNotificationBudget(
        perAppLimit: LifecycledProtocol.Limits.scheduleBytesPerApp, totalLimit: LifecycledProtocol.Limits.scheduleBytes)
    /// Notifications a ``schedule(_:)`` call is saving, by key, with that call's token: in the
    /// file from the next write on, in the schedule (where they can fire) only once that write
    /// succeeded, so a notification whose call fails with ``Refusal/notSaved(_:)`` was never delivered either.
    package private(set) var pending:
        [LocalNotificationSchedule.Key: (token: UInt64, notification: ScheduledLocalNotification)] = [:]
    /// Notifications that could not be shown (no server): delivered when the app next becomes
    /// active; in the file's `undelivered` list, bounded (``LifecycledProtocol/Limits/keptNotificationsPerApp``).
    package private(set) var undelivered: [String: [Kept]] = [:]
    /// Notifications that fired and are on their way to a banner (the server is being asked):
    /// written as kept until shown, so a crash in between does not lose them. A cancel or a
    /// replacement removes the ticket; the delivery, back from each await, then stops (and
    /// withdraws the banner the server just made).
    package private(set) var delivering: [UInt64: ScheduledLocalNotification] = [:]
    /// Banners on screen by server id; the server id of each (app, identifier) for `replaces_id`.
    package private(set) var banners: [UInt32: Banner] = [:]
    package private(set) var bannerIDs: [LocalNotificationSchedule.Key: UInt32] = [:]
    /// Activation tokens by server id, until the `ActionInvoked` they precede.
    package private(set) var activationTokens: [UInt32: String] = [:]
    /// The badge of each app.
    package private(set) var badges: [String: Int] = [:]
    /// How many clock sets the alarm reported (each re-arms it).
    package private(set) var clockSets = 0
    /// The notification server's client.
    package private(set) var server: DesktopNotificationClient?

    private enum Phase { case idle, running, stopped }
    private var phase = Phase.idle
    private let logger: Logger
    private var loaded = false
    /// Entries of the file that did not read, kept verbatim and written back.
    private var rejected: [(entry: UserInfoValue, reason: String)] = []
    /// Entries of the file that belong to apps outside ``Configuration/appScope``: written back unchanged.
    private var foreign: [ScheduledLocalNotification] = []
    private var foreignUndelivered: [ScheduledLocalNotification] = []
    /// Whether the file may be replaced (not when it could not be read or is from a newer version).
    private var writable = true
    private var alarm: RealtimeAlarm?
    private var alarmSource: EventSourceToken?
    private var nextPendingToken: UInt64 = 0
    /// After a failed write: the next retry, and how many writes failed in a row.
    private var retryTask: Task<Void, Never>?
    private var failedWrites = 0
    private var serverTask: Task<Void, Never>?
    private var connection: BusConnection?
    /// The bytes of what is kept, in all.
    private var keptBytes = 0
    private var nextDeliveryTicket: UInt64 = 0
    /// Whether the missing server was logged (once until one appears).
    private var serverAbsenceLogged = false

    /// Creates a center; the file is read at ``start(connection:loop:)`` or at the first call that needs it.
    ///
    /// - Parameters:
    ///   - configuration: Where the schedule is kept and what the center serves.
    ///   - logger: Where what happens is told.
    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        schedule = LocalNotificationSchedule(timeZone: configuration.timeZone)
        writer = configuration.scheduleURL.map { GroupCommitFile(url: $0, logger: logger) }
    }

    /// `CLOCK_REALTIME` now, in seconds since the epoch.
    nonisolated package static func realtimeNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }

    // MARK: Start and stop

    /// Loads the schedule, follows the notification server, then starts the alarm.
    ///
    /// The server's client comes first: notifications missed while the host was not running
    /// fire as soon as the alarm is armed, and must find the server (or know there is none).
    ///
    /// - Parameters:
    ///   - connection: The session bus, or `nil` without one (no banners, no badge).
    ///   - loop: The loop the alarm is watched on, or `nil` for none (a test fires with ``fireDue()``).
    package func start(connection: BusConnection?, loop: EventLoop?) async {
        guard phase == .idle else { return }
        phase = .running
        ensureLoaded()
        self.connection = connection
        if let connection {
            let server = DesktopNotificationClient(connection: connection, logger: logger)
            do {
                try await server.start()
                // Stopped while the server was being followed: nothing may stay subscribed.
                guard phase == .running else {
                    server.stop()
                    return
                }
                self.server = server
                serverTask = Task { @MainActor [weak self] in
                    for await event in server.events { self?.handleServerEvent(event) }
                }
            } catch {
                logger.info("local notifications: cannot follow the notification server: \(error)")
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
                            logger.info("local notifications: \(error)")
                            return
                        }
                        guard reading != .nothing else { return }
                        Task { @MainActor in self?.alarmWentOff(reading) }
                    }
                } catch {
                    alarm.close()
                    throw error
                }
                // Stopped while the watch was added: then nothing stays armed.
                guard phase == .running else {
                    source.cancel()
                    alarm.close()
                    return
                }
                self.alarm = alarm
                alarmSource = source
            } catch {
                logger.info("local notifications: no alarm (\(error)); scheduled notifications will not fire")
            }
        }
        armAlarm()
    }

    /// Stops the alarm, the server client and the retries; idempotent.
    package func stop() {
        phase = .stopped
        alarmSource?.cancel()
        alarmSource = nil
        alarm?.close()
        alarm = nil
        serverTask?.cancel()
        serverTask = nil
        retryTask?.cancel()
        retryTask = nil
        server?.stop()
        server = nil
        connection = nil
    }

    /// Reads the schedule file, once: at start, or at the first call that needs it if one comes before.
    ///
    /// - A file that cannot be read as a schedule is set aside as `<name>.corrupt-<unix time>`
    ///   and a new one started; one of a newer version is left alone (nothing can be scheduled
    ///   until it is moved away, and each ``schedule(_:)`` says so).
    /// - Every entry is checked as ``schedule(_:)`` checks a notification (its size, its
    ///   app's and the total budget): one that fails is refused with a log line, the rest load,
    ///   and the file as it was is kept beside as `<name>.refused-<unix time>`.
    package func ensureLoaded() {
        guard !loaded else { return }
        loaded = true
        guard let url = scheduleURL else { return }
        var loaded = LocalNotificationScheduleFile.load(from: url)
        if let problem = loaded.problem {
            if loaded.isCorrupt {
                if let kept = AtomicFile.setAside(url) {
                    logger.info("local notifications: \(problem); set aside as \(kept), a new schedule is started")
                    loaded = LocalNotificationScheduleFile.Loaded()
                } else {
                    logger.info(
                        "local notifications: \(problem), and it cannot be set aside; nothing can be scheduled until it is moved away"
                    )
                }
            } else {
                logger.info(
                    "local notifications: \(problem); nothing can be scheduled until it is moved away or this host is updated"
                )
            }
        }
        writable = loaded.writable
        var refused = 0
        var rejectedBytes = 0
        for (entry, reason) in loaded.rejected {
            // Kept verbatim, unless it is larger than any notification can be, or all of them
            // together are larger than a whole schedule: then it is refused.
            let size = UserInfoBusCodec.wireSize(of: UserInfo(["entry": entry]))
            guard size <= 2 * LifecycledProtocol.Limits.userInfoBytes,
                rejectedBytes + size <= LifecycledProtocol.Limits.scheduleBytes
            else {
                logger.info(
                    "local notifications: a rejected entry of \(url.path) (\(reason)) is \(size) bytes, \(rejectedBytes) kept already; refused at load"
                )
                refused += 1
                continue
            }
            rejectedBytes += size
            rejected.append((entry, reason))
            logger.info("local notifications: an entry of \(url.path) was rejected and kept: \(reason)")
        }
        for notification in loaded.notifications {
            guard isServed(notification.appID) else {
                foreign.append(notification)
                continue
            }
            if let problem = notification.isRemote
                ? "a push's banner is never scheduled" : admissionProblem(notification)
            {
                logger.info(
                    "local notifications: '\(notification.identifier.prefix(64))' of \(notification.appID.prefix(64)) in \(url.path) refused at load: \(problem)"
                )
                refused += 1
                continue
            }
            // Not advanced to now: an occurrence missed while the host was not running (a repeat
            // too) is due at once and fires once.
            schedule.insert(notification, now: -.infinity)
            budget.set(notification.key, Self.entryBytes(notification))
        }
        for notification in loaded.undelivered {
            guard isServed(notification.appID) else {
                foreignUndelivered.append(notification)
                continue
            }
            if let problem = admissionProblem(notification, budget: false) {
                logger.info(
                    "local notifications: kept '\(notification.identifier.prefix(64))' of \(notification.appID.prefix(64)) in \(url.path) refused at load: \(problem)"
                )
                refused += 1
                continue
            }
            keep(notification)
        }
        if !loaded.notifications.isEmpty || !loaded.undelivered.isEmpty {
            logger.info(
                "local notifications: \(schedule.count) scheduled, \(undelivered.values.map(\.count).reduce(0, +)) kept for their app's activation, loaded from \(url.path)"
            )
        }
        if refused > 0 {
            // The file as it was stays beside (a hard link: the next write replaces the name only),
            // under a name of its own even when an earlier start refused entries in the same second.
            if let copy = AtomicFile.keepCopy(url, reason: "refused") {
                logger.info(
                    "local notifications: \(refused) entries refused at load; the file as it was is kept as \(copy)")
            } else {
                logger.info(
                    "local notifications: \(refused) entries refused at load; no copy kept (\(String(cString: strerror(errno))))"
                )
            }
            Task { @MainActor in await persist() }
        }
    }

    private func isServed(_ appID: String) -> Bool {
        configuration.appScope.map { $0 == appID } ?? true
    }

    /// Why a notification may not be scheduled, kept or loaded: the checks of `ScheduleNotification`
    /// (its userInfo's limits, its app id, and with `budget` its app's and the total budget), or
    /// `nil`. The one app of a scoped center may have any id (it is the host's own).
    package func admissionProblem(_ notification: ScheduledLocalNotification, budget: Bool = true) -> String? {
        guard notification.appID == configuration.appScope || LifecycledProtocol.isValidAppID(notification.appID)
        else {
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
        return self.budget.excess(Self.entryBytes(notification), for: notification.key)
    }

    /// A notification's entry in `ListNotifications`: its property list, `app`, `nextFireDate`
    /// and `actions`.
    package static func listEntry(_ notification: ScheduledLocalNotification, instant: Double) -> UserInfo {
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
    package static func entryBytes(_ notification: ScheduledLocalNotification) -> Int {
        UserInfoBusCodec.wireSize(of: listEntry(notification, instant: 0))
    }

    // MARK: Schedule

    /// What is scheduled for an app, soonest first: the app's view of its schedule.
    package func notifications(of appID: String) -> [LocalNotification] {
        ensureLoaded()
        return schedule.notifications(appID: appID).map(\.notification.notification)
    }

    /// Schedules a notification, replacing one with the same identifier (withdrawing its banner
    /// and stopping its delivery), and returns once the schedule is on disk.
    ///
    /// The notification is saved before it is scheduled (``pending``): it cannot fire while the
    /// write is out, so a ``Refusal/notSaved(_:)`` is the whole truth (it was never delivered
    /// either), and what it replaces stands, and may fire, until the write succeeded.
    ///
    /// - Throws: ``Refusal/invalid(_:)`` for a notification past the protocol's limits,
    ///   ``Refusal/limitsExceeded(_:)`` past the app's or the total budget,
    ///   ``Refusal/notSaved(_:)`` when the file could not be written (then nothing changed).
    package func schedule(_ notification: ScheduledLocalNotification) async throws(Refusal) {
        ensureLoaded()
        let id = notification.appID
        // The checks the file is loaded with: what is scheduled loads again after a restart.
        if let problem = admissionProblem(notification, budget: false) { throw .invalid(problem) }
        if notification.isRemote { throw .invalid("a push's banner is shown, never scheduled") }
        let key = notification.key
        let bytes = Self.entryBytes(notification)
        if let excess = budget.excess(bytes, for: key) { throw .limitsExceeded(excess) }
        let token = nextPendingToken
        nextPendingToken += 1
        pending[key] = (token, notification)
        budget.set(key, bytes)
        let failure = await persist()
        guard pending[key]?.token == token else {
            // A later call for this identifier (a cancel, another schedule) took over during the
            // write, and its own write says what stands; this one changes nothing more.
            if let failure { throw .notSaved(failure) }
            return
        }
        pending[key] = nil
        if let failure {
            // Nothing changed: the budget counts what is scheduled under this identifier again.
            budget.set(key, schedule.entry(key).map { Self.entryBytes($0.notification) })
            logger.info(
                "\(id): local notification '\(notification.identifier)' not scheduled: \(failure)",
                metadata: Self.app(id))
            throw .notSaved(failure)
        }
        schedule.insert(notification, now: configuration.now())
        budget.set(key, bytes)
        // What it replaces is no longer announced, nor on its way to a banner (this one cannot
        // have fired yet: every banner and delivery of this identifier is the old one's).
        for ticket in delivering.filter({ $0.value.key == key }).map(\.key) {
            delivering[ticket] = nil
        }
        if let replacedBanner = bannerIDs.removeValue(forKey: key) { withdrawBanner(replacedBanner) }
        armAlarm()
        reportScheduleChange(of: id, updated: [notification.notification])
        counters.scheduled += 1
        logger.info(
            "\(id): scheduled local notification '\(notification.identifier)' (\(schedule.count) in all)",
            metadata: Self.app(id).merging(counters.metadata) { $1 })
    }

    /// Cancels an app's notification, or all of them for `nil`: they leave the schedule, their
    /// banners are withdrawn (`CloseNotification`) and their kept copies dropped. A push's banner
    /// is not one of them (`cancelAllLocalNotifications` leaves it, as iOS leaves remote ones).
    ///
    /// - Throws: ``Refusal/unknownNotification`` for an identifier the app has nowhere;
    ///   ``Refusal/notSaved(_:)`` when the file could not be written (cancelled in memory;
    ///   written by the next retry).
    package func cancel(_ appID: String, identifier: String?) async throws(Refusal) {
        ensureLoaded()
        let id = appID
        let matches = { (other: String) in identifier.map { $0 == other } ?? true }
        let removed: [ScheduledLocalNotification]
        if let identifier {
            removed = schedule.remove(.init(appID: id, identifier: identifier)).map { [$0] } ?? []
        } else {
            removed = schedule.removeAll(appID: id)
        }
        for notification in removed {
            budget.set(.init(appID: id, identifier: notification.identifier), nil)
        }
        // Being saved by a `schedule` call still out: that call then schedules nothing.
        let pendingRemoved = pending.keys.filter { $0.appID == id && matches($0.identifier) }
        for key in pendingRemoved {
            pending[key] = nil
            budget.set(key, schedule.entry(key).map { Self.entryBytes($0.notification) })
        }
        // Fired and on their way to a banner: the delivery stops (withdrawing the banner it gets).
        // A push's banner is not a local notification: cancelling them leaves it (and its kept copy).
        let deliveriesRemoved = delivering.filter {
            $0.value.appID == id && !$0.value.isRemote && matches($0.value.identifier)
        }.map(\.key)
        for ticket in deliveriesRemoved { delivering[ticket] = nil }
        let onScreen = bannerIDs.filter {
            $0.key.appID == id && banners[$0.value]?.remotePayload == nil && matches($0.key.identifier)
        }
        for (key, serverID) in onScreen {
            bannerIDs[key] = nil
            withdrawBanner(serverID)
        }
        let keptBefore = undelivered[id]?.count ?? 0
        if var kept = undelivered[id] {
            let cancelled = { (kept: Kept) in !kept.notification.isRemote && matches(kept.notification.identifier) }
            let gone = kept.filter(cancelled)
            kept.removeAll(where: cancelled)
            keptBytes -= gone.reduce(0) { $0 + $1.bytes }
            undelivered[id] = kept.isEmpty ? nil : kept
        }
        let keptRemoved = keptBefore - (undelivered[id]?.count ?? 0)
        let found = !removed.isEmpty || !pendingRemoved.isEmpty || !deliveriesRemoved.isEmpty || keptRemoved > 0
        guard found || !onScreen.isEmpty else {
            if identifier != nil { throw .unknownNotification }
            return
        }
        armAlarm()
        reportScheduleChange(of: id, removed: removed.map(\.identifier))
        guard found else { return }
        if let failure = await persist() { throw .notSaved(failure) }
    }

    /// Returns once the schedule and the kept notifications as they are now are on disk (`nil`),
    /// or with why not (`GroupCommitFile`: a group commit, written off the main
    /// actor). After a failure the write is retried (``Configuration/retryDelay``) until one
    /// succeeds, so what waits in memory (a firing's removal, a kept notification) reaches the
    /// disk when space returns. In memory only, it returns `nil` at once.
    @discardableResult
    package func persist() async -> GroupCommitFile.Failure? {
        ensureLoaded()
        guard let writer else { return nil }
        let failure = await writer.persist { [weak self] in
            guard let self else { return .failure(.init(.notWritable, "the host is stopping")) }
            guard writable else {
                return .failure(
                    .init(
                        .notWritable,
                        "\(scheduleURL?.path ?? "the schedule") is not a schedule this host may replace (see the log); move it away"
                    ))
            }
            let kept = undelivered.keys.sorted().flatMap { undelivered[$0, default: []].map(\.notification) }
            // A notification being saved replaces what its identifier has in the schedule and on
            // its way to a banner (if this write fails, nothing is written; the next one has them).
            let pending = self.pending
            let scheduled =
                schedule.notifications().map(\.notification).filter { pending[$0.key] == nil }
                + pending.keys.sorted().compactMap { pending[$0]?.notification }
            let delivering = delivering.keys.sorted().compactMap { self.delivering[$0] }
                .filter { pending[$0.key] == nil }
            let contents = LocalNotificationScheduleFile.Contents(
                notifications: foreign + scheduled, undelivered: foreignUndelivered + kept + delivering,
                rejected: rejected)
            do {
                return .success(try LocalNotificationScheduleFile.encode(contents))
            } catch {
                return .failure(.init(.notEncodable, "cannot encode the schedule", underlying: error))
            }
        }
        if failure == nil {
            failedWrites = 0
            retryTask?.cancel()
            retryTask = nil
        } else if writable, retryTask == nil, phase == .running, let retryDelay = configuration.retryDelay {
            failedWrites += 1
            let delay = retryDelay(failedWrites)
            retryTask = Task { @MainActor [weak self] in
                try? await Task.sleep(for: delay)
                guard let self, !Task.isCancelled else { return }
                retryTask = nil
                await persist()
            }
        }
        return failure
    }

    /// Tells a connected app what changed in its schedule (a fact: it does not wake a suspended app).
    private func reportScheduleChange(of id: String, removed: [String] = [], updated: [LocalNotification] = []) {
        guard let host, host.presence(of: id).isConnected, !(removed.isEmpty && updated.isEmpty) else { return }
        Task { @MainActor in await host.deliver(.scheduleChanged(removed: removed, updated: updated), to: id) }
    }

    private func armAlarm() {
        guard let alarm else { return }
        do {
            try alarm.arm(at: schedule.earliestInstant())
        } catch {
            logger.info("local notifications: cannot arm the alarm: \(error)")
        }
    }

    /// The alarm went off (the fire time, a resume past it, or a clock set): fire what is due, re-arm.
    package func alarmWentOff(_ reading: RealtimeAlarm.Reading) {
        guard alarm != nil else { return }
        if reading == .clockSet {
            clockSets += 1
            logger.info("local notifications: the clock was set; re-arming")
        }
        fireDue()
    }

    /// Fires every notification that is due now, re-arms, then persists.
    ///
    /// The deliveries go out first and the file is written after them (its `fsync` costs
    /// milliseconds): a crash in between fires those notifications again after the restart, which
    /// is better than losing them.
    package func fireDue() {
        ensureLoaded()
        let firings = schedule.takeDue(now: configuration.now())
        armAlarm()
        guard !firings.isEmpty else { return }
        counters.fired += firings.count
        for firing in firings { present(firing.notification) }
        var gone: [String: [String]] = [:]
        for firing in firings where !firing.repeats {
            gone[firing.notification.appID, default: []].append(firing.notification.identifier)
            // Unless a call is saving a replacement: the budget counts that one.
            let key = firing.notification.key
            if pending[key] == nil { budget.set(key, nil) }
        }
        for (id, identifiers) in gone { reportScheduleChange(of: id, removed: identifiers) }
        // Behind the deliveries' tasks on the main actor; one write for a burst of firings.
        Task { @MainActor in await persist() }
    }

    /// The local time zone changed: floating notifications move, repeats keep their local time.
    ///
    /// - Parameters:
    ///   - zone: The new zone (default: the process's, read again).
    package func timeZoneChanged(to zone: any UTCOffsetRules = SystemLocalTime.reload()) {
        ensureLoaded()
        schedule.setTimeZone(zone, now: configuration.now())
        logger.info("local notifications: time zone now \(zone.identifier); re-armed")
        armAlarm()
        fireDue()
    }

    // MARK: Delivery

    /// Delivers a notification that fired, or that its app presents now: to the app when it is
    /// active, else as a banner.
    package func present(_ scheduled: ScheduledLocalNotification) {
        let id = scheduled.appID
        let notification = scheduled.notification
        if let problem = admissionProblem(scheduled, budget: false) {
            // It could be kept in the file, which is loaded with these checks.
            logger.info("local notification '\(scheduled.identifier)' of \(id) dropped: \(problem)")
            return
        }
        let presence = host?.presence(of: id) ?? .unknown
        guard presence != .unknown, let host else {
            logger.info("local notification '\(scheduled.identifier)' of \(id) dropped: the app is unknown now")
            return
        }
        if presence == .active {
            // A push reached the active app through its callback already: no banner.
            if scheduled.isRemote { return }
            counters.deliveredToApp += 1
            logger.debug(
                "\(id): local notification '\(notification.identifier)' handed to the active app",
                metadata: Self.app(id).merging(counters.metadata) { $1 })
            Task { @MainActor in await host.deliver(.notification(notification), to: id) }
            return
        }
        if notification.applicationIconBadgeNumber != 0 { setBadge(id, notification.applicationIconBadgeNumber) }
        let ticket = nextDeliveryTicket
        nextDeliveryTicket += 1
        delivering[ticket] = scheduled
        Task { @MainActor in await showBanner(scheduled, ticket: ticket) }
    }

    /// Shows a banner, or keeps the notification for the app's next activation when no server runs.
    ///
    /// Until the server has it, the notification is written as kept (``delivering``). After each
    /// await the ticket is looked at again: a cancel or a replacement meanwhile removed it, and
    /// then nothing is kept, and a banner the server made meanwhile is withdrawn at once.
    private func showBanner(_ scheduled: ScheduledLocalNotification, ticket: UInt64) async {
        let id = scheduled.appID
        let notification = scheduled.notification
        let server = self.server
        let available = await server?.isAvailable() ?? false
        guard delivering[ticket] != nil else { return }
        guard let server, available else {
            delivering[ticket] = nil
            keepUndelivered(scheduled, reason: "no notification server is on the bus")
            return
        }
        let key = scheduled.key
        var banner = DesktopNotificationClient.Banner(
            notification: notification, buttons: scheduled.buttons, appID: id,
            appName: host?.displayName(of: id) ?? id)
        banner.replacesID = bannerIDs[key] ?? 0
        do {
            let serverID = try await server.notify(banner)
            guard delivering[ticket] != nil else {
                server.close(serverID)
                logger.info(
                    "\(id): local notification '\(notification.identifier)' was cancelled or replaced while banner \(serverID) was made; withdrawn",
                    metadata: Self.app(id))
                return
            }
            bannerIDs[key] = serverID
            banners[serverID] = Banner(
                appID: id, notification: notification, buttons: scheduled.buttons,
                remotePayload: scheduled.remotePayload)
            serverAbsenceLogged = false
            counters.shown += 1
            logger.info(
                "\(id): local notification '\(notification.identifier)' shown as banner \(serverID)",
                metadata: Self.app(id).merging(counters.metadata) { $1 })
            delivering[ticket] = nil
            await persist()
        } catch {
            guard delivering.removeValue(forKey: ticket) != nil else { return }
            keepUndelivered(scheduled, reason: "Notify failed: \(error)")
        }
    }

    private func keepUndelivered(_ scheduled: ScheduledLocalNotification, reason: String) {
        if !serverAbsenceLogged {
            serverAbsenceLogged = true
            logger.info(
                "local notifications: \(reason); notifications are kept and delivered when their app is next active")
        }
        keep(scheduled)
        Task { @MainActor in await persist() }
    }

    /// Adds a notification to those kept for its app's activation, within the bounds
    /// (``LifecycledProtocol/Limits/keptNotificationsPerApp``, ``LifecycledProtocol/Limits/keptBytesPerApp``,
    /// ``LifecycledProtocol/Limits/keptBytes``): beyond them the oldest of the app, or of the app
    /// that keeps the most, is dropped with a log line.
    private func keep(_ scheduled: ScheduledLocalNotification) {
        typealias Limits = LifecycledProtocol.Limits
        let id = scheduled.appID
        let bytes = UserInfoBusCodec.wireSize(of: UserInfo(scheduled.payload))
        undelivered[id, default: []].append(.init(notification: scheduled, bytes: bytes))
        keptBytes += bytes
        func dropOldest(of app: String, _ why: String) {
            guard let oldest = undelivered[app]?.first else { return }
            undelivered[app]?.removeFirst()
            if undelivered[app]?.isEmpty == true { undelivered[app] = nil }
            keptBytes -= oldest.bytes
            logger.info(
                "\(app): kept local notification '\(oldest.notification.identifier)' dropped, the oldest of \(why)",
                metadata: Self.app(app))
        }
        while let kept = undelivered[id], kept.count > 1,
            kept.count > Limits.keptNotificationsPerApp || kept.reduce(0, { $0 + $1.bytes }) > Limits.keptBytesPerApp
        {
            dropOldest(of: id, "more than \(Limits.keptNotificationsPerApp) or \(Limits.keptBytesPerApp) bytes kept")
        }
        while keptBytes > Limits.keptBytes,
            let largest = undelivered.max(by: {
                $0.value.reduce(0) { $0 + $1.bytes } < $1.value.reduce(0) { $0 + $1.bytes }
            })?.key
        {
            dropOldest(of: largest, "the app that keeps the most: all apps keep more than \(Limits.keptBytes) bytes")
        }
    }

    /// The app became active: hand it the local notifications that could not be shown.
    ///
    /// A push's banner that could not be shown is dropped instead: the app had its payload when
    /// the push arrived, and UIKit calls `didReceiveRemoteNotification` again only when the user
    /// opens the app from the alert, which no one did.
    package func appBecameActive(_ id: String) {
        ensureLoaded()
        guard let waiting = undelivered.removeValue(forKey: id) else { return }
        keptBytes -= waiting.reduce(0) { $0 + $1.bytes }
        let local = waiting.filter { $0.notification.remotePayload == nil }
        if local.count < waiting.count {
            logger.info(
                "\(id): \(waiting.count - local.count) push banner(s) no server showed are dropped: the app had their pushes",
                metadata: Self.app(id))
        }
        Task { @MainActor in
            for kept in local {
                await host?.deliver(.notification(kept.notification.notification), to: id)
            }
            await persist()
        }
    }

    /// Withdraws a banner (`CloseNotification`) and forgets it: a later `ActionInvoked` for it is ignored.
    private func withdrawBanner(_ serverID: UInt32) {
        banners[serverID] = nil
        activationTokens[serverID] = nil
        server?.close(serverID)
    }

    // MARK: The server's signals

    /// What the notification server said about a banner (or that the server changed).
    package func handleServerEvent(_ event: DesktopNotificationClient.Event) {
        switch event {
        case .activationToken(let serverID, let token):
            guard banners[serverID] != nil else { return }
            activationTokens[serverID] = token
        case .actionInvoked(let serverID, let key):
            guard let banner = banners[serverID] else {
                logger.debug("ActionInvoked(\(serverID), \(key)) for a banner that is not ours or was acted on")
                return
            }
            let button = banner.buttons.first { $0.identifier == key }
            guard key == "default" || button != nil else {
                logger.info("ActionInvoked(\(serverID), '\(key)'): no such action on that banner; ignored")
                return
            }
            // Acted on once: the banner is withdrawn and forgotten before the action runs.
            let token = activationTokens[serverID]
            let notificationKey = LocalNotificationSchedule.Key(
                appID: banner.appID, identifier: banner.notification.identifier)
            if bannerIDs[notificationKey] == serverID { bannerIDs[notificationKey] = nil }
            withdrawBanner(serverID)
            if let button {
                Task { @MainActor in await runAction(button, of: banner, activationToken: token) }
            } else {
                Task { @MainActor in await open(banner, activationToken: token) }
            }
        case .closed(let serverID, _):
            guard let banner = banners.removeValue(forKey: serverID) else { return }
            activationTokens[serverID] = nil
            let key = LocalNotificationSchedule.Key(appID: banner.appID, identifier: banner.notification.identifier)
            if bannerIDs[key] == serverID { bannerIDs[key] = nil }
        case .serverChanged(let owner):
            // A new server knows none of the old one's banners.
            banners.removeAll()
            bannerIDs.removeAll()
            activationTokens.removeAll()
            if owner != nil { serverAbsenceLogged = false }
        }
    }

    /// A click on the banner: the app comes to the foreground with the notification, or is launched with it.
    ///
    /// A push's banner: the seeds' `application:didReceiveRemoteNotification:` — "If the app is
    /// not running when a push notification arrives, the method launches the app and provides the
    /// appropriate information in the launch options dictionary" (`UIApplicationLaunchOptionsRemoteNotificationKey`);
    /// a running app gets ``Delivery/remoteOpened(_:activationToken:)``.
    private func open(_ banner: Banner, activationToken: String?) async {
        let id = banner.appID
        guard let host else { return }
        if host.presence(of: id).isRunning {
            if let payload = banner.remotePayload {
                await host.deliver(.remoteOpened(payload, activationToken: activationToken), to: id)
            } else {
                await host.deliver(.opened(banner.notification, activationToken: activationToken), to: id)
            }
            return
        }
        var options = LaunchOptions()
        if let payload = banner.remotePayload {
            options.remoteNotification = payload
        } else {
            options.localNotification = banner.notification
        }
        if let activationToken { options[.activationToken] = .string(activationToken) }
        do {
            try host.launch(id, options: options, activationToken: activationToken)
        } catch {
            logger.info("\(id): cannot launch for a banner click: \(error)", metadata: Self.app(id))
        }
    }

    /// An action button: `handleActionWithIdentifier` in the app, launched in the background if needed.
    private func runAction(
        _ button: ScheduledLocalNotification.Button, of banner: Banner, activationToken: String?
    ) async {
        let id = banner.appID
        guard let host else { return }
        let action =
            banner.remotePayload.map { Delivery.remoteAction(identifier: button.identifier, payload: $0) }
            ?? Delivery.action(identifier: button.identifier, notification: banner.notification)
        if host.presence(of: id).isRunning {
            if button.foreground { await host.deliver(.foreground, to: id) }
            await host.deliver(action, to: id)
            return
        }
        var options = LaunchOptions()
        options.launchedInBackground = !button.foreground
        if let activationToken, button.foreground { options[.activationToken] = .string(activationToken) }
        do {
            try host.launch(id, options: options, activationToken: activationToken)
            // Queued by the host until the app connects, then delivered after its launch.
            await host.deliver(action, to: id)
        } catch {
            logger.info("\(id): cannot launch for an action: \(error)", metadata: Self.app(id))
        }
    }

    // MARK: Badge

    /// Sets an app's badge: `com.canonical.Unity.LauncherEntry.Update` for docks, and a connected
    /// app is told (unless the app set it itself: `tellApp` false).
    package func setBadge(_ id: String, _ count: Int, tellApp: Bool = true) {
        guard badges[id, default: 0] != count else { return }
        badges[id] = count
        do {
            if let connection { try DesktopNotificationClient.announceBadge(count, appID: id, on: connection) }
        } catch {
            logger.info("\(id): cannot announce the badge: \(error)", metadata: Self.app(id))
        }
        if tellApp, let host, host.presence(of: id).isConnected {
            Task { @MainActor in await host.deliver(.badge(count), to: id) }
        }
    }

    private static func app(_ id: String) -> Logger.Metadata { ["app_id": .string(id)] }
}
