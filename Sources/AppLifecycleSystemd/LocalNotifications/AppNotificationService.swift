import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// Local notifications for an app that runs without lifecycled (``SystemdHost``): the same
/// schedule, file, alarm and notification server as the daemon's, for one app, while it runs.
///
/// The schedule is kept in `$STATE_DIRECTORY/local-notifications.json` (else
/// `$XDG_STATE_HOME/<app id>/…`), so what was scheduled survives a restart; a notification whose
/// time passed while the app was not running fires once when it next runs. Nothing relaunches the
/// app: a banner's click or action reaches it only while it runs (that is lifecycled's job).
@MainActor
final class AppNotificationService {
    let appID: String
    let appName: String
    private let url: URL?
    private var schedule = LocalNotificationSchedule(timeZone: SystemLocalTime())
    private var rejected: [(entry: UserInfoValue, reason: String)] = []
    /// Entries of the file that belong to other apps (a shared directory): written back unchanged.
    private var foreign: [ScheduledLocalNotification] = []
    /// Entries of the file's `undelivered` list (lifecycled's keep-for-activation), written back as read.
    private var foreignUndelivered: [ScheduledLocalNotification] = []
    private var writable = true
    private let writer: LocalNotificationScheduleWriter?
    private let alarm: RealtimeAlarm
    private var alarmSource: EventSourceToken?
    private let connection: BusConnection?
    private var server: DesktopNotificationClient?
    private var serverTask: Task<Void, Never>?
    private var banners: [UInt32: (notification: LocalNotification, buttons: [ScheduledLocalNotification.Button])] =
        [:]
    private var bannerIDs: [String: UInt32] = [:]
    private var kept: [LocalNotification] = []
    private var absenceLogged = false
    private let deliver: @MainActor (HostEvent) -> Void
    private let isActive: @MainActor () -> Bool
    private let logger = Logger(label: "AppLifecycle.SystemdHost.notifications")

    /// Loads the schedule and starts the alarm and the server client.
    ///
    /// - Parameters:
    ///   - appID: The app's id (its desktop-file id).
    ///   - appName: The name banners show.
    ///   - stateDirectory: Where the schedule is kept, or `nil` to keep it in memory.
    ///   - connection: The session bus, or `nil` without one (no banners, no badge).
    ///   - loop: The loop the alarm is watched on.
    ///   - isActive: Whether the app is active now.
    ///   - deliver: Hands an event to the app.
    init(
        appID: String, appName: String, stateDirectory: String?, connection: BusConnection?, loop: EventLoop,
        isActive: @escaping @MainActor () -> Bool, deliver: @escaping @MainActor (HostEvent) -> Void
    ) async throws {
        self.appID = appID
        self.appName = appName
        self.connection = connection
        self.deliver = deliver
        self.isActive = isActive
        url = stateDirectory.map {
            URL(fileURLWithPath: $0).appendingPathComponent(LocalNotificationScheduleFile.fileName)
        }
        alarm = try RealtimeAlarm()
        writer = url.map { LocalNotificationScheduleWriter(url: $0, logger: Logger(label: "AppLifecycle.SystemdHost")) }
        if let url {
            let loaded = LocalNotificationScheduleFile.load(from: url)
            if let problem = loaded.problem { logger.error("local notifications: \(problem)") }
            for (_, reason) in loaded.rejected {
                logger.error("local notifications: an entry was rejected and kept: \(reason)")
            }
            writable = loaded.writable
            rejected = loaded.rejected
            // Kept by lifecycled's format; this host delivers its own at once, so they are written back as read.
            foreignUndelivered = loaded.undelivered
            for notification in loaded.notifications {
                if notification.appID == appID {
                    // Not advanced: one missed while the app was not running fires once, now.
                    schedule.insert(notification, now: -.infinity)
                } else {
                    foreign.append(notification)
                }
            }
        }
        if let connection {
            let server = DesktopNotificationClient(connection: connection)
            try await server.start()
            self.server = server
            serverTask = Task { @MainActor [weak self] in
                for await event in server.events { self?.handle(event) }
            }
        }
        // Last, so nothing can fail with the watch installed. Read on the loop thread: the watch is
        // level-triggered, and an unread timerfd would fire again at once.
        let (alarm, logger) = (self.alarm, self.logger)
        alarmSource = try await loop.addIO(fd: alarm.fileDescriptor, events: EventLoop.IOEvents.readable) {
            [weak self] _ in
            do {
                guard try alarm.read() != .nothing else { return }
            } catch {
                logger.error("local notifications: \(error)")
                return
            }
            Task { @MainActor in self?.fireDue() }
        }
        armAlarm()
    }

    /// Stops the alarm and the server client.
    func stop() {
        alarmSource?.cancel()
        alarmSource = nil
        alarm.close()
        serverTask?.cancel()
        server?.stop()
    }

    static func now() -> Double { Date().timeIntervalSince1970 }

    /// What is scheduled, soonest first.
    var notifications: [LocalNotification] { schedule.notifications(appID: appID).map(\.notification.notification) }

    func schedule(_ notification: LocalNotification, actions: [UserNotificationAction]) {
        let buttons = actions.map {
            ScheduledLocalNotification.Button(
                identifier: $0.identifier, title: $0.title, foreground: $0.activationMode == .foreground)
        }
        do {
            let scheduled = try ScheduledLocalNotification(
                appID: appID, payload: notification.propertyList.dictionaryValue ?? [:], buttons: buttons,
                scheduledAt: Date())
            schedule.insert(scheduled, now: Self.now())
        } catch {
            logger.error("local notification '\(notification.identifier)' rejected: \(error.message)")
            return
        }
        changed()
    }

    func cancel(_ identifiers: [String]?) {
        if let identifiers {
            for identifier in identifiers { schedule.remove(.init(appID: appID, identifier: identifier)) }
        } else {
            schedule.removeAll(appID: appID)
        }
        changed()
    }

    /// The local zone changed: floating notifications move.
    func timeZoneChanged() {
        schedule.setTimeZone(SystemLocalTime.reload(), now: Self.now())
        armAlarm()
        fireDue()
    }

    /// Shows a notification that fired (or was presented) while the app is not active.
    func present(_ notification: LocalNotification, buttons: [ScheduledLocalNotification.Button]) {
        if notification.applicationIconBadgeNumber != 0 {
            announceBadge(notification.applicationIconBadgeNumber)
            deliver(.applicationIconBadgeNumber(notification.applicationIconBadgeNumber))
        }
        Task { @MainActor in
            guard let server, await server.isAvailable() else {
                keep(notification, "no notification server is on the bus")
                return
            }
            var banner = DesktopNotificationClient.Banner(
                notification: notification, buttons: buttons, appID: appID, appName: appName)
            banner.replacesID = bannerIDs[notification.identifier] ?? 0
            do {
                let id = try await server.notify(banner)
                bannerIDs[notification.identifier] = id
                banners[id] = (notification, buttons)
                absenceLogged = false
            } catch {
                keep(notification, "Notify failed: \(error)")
            }
        }
    }

    /// The app became active: what could not be shown goes to `didReceive`.
    func appBecameActive() {
        let waiting = kept
        kept.removeAll()
        for notification in waiting { deliver(.localNotification(notification)) }
    }

    /// Announces the badge on the desktop.
    func announceBadge(_ count: Int) {
        guard let connection else { return }
        do {
            try DesktopNotificationClient.announceBadge(count, appID: appID, on: connection)
        } catch {
            logger.warning("cannot announce the badge: \(error)")
        }
    }

    private func keep(_ notification: LocalNotification, _ reason: String) {
        kept.append(notification)
        if !absenceLogged {
            absenceLogged = true
            logger.warning("local notifications: \(reason); kept until the app is next active")
        }
    }

    private func changed() {
        armAlarm()
        deliver(.scheduledLocalNotifications(notifications))
        guard let writer, writable else { return }
        Task { @MainActor in
            await writer.persist { [weak self] in
                guard let self else { return .failure(.init("the app is stopping")) }
                return .success(
                    .init(
                        notifications: foreign + schedule.notifications().map(\.notification),
                        undelivered: foreignUndelivered, rejected: rejected))
            }
        }
    }

    private func armAlarm() {
        do {
            try alarm.arm(at: schedule.earliestInstant())
        } catch {
            logger.error("cannot arm the local-notification alarm: \(error)")
        }
    }

    private func fireDue() {
        let firings = schedule.takeDue(now: Self.now())
        armAlarm()
        guard !firings.isEmpty else { return }
        for firing in firings {
            let notification = firing.notification.notification
            if isActive() {
                deliver(.localNotification(notification))
            } else {
                present(notification, buttons: firing.notification.buttons)
            }
        }
        changed()
    }

    private func handle(_ event: DesktopNotificationClient.Event) {
        switch event {
        case .actionInvoked(let id, let key):
            guard let banner = banners[id] else { return }
            if key == "default" {
                deliver(.localNotificationOpened(banner.notification))
            } else if let button = banner.buttons.first(where: { $0.identifier == key }) {
                if button.foreground { deliver(.foreground(true)) }
                deliver(.localNotificationAction(identifier: key, notification: banner.notification))
            }
        case .closed(let id, _):
            if let banner = banners.removeValue(forKey: id), bannerIDs[banner.notification.identifier] == id {
                bannerIDs[banner.notification.identifier] = nil
            }
        case .serverChanged:
            banners.removeAll()
            bannerIDs.removeAll()
        case .activationToken:
            break
        }
    }
}
