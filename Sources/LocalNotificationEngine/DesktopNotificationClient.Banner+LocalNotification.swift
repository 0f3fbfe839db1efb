import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration

extension DesktopNotificationClient.Banner {
    /// The banner of a local notification: the title as summary (the body when there is no title),
    /// the default action unless `hasAction` is false, the buttons, and the hints
    /// `desktop-entry` (the app id), `urgency` (normal) and `sound-name`.
    ///
    /// - Parameters:
    ///   - notification: The notification.
    ///   - buttons: Its category's actions.
    ///   - appID: The app's id (its desktop-file id).
    ///   - appName: The name shown as `app_name`.
    package init(
        notification: LocalNotification, buttons: [ScheduledLocalNotification.Button], appID: String,
        appName: String
    ) {
        self.init(
            appName: appName, summary: notification.alertTitle ?? notification.alertBody ?? "",
            body: notification.alertTitle == nil ? "" : notification.alertBody ?? "")
        if notification.hasAction { actions.append(("default", notification.alertAction ?? "Open")) }
        for button in buttons { actions.append((button.identifier, button.title)) }
        hints["desktop-entry"] = .string(appID)
        hints["urgency"] = .byte(1)
        if let sound = notification.soundName { hints["sound-name"] = .string(sound) }
    }
}
