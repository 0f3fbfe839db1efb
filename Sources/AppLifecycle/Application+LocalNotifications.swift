import FoundationEssentials

extension Application {
    /// Registers what notifications may do and the categories of actions they may name
    /// (`registerUserNotificationSettings(_:)`).
    ///
    /// A Linux desktop asks the user nothing, so the settings are in force at once:
    /// ``currentUserNotificationSettings`` returns them, and
    /// `application(_:didRegister:)` is called with them.
    ///
    /// - Parameters:
    ///   - settings: The notification types and categories.
    public func registerUserNotificationSettings(_ settings: UserNotificationSettings) {
        currentUserNotificationSettings = settings
        deliver(
            DidRegisterUserNotificationSettingsMessage(settings: settings), "application(_:didRegister:)"
        ) {
            delegate.application(self, didRegister: settings)
        }
    }

    /// Schedules a local notification with the host (`scheduleLocalNotification(_:)`).
    ///
    /// The host keeps it until it fires, also while the app is not running. A notification with
    /// the identifier of one already scheduled replaces it. One that fails
    /// ``LocalNotification/validate()``, or names a category that was not registered, is not
    /// scheduled: the reason is logged as an error, and nothing else changes.
    ///
    /// - Parameters:
    ///   - notification: The notification; a `nil` fire date fires it at once.
    public func scheduleLocalNotification(_ notification: LocalNotification) {
        guard let actions = checkedActions(for: notification, "scheduleLocalNotification") else { return }
        scheduledLocalNotificationsMirror.removeAll { $0.identifier == notification.identifier }
        scheduledLocalNotificationsMirror.append(notification)
        host.application(self, schedule: notification, actions: actions)
    }

    /// Delivers a local notification now (`presentLocalNotificationNow(_:)`): to
    /// `application(_:didReceive:)` when the app is active, otherwise as a banner through the host.
    ///
    /// - Parameters:
    ///   - notification: The notification; its fire date is ignored.
    public func presentLocalNotificationNow(_ notification: LocalNotification) {
        guard checkedActions(for: notification, "presentLocalNotificationNow") != nil else { return }
        handle(.localNotification(notification))
    }

    /// Cancels a scheduled local notification, matched by identifier (`cancelLocalNotification(_:)`);
    /// a banner it showed stays.
    ///
    /// - Parameters:
    ///   - notification: The notification to cancel.
    public func cancelLocalNotification(_ notification: LocalNotification) {
        scheduledLocalNotificationsMirror.removeAll { $0.identifier == notification.identifier }
        host.application(self, cancelLocalNotifications: [notification.identifier])
    }

    /// Cancels every scheduled local notification of the app (`cancelAllLocalNotifications()`).
    public func cancelAllLocalNotifications() {
        scheduledLocalNotificationsMirror.removeAll()
        host.application(self, cancelLocalNotifications: nil)
    }

    /// The local notifications scheduled and not yet fired (a repeating one stays), as the host
    /// last reported them (`scheduledLocalNotifications`). Setting it replaces the whole schedule.
    public var scheduledLocalNotifications: [LocalNotification]? {
        get { scheduledLocalNotificationsMirror }
        set {
            cancelAllLocalNotifications()
            for notification in newValue ?? [] { scheduleLocalNotification(notification) }
        }
    }

    /// The banner buttons of a notification (its category's actions), or `nil` after logging why
    /// it cannot be scheduled.
    private func checkedActions(for notification: LocalNotification, _ caller: String) -> [UserNotificationAction]? {
        do {
            try notification.validate()
        } catch {
            logger.info("\(caller): notification '\(notification.identifier)' rejected: \(error.message)")
            return nil
        }
        guard let name = notification.category else { return [] }
        guard let category = currentUserNotificationSettings?.category(name) else {
            logger.info(
                "\(caller): notification '\(notification.identifier)' rejected: category '\(name)' was not registered with registerUserNotificationSettings(_:)"
            )
            return nil
        }
        return category.actions
    }
}

extension Application {
    /// Applies a change of the schedule the host reports (the identifiers that left it, the
    /// notifications added or replaced) to ``scheduledLocalNotifications``: the one projection of
    /// the host's schedule that both hosts hand the app, kept in the host's order.
    ///
    /// - Parameters:
    ///   - removed: Identifiers no longer scheduled.
    ///   - updated: Notifications added or replaced (by identifier).
    package func applyScheduleChange(removed: [String], updated: [LocalNotification]) {
        let changed = Set(removed).union(updated.map(\.identifier))
        let kept = (scheduledLocalNotifications ?? []).filter { !changed.contains($0.identifier) }
        handle(.scheduledLocalNotifications(kept + updated))
    }
}
