import AppLifecycle

/// What a ``LocalNotificationCenter`` needs from the host it runs in: where an app is, how to
/// hand it something, and how to start it.
///
/// lifecycled hosts every app it knows (it launches one that is not running, or brings a running
/// one to the foreground); `SystemdHost` hosts its one app, which runs whenever the center does,
/// so it is never asked to launch.
@MainActor
package protocol LocalNotificationCenterHost: AnyObject {
    /// Where an app is now: what decides between handing a notification over and showing a banner,
    /// and between telling a running app about a click and launching it.
    func presence(of appID: String) -> LocalNotificationCenter.AppPresence

    /// The name a banner shows as its `app_name` (the desktop entry's name, else the id).
    func displayName(of appID: String) -> String

    /// Hands something to a running app (``LocalNotificationCenter/AppPresence/starting`` and
    /// later); the host queues what an app that has not connected yet cannot take.
    func deliver(_ delivery: LocalNotificationCenter.Delivery, to appID: String) async

    /// Launches an app that is not running, with the notification (or the background launch of
    /// an action) in its launch options.
    ///
    /// - Parameters:
    ///   - appID: The app.
    ///   - options: Its launch options.
    ///   - activationToken: The notification server's `XDG_ACTIVATION_TOKEN` for the click, if any.
    /// - Throws: Why the app cannot be launched (no manifest, the host is stopping, the process failed).
    func launch(_ appID: String, options: LaunchOptions, activationToken: String?) throws
}
