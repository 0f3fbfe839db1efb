import AppLifecycle
import FoundationEssentials
import LocalNotificationEngine

/// Local notifications and the badge of an app that runs without lifecycled: the app's hooks
/// call the engine (``LocalNotificationCenter``, serving this one app), and this host is the
/// engine's host.
///
/// The schedule is kept in `$STATE_DIRECTORY/local-notifications.json` (else
/// `$XDG_STATE_HOME/<app id>/…`), so what was scheduled survives a restart; a notification whose
/// time passed while the app was not running fires once when it next runs. Nothing relaunches
/// the app: the engine runs only while the app does (that is lifecycled's job).
extension SystemdHost {
    /// Keeps the schedule (in `$STATE_DIRECTORY`) and fires it while the app runs.
    public func application(
        _ application: Application, schedule notification: LocalNotification, actions: [UserNotificationAction]
    ) {
        guard let notificationCenter else { return }
        let scheduled: ScheduledLocalNotification
        do {
            scheduled = try Self.scheduled(
                notification, actions: actions, appID: application.configuration.applicationIdentifier)
        } catch {
            logger.info("local notification '\(notification.identifier)' rejected: \(error.message)")
            return
        }
        // Immediate: the engine takes the notification (as pending) in the order the app called.
        Task.immediate { @MainActor [logger] in
            do {
                try await notificationCenter.schedule(scheduled)
            } catch {
                logger.info("local notification '\(notification.identifier)' not scheduled: \(error)")
            }
        }
    }

    /// Drops scheduled notifications, their banners and what is kept of them.
    public func application(_ application: Application, cancelLocalNotifications identifiers: [String]?) {
        guard let notificationCenter else { return }
        let id = application.configuration.applicationIdentifier
        Task.immediate { @MainActor [logger] in
            for identifier in identifiers.map({ $0.map(Optional.some) }) ?? [nil] {
                do {
                    try await notificationCenter.cancel(id, identifier: identifier)
                } catch let refusal as LocalNotificationCenter.Refusal where refusal.code == .unknownNotification {
                    // Nothing of that identifier: nothing to do.
                } catch {
                    logger.info("local notifications: cancel not saved: \(error)")
                }
            }
        }
    }

    /// Shows the notification as a banner (the app is not active).
    public func application(_ application: Application, present notification: LocalNotification) {
        let actions =
            notification.category.flatMap { application.currentUserNotificationSettings?.category($0) }?
            .actions ?? []
        do {
            notificationCenter?.present(
                try Self.scheduled(
                    notification, actions: actions, appID: application.configuration.applicationIdentifier))
        } catch {
            logger.info("local notification '\(notification.identifier)' rejected: \(error.message)")
        }
    }

    /// Shows a push's `aps.alert` as a banner that remembers it is remote: a click on it is
    /// `HostEvent.remoteNotificationOpened`, a button `HostEvent.remoteNotificationAction`.
    public func application(
        _ application: Application, presentRemoteNotification payload: UserInfo, banner: LocalNotification,
        actions: [UserNotificationAction]
    ) {
        do {
            notificationCenter?.present(
                try Self.scheduled(
                    banner, actions: actions, appID: application.configuration.applicationIdentifier, isRemote: true))
        } catch {
            logger.info("remote notification banner '\(banner.identifier)' rejected: \(error.message)")
        }
    }

    /// Announces the badge with `com.canonical.Unity.LauncherEntry.Update`.
    public func application(_ application: Application, didChangeApplicationIconBadgeNumber number: Int) {
        notificationCenter?.setBadge(application.configuration.applicationIdentifier, number, tellApp: false)
    }

    /// A notification of the app with its category's actions as the banner's buttons.
    private static func scheduled(
        _ notification: LocalNotification, actions: [UserNotificationAction], appID: String, isRemote: Bool = false
    ) throws(ApplicationError) -> ScheduledLocalNotification {
        try ScheduledLocalNotification(
            appID: appID, payload: notification.propertyList.dictionaryValue ?? [:],
            buttons: actions.map {
                .init(identifier: $0.identifier, title: $0.title, foreground: $0.activationMode == .foreground)
            },
            scheduledAt: Date(), isRemote: isRemote)
    }
}

extension SystemdHost: LocalNotificationCenterHost {
    /// The one app: active, or running (it runs whenever the engine does); any other app is unknown.
    package func presence(of appID: String) -> LocalNotificationCenter.AppPresence {
        guard let application, application.configuration.applicationIdentifier == appID else { return .unknown }
        return application.applicationState == .active ? .active : .running
    }

    /// The app id (there is no manifest without lifecycled).
    package func displayName(of appID: String) -> String { appID }

    /// The event for the app; a schedule change is applied to the app's schedule as it is.
    package func deliver(_ delivery: LocalNotificationCenter.Delivery, to appID: String) async {
        guard let application else { return }
        switch delivery {
        case .notification(let notification): application.handle(.localNotification(notification))
        case .opened(let notification, _): application.handle(.localNotificationOpened(notification))
        case .foreground: application.handle(.foreground(true))
        case .action(let identifier, let notification):
            application.handle(.localNotificationAction(identifier: identifier, notification: notification))
        case .remoteOpened(let payload, _): application.handle(.remoteNotificationOpened(payload))
        case .remoteAction(let identifier, let payload):
            application.handle(.remoteNotificationAction(identifier: identifier, payload: payload))
        case .badge(let count): application.handle(.applicationIconBadgeNumber(count))
        case .scheduleChanged(let removed, let updated):
            // As LifecycledHost applies lifecycled's change: the same projection in both hosts.
            application.applyScheduleChange(removed: removed, updated: updated)
        }
    }

    /// Never asked: the app runs whenever the engine does.
    package func launch(_ appID: String, options: LaunchOptions, activationToken: String?) throws {
        throw ApplicationError(.host, "\(appID) runs in this process; it cannot be launched")
    }
}
