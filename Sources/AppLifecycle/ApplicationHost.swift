import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What drives an ``Application``: the source of host events and the receiver of the app's
/// acknowledgements.
///
/// A host hands facts to the app through ``Application/handle(_:)`` and learns what the app did
/// through the methods below, all on the main actor. Every method has a default that does
/// nothing, so a host implements only what it needs. AppLifecycle ships two: the virtual host of
/// `AppLifecycleTesting`, and the systemd host of `AppLifecycleSystemd` (logind, the kernel's
/// clocks and memory pressure, `sd_notify`).
@MainActor
public protocol ApplicationHost: AnyObject {
    /// The time source for background time and callback deadlines.
    var scheduler: any LifecycleScheduler { get }

    /// Called by ``Application/run(launchOptions:)`` before the launch sequence, and awaited.
    ///
    /// Start sources here and report the facts that hold at launch (the session is locked, the
    /// session is not the active one) through ``Application/handle(_:)``, so the app launches
    /// straight into the right state instead of becoming active and resigning at once.
    func prepare(_ application: Application) async

    /// Launch options the host learned while preparing (from a daemon that launched the app, say);
    /// ``Application/run(launchOptions:)`` lays them over the ones it was given. Default: `nil`.
    var hostLaunchOptions: LaunchOptions? { get }

    /// Called when the app began a background task, before `beginBackgroundTask` returns.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - identifier: The task, as `beginBackgroundTask` returned it to the app.
    ///   - name: The name the app gave it.
    func application(
        _ application: Application, didBeginBackgroundTask identifier: BackgroundTaskIdentifier, name: String?)

    /// Called when a background task ended: by `endBackgroundTask`, or forcibly when background
    /// time ran out and its expiration handler did not end it.
    func application(_ application: Application, didEndBackgroundTask identifier: BackgroundTaskIdentifier)

    /// Called once before the launch sequence; start sources and call ``Application/handle(_:)`` from here on.
    func applicationWillLaunch(_ application: Application)

    /// Called after launching finished (after the DidFinishLaunching notification); systemd hosts send `READY=1`.
    func applicationDidFinishLaunching(_ application: Application)

    /// Called after every state change.
    ///
    /// A host that holds a sleep delay lock releases it when the app reaches
    /// ``ApplicationState/suspended``: the callbacks have returned and every background task ended or expired.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - previousState: The state before.
    ///   - state: The state after.
    func application(
        _ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState)

    /// Called when termination begins, before `applicationWillTerminate(_:)`; systemd hosts send
    /// `STOPPING=1` and extend their stop timeout by the deadline.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - deadline: How long the termination callbacks have.
    func applicationWillTerminate(_ application: Application, deadline: Duration)

    /// Called after the app reached ``ApplicationState/notRunning``; stop every source.
    func applicationDidTerminate(_ application: Application)

    /// What to do when a synchronous callback overruns its deadline (called on any thread, while
    /// the main actor may still be blocked in the callback).
    ///
    /// The default ends the process at once with exit status 1, as iOS kills such an app. The
    /// virtual host records the overrun instead, and the app then acts as if it had been killed.
    var callbackDeadlineHandler: @Sendable (_ callback: String) -> Void { get }

    /// Called after the app handled (or refused) a URL.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - url: The URL the app was asked to open.
    ///   - handled: Whether the delegate handled it.
    func application(_ application: Application, didOpen url: URL, handled: Bool)

    /// Asks the host to present a local notification that fired while the app was not active (as a banner).
    func application(_ application: Application, present notification: LocalNotification)

    /// Asks the host to show a push's `aps.alert` as a banner (the app is not active) that
    /// remembers it is remote: a click on it brings a running app to the foreground with
    /// ``HostEvent/remoteNotificationOpened(_:)`` or launches it with ``LaunchOptions/remoteNotification``
    /// (and the click's activation token), and a button runs
    /// ``HostEvent/remoteNotificationAction(identifier:payload:)`` in the background (launching the
    /// app there if needed). The default presents `banner` as a local notification.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - payload: The push's payload, as the app receives it again.
    ///   - banner: The banner: `aps.alert`'s title and body, `aps.sound`, `aps.category`, the payload as userInfo.
    ///   - actions: The banner's buttons: the actions of the registered category `aps.category` names.
    func application(
        _ application: Application, presentRemoteNotification payload: UserInfo, banner: LocalNotification,
        actions: [UserNotificationAction])

    /// Asks the host to keep a local notification until its fire date and deliver it then
    /// (as ``HostEvent/localNotification(_:)`` when the app is active, as a banner otherwise).
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - notification: A validated notification; it replaces one with the same identifier.
    ///   - actions: The banner's buttons: the actions of its registered category.
    func application(
        _ application: Application, schedule notification: LocalNotification, actions: [UserNotificationAction])

    /// Asks the host to drop scheduled local notifications.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - identifiers: The identifiers to drop, or `nil` for all of the app's.
    func application(_ application: Application, cancelLocalNotifications identifiers: [String]?)

    /// The app set ``Application/applicationIconBadgeNumber``: announce it on the desktop.
    func application(_ application: Application, didChangeApplicationIconBadgeNumber number: Int)

    /// The app set ``Application/isIdleTimerDisabled``: hold (while active) or drop the idle inhibitor.
    func application(_ application: Application, didChangeIdleTimerDisabled disabled: Bool)

    /// The app called ``Application/setMinimumBackgroundFetchInterval(_:)``: schedule its
    /// background fetches at most this often (seconds; ``Application/backgroundFetchIntervalNever``
    /// stops them). Called only when the interval changes.
    func application(_ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval)

    /// Opens a URL outside the app (``Application/open(_:options:completionHandler:)``) and calls
    /// `completionHandler` on the main actor with whether it was handed to a handler.
    func application(
        _ application: Application, open url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue],
        completionHandler: @escaping @MainActor @Sendable (Bool) -> Void)

    /// Whether some app would handle the URL (``Application/canOpenURL(_:)``), answered from what
    /// the host knows already: never by launching anything or waiting on the bus.
    func application(_ application: Application, canOpen url: URL) -> Bool

    /// The app set ``Application/shortcutItems``: publish its dynamic quick actions.
    func application(_ application: Application, didChangeShortcutItems items: [ShortcutItem])

    /// The app called ``Application/registerForRemoteNotifications()``: register with the push
    /// distributor, then answer with ``HostEvent/registeredForRemoteNotifications(deviceToken:)``
    /// or ``HostEvent/failedToRegisterForRemoteNotifications(_:)`` through ``Application/handle(_:)``.
    func registerForRemoteNotifications(_ application: Application)

    /// The app called ``Application/unregisterForRemoteNotifications()``: drop the registration.
    func unregisterForRemoteNotifications(_ application: Application)
}

extension ApplicationHost {
    /// Does nothing.
    public func prepare(_ application: Application) async {}
    /// None.
    public var hostLaunchOptions: LaunchOptions? { nil }
    /// Does nothing.
    public func application(
        _ application: Application, didBeginBackgroundTask identifier: BackgroundTaskIdentifier, name: String?
    ) {}
    /// Does nothing.
    public func application(_ application: Application, didEndBackgroundTask identifier: BackgroundTaskIdentifier) {}
    /// Does nothing.
    public func applicationWillLaunch(_ application: Application) {}
    /// Does nothing.
    public func applicationDidFinishLaunching(_ application: Application) {}
    /// Does nothing.
    public func application(
        _ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState
    ) {}
    /// Does nothing.
    public func applicationWillTerminate(_ application: Application, deadline: Duration) {}
    /// Does nothing.
    public func applicationDidTerminate(_ application: Application) {}
    /// Logs to standard error and ends the process with status 1.
    public var callbackDeadlineHandler: @Sendable (_ callback: String) -> Void {
        { callback in
            let line = "AppLifecycle: \(callback) overran its deadline; ending the process\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
            _exit(1)
        }
    }
    /// Does nothing.
    public func application(_ application: Application, didOpen url: URL, handled: Bool) {}
    /// Does nothing (the notification is logged by the app).
    public func application(_ application: Application, present notification: LocalNotification) {}
    /// Presents the banner as a local notification (``application(_:present:)``).
    public func application(
        _ application: Application, presentRemoteNotification payload: UserInfo, banner: LocalNotification,
        actions: [UserNotificationAction]
    ) {
        self.application(application, present: banner)
    }
    /// Does nothing: a host without a schedule drops the notification.
    public func application(
        _ application: Application, schedule notification: LocalNotification, actions: [UserNotificationAction]
    ) {}
    /// Does nothing.
    public func application(_ application: Application, cancelLocalNotifications identifiers: [String]?) {}
    /// Does nothing.
    public func application(_ application: Application, didChangeApplicationIconBadgeNumber number: Int) {}
    /// Does nothing.
    public func application(_ application: Application, didChangeIdleTimerDisabled disabled: Bool) {}
    /// Does nothing: this host never fetches in the background.
    public func application(
        _ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval
    ) {}
    /// Opens nothing: calls the completion handler with `false`.
    public func application(
        _ application: Application, open url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue],
        completionHandler: @escaping @MainActor @Sendable (Bool) -> Void
    ) {
        completionHandler(false)
    }
    /// `false`.
    public func application(_ application: Application, canOpen url: URL) -> Bool { false }
    /// Does nothing.
    public func application(_ application: Application, didChangeShortcutItems items: [ShortcutItem]) {}
    /// Answers with ``ApplicationError/Code/noPushDistributor``: this host has no push service.
    public func registerForRemoteNotifications(_ application: Application) {
        Task { @MainActor [weak application] in
            application?.handle(
                .failedToRegisterForRemoteNotifications(
                    ApplicationError(.noPushDistributor, "this host has no push service")))
        }
    }
    /// Does nothing.
    public func unregisterForRemoteNotifications(_ application: Application) {}
}
