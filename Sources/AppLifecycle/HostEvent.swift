import FoundationEssentials

/// A fact about the host that drives the app's lifecycle.
///
/// Host bridges (logind, the kernel's clock and memory-pressure interfaces, the session bus,
/// `lifecycled`, or the virtual host of the test kit) turn what they observe into
/// `HostEvent` values and hand them to ``Application/handle(_:)`` on the main actor. The
/// app's state follows from the facts it has been told (``sleeping(_:)``, ``locked(_:)``,
/// ``sessionActive(_:)``): repeating a fact is harmless, so two sources reporting the same
/// lock (a logind `Lock` signal and `LockedHint`) deliver the callbacks once.
public enum HostEvent: Sendable, Hashable {
    /// The machine is about to sleep (`true`, logind `PrepareForSleep(true)`) or has resumed (`false`).
    case sleeping(Bool)
    /// The session was locked (`true`) or unlocked (`false`): logind `Lock`/`Unlock`, `LockedHint`,
    /// or a screensaver's `ActiveChanged`.
    case locked(Bool)
    /// The app's session became the foreground session (`true`) or was switched away from (`false`).
    case sessionActive(Bool)
    /// The host wants the app in the foreground (`true`) or the background (`false`), as when
    /// the user switches apps or `lifecycled` backgrounds an app another one replaced.
    case foreground(Bool)
    /// One of the app's windows has the focus (`true`), or none has while the app stays in the
    /// foreground (`false`): the compositor shows its window beside the one the user works in.
    /// A foreground app without the focus is inactive, as an iOS app is under a system overlay;
    /// an app that was never told otherwise counts as focused.
    case focused(Bool)
    /// The host asks the app to terminate (shutdown, SIGTERM, a host request).
    case terminate(TerminationReason)
    /// The wall clock, the time zone, the date or the UTC offset changed significantly.
    case significantTimeChange(SignificantTimeChange)
    /// The host is short of memory.
    case memoryWarning(MemoryWarning)
    /// Someone asks the app to open a URL.
    case openURL(URL, OpenURLOptions)
    /// A remote (push) notification arrived with this payload.
    case remoteNotification(UserInfo)
    /// The user chose an action button on a push's banner (its `aps.category`'s actions):
    /// `application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)` in the
    /// background, with the 30 s completion budget local actions have.
    case remoteNotificationAction(identifier: String?, payload: UserInfo)
    /// The user clicked a push's banner while the app runs: the app comes to the foreground, then
    /// receives the payload in `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`
    /// (`application(_:didReceiveRemoteNotification:)` when the fetch variant is not implemented),
    /// while still inactive, as a click on a local notification's banner is received. A click that
    /// launches the app is ``LaunchOptions/remoteNotification`` instead.
    case remoteNotificationOpened(UserInfo)
    /// Registration for remote notifications succeeded with this device token.
    case registeredForRemoteNotifications(deviceToken: Data)
    /// Registration for remote notifications failed.
    case failedToRegisterForRemoteNotifications(ApplicationError)
    /// The push distributor dropped the app's registration by itself (UnifiedPush `Unregistered`):
    /// ``Application/isRegisteredForRemoteNotifications`` is `false` until the app registers again.
    case unregisteredForRemoteNotifications
    /// A scheduled local notification fired.
    case localNotification(LocalNotification)
    /// The user chose an action on a local notification.
    case localNotificationAction(identifier: String?, notification: LocalNotification)
    /// The user clicked a local notification's banner: the app comes to the foreground and
    /// receives it (`application(_:didReceive:)` while still inactive, as on iOS).
    case localNotificationOpened(LocalNotification)
    /// The host's schedule of this app's local notifications changed (one fired, a tool scheduled
    /// or cancelled one): what ``Application/scheduledLocalNotifications`` returns from now on.
    case scheduledLocalNotifications([LocalNotification])
    /// The host set the app's badge (a notification that fired while the app was not active).
    case applicationIconBadgeNumber(Int)
    /// The host offers the app a chance to fetch data in the background.
    case backgroundFetch
    /// Events for a background URL session with this identifier are waiting.
    case backgroundURLSessionEvents(identifier: String)
    /// Another device or app hands off an activity of this type; its data follows in ``continueUserActivity(_:)``.
    case willContinueUserActivity(type: String)
    /// The data for continuing an activity is available.
    case continueUserActivity(UserActivity)
    /// Continuing an activity of this type failed.
    case failedToContinueUserActivity(type: String, error: ApplicationError)
    /// An activity the app hands off was updated.
    case userActivityUpdated(UserActivity)
    /// The user chose a quick action for the app.
    case shortcutItem(ShortcutItem)
    /// The status bar (a panel, on Linux) is about to change orientation, over `duration` seconds.
    ///
    /// The app follows it only to an orientation it supports (``Application/supportedInterfaceOrientations(for:)``)
    /// that differs from its ``Application/statusBarOrientation``; a suspended app gets only the
    /// latest one, on its return to the foreground.
    case statusBarOrientation(InterfaceOrientation, duration: Double)
    /// The status bar's frame is about to change to this frame.
    case statusBarFrame(Rect)
    /// Low Power Mode was turned on (`true`) or off (`false`): power-profiles-daemon's active
    /// profile became or left `power-saver`. Sets ``Application/isLowPowerModeEnabled``.
    case lowPowerMode(Bool)
    /// The device's thermal state changed. Sets ``Application/thermalState``.
    case thermalState(ThermalState)
    /// Whether the app may be woken to fetch in the background changed (the user turned it off for
    /// the app, or Low Power Mode restricts it). Sets ``Application/backgroundRefreshStatus``.
    case backgroundRefreshStatus(BackgroundRefreshStatus)
}
