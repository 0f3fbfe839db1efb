import FoundationEssentials

/// The methods an app implements to respond to the events of its life cycle.
///
/// The Linux counterpart of `UIApplicationDelegate`, with UIKit's Swift names minus the `UI`
/// prefix. Every method is optional: the default implementations return UIKit's defaults.
/// ``Application`` also knows which methods you did *not* implement, and applies the seeds'
/// rules that depend on it:
///
/// - The return values of `willFinishLaunchingWithOptions` and `didFinishLaunchingWithOptions`
///   decide whether a launch URL is opened; when only one is implemented, only its value counts.
/// - `applicationDidFinishLaunching(_:)` is called only when `didFinishLaunchingWithOptions` is
///   not implemented.
/// - A URL goes to `application(_:open:options:)`; when that is not implemented, to
///   `application(_:open:sourceApplication:annotation:)`; then to `application(_:handleOpen:)`.
/// - A remote notification goes to the `fetchCompletionHandler` variant when it is implemented,
///   instead of `application(_:didReceiveRemoteNotification:)`.
/// - State is preserved only when both `shouldSaveApplicationState` and
///   `shouldRestoreApplicationState` are implemented.
///
/// All methods run on the main actor. Completion handlers are `Sendable`: call them from any
/// task, exactly once.
@MainActor
public protocol ApplicationDelegate: AnyObject {
    /// The app's main top-level surface, or `nil` (the default) when the app has none.
    ///
    /// UIKit's `window` presents a storyboard; AppLifecycle owns no toolkit, so on Linux this
    /// only names the surface for callbacks that take a window (see ``Window``).
    var window: Window? { get }

    // MARK: Launching

    /// Tells the delegate that the launch process has begun but state restoration has not yet occurred.
    ///
    /// The app is inactive while this runs. Return `false` if the app cannot handle the launch
    /// URL in `launchOptions`; the value is ignored when the app was launched for a remote notification.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - launchOptions: Why the app was launched, or `nil` when the user launched it directly.
    /// - Returns: `false` to refuse the launch URL. Default: `true` (and not counted, since not implemented).
    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool

    /// Tells the delegate that the launch process is almost done and the app is almost ready to run.
    ///
    /// Called after state restoration. `UIApplicationDidFinishLaunchingNotification` is posted
    /// shortly after it returns, with the launch options as userInfo.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - launchOptions: Why the app was launched, or `nil`.
    /// - Returns: `false` to refuse the launch URL. Default: `true` (and not counted).
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool

    /// Tells the delegate that the app has finished launching (deprecated in favour of
    /// `application(_:didFinishLaunchingWithOptions:)`, which takes precedence).
    func applicationDidFinishLaunching(_ application: Application)

    // MARK: Transitions

    /// Tells the delegate that the app has become active (inactive → active).
    ///
    /// `UIApplicationDidBecomeActiveNotification` is posted after this method returns.
    func applicationDidBecomeActive(_ application: Application)

    /// Tells the delegate that the app is about to become inactive (active → inactive).
    ///
    /// `UIApplicationWillResignActiveNotification` is posted after this method returns.
    func applicationWillResignActive(_ application: Application)

    /// Tells the delegate that the app is now in the background (inactive → background).
    ///
    /// You have about five seconds; begin a background task for longer work.
    /// `UIApplicationDidEnterBackgroundNotification` is posted after this method returns.
    func applicationDidEnterBackground(_ application: Application)

    /// Tells the delegate that the app is about to enter the foreground (background → inactive).
    ///
    /// `UIApplicationWillEnterForegroundNotification` is posted shortly *before* this method is
    /// called. It is always followed by `applicationDidBecomeActive(_:)` unless the session is locked.
    func applicationWillEnterForeground(_ application: Application)

    /// Tells the delegate that the app is about to terminate.
    ///
    /// You have about five seconds (``Application/Configuration/callbackDeadline``); past
    /// that the process is ended. `UIApplicationWillTerminateNotification` is posted after this
    /// method returns.
    func applicationWillTerminate(_ application: Application)

    // MARK: System events

    /// Tells the delegate that the host is short of memory.
    ///
    /// `UIApplicationDidReceiveMemoryWarningNotification` is posted after this method returns,
    /// with the level in its userInfo (``ApplicationUserInfoKey/memoryWarningLevel``).
    func applicationDidReceiveMemoryWarning(_ application: Application)

    /// Tells the delegate that the time changed significantly (midnight, a clock set, a time
    /// zone or daylight-saving change).
    ///
    /// `UIApplicationSignificantTimeChangeNotification` is posted *before* this method is called.
    /// While the app is suspended the change is queued, and only the latest is delivered when the
    /// app returns to the foreground.
    func applicationSignificantTimeChange(_ application: Application)

    /// Tells the delegate that protected files are about to become unavailable (the session is locking).
    func applicationProtectedDataWillBecomeUnavailable(_ application: Application)

    /// Tells the delegate that protected files are available again (the session was unlocked).
    func applicationProtectedDataDidBecomeAvailable(_ application: Application)

    // MARK: Interface geometry

    /// Tells the delegate that the status bar's orientation is about to change.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - newStatusBarOrientation: The new orientation.
    ///   - duration: The length of the rotation, in seconds.
    func application(
        _ application: Application, willChangeStatusBarOrientation newStatusBarOrientation: InterfaceOrientation,
        duration: TimeInterval)

    /// Tells the delegate that the status bar's orientation changed.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - oldStatusBarOrientation: The previous orientation.
    func application(
        _ application: Application, didChangeStatusBarOrientation oldStatusBarOrientation: InterfaceOrientation)

    /// Tells the delegate that the status bar's frame is about to change.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - newStatusBarFrame: The new frame, in screen coordinates.
    func application(_ application: Application, willChangeStatusBarFrame newStatusBarFrame: Rect)

    /// Tells the delegate that the status bar's frame changed.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - oldStatusBarFrame: The previous frame.
    func application(_ application: Application, didChangeStatusBarFrame oldStatusBarFrame: Rect)

    /// Asks the delegate for the interface orientations to use in a window.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - window: The window, or `nil`.
    /// - Returns: The orientations. Default: ``Application/Configuration/supportedInterfaceOrientations``.
    func application(_ application: Application, supportedInterfaceOrientationsFor window: Window?)
        -> InterfaceOrientationMask

    // MARK: State restoration

    /// Asks the delegate whether the app's state should be preserved.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - coder: The archive to write version information into.
    /// - Returns: `true` to preserve. Default: `false`.
    func application(_ application: Application, shouldSaveApplicationState coder: StateRestorationCoder) -> Bool

    /// Asks the delegate whether the app's saved state should be restored.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - coder: The saved archive.
    /// - Returns: `true` to restore. Default: `false`.
    func application(_ application: Application, shouldRestoreApplicationState coder: StateRestorationCoder) -> Bool

    /// Tells the delegate to save high-level state at the beginning of preservation.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - coder: The archive to write into.
    func application(_ application: Application, willEncodeRestorableStateWith coder: StateRestorationCoder)

    /// Tells the delegate to restore high-level state as the final step of restoration.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - coder: The saved archive.
    func application(_ application: Application, didDecodeRestorableStateWith coder: StateRestorationCoder)

    /// Asks the delegate for the restorable object at an identifier path (UIKit's
    /// `viewControllerWithRestorationIdentifierPath`).
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - identifierComponents: The restoration identifiers from the root to the object.
    ///   - coder: The saved archive.
    /// - Returns: The object, or `nil` not to restore it. Default: `nil`.
    func application(
        _ application: Application, restorableObjectWithIdentifierPath identifierComponents: [String],
        coder: StateRestorationCoder
    ) -> AnyObject?

    // MARK: Opening URLs

    /// Asks the delegate to open a resource specified by a URL.
    ///
    /// When the app had to be launched for the URL, this is called after
    /// `didFinishLaunchingWithOptions`, and only if the launch methods did not refuse it. A URL
    /// that arrives while the app is in the background first brings it to the foreground.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - url: The URL to open: one of the schemes the app claims.
    ///   - options: Who asked, and what they sent along.
    /// - Returns: Whether the URL was handled. Default: `false`.
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool

    /// Asks the delegate to open a URL (deprecated: used only when `application(_:open:options:)`
    /// is not implemented).
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - url: The URL to open: one of the schemes the app claims.
    ///   - sourceApplication: The identifier of the app that asked.
    ///   - annotation: The property-list value it sent along.
    /// - Returns: Whether the URL was handled. Default: `false`.
    func application(_ application: Application, open url: URL, sourceApplication: String?, annotation: UserInfoValue?)
        -> Bool

    /// Asks the delegate to open a URL (deprecated: used only when neither other open method is implemented).
    ///
    /// - Returns: Whether the URL was handled. Default: `false`.
    func application(_ application: Application, handleOpen url: URL) -> Bool

    // MARK: Remote notifications

    /// Tells the delegate that the app registered for remote notifications.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - deviceToken: The token that identifies this installation to the push provider.
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)

    /// Tells the delegate that registration for remote notifications failed.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - error: Why it failed.
    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error)

    /// Tells the delegate that the running app received a remote notification.
    ///
    /// Not called when the `fetchCompletionHandler` variant is implemented, nor for the
    /// notification that launched the app (that one is in the launch options).
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - userInfo: The payload.
    func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo)

    /// Tells the app that a remote notification arrived that indicates there is data to fetch.
    ///
    /// Called whatever the app's state: a suspended app is moved to the background first. Call
    /// the handler within 30 seconds; the app does not suspend before it is called.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - userInfo: The payload.
    ///   - completionHandler: Call with the fetch's result.
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void)

    /// Tells the delegate to perform a custom action the user chose on a remote notification.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - identifier: The action's identifier.
    ///   - userInfo: The notification's payload.
    ///   - completionHandler: Call when done.
    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: UserInfo, completionHandler: @escaping @Sendable () -> Void)

    // MARK: Local notifications

    /// Tells the delegate what the app registered with `registerUserNotificationSettings(_:)`
    /// (`application(_:didRegister:)`); on Linux these are always the settings asked for.
    func application(_ application: Application, didRegister notificationSettings: UserNotificationSettings)

    /// Tells the delegate that the running app received a local notification.
    ///
    /// Called when the notification fires while the app is in the foreground, and after
    /// `didFinishLaunchingWithOptions` when the app was launched for it.
    func application(_ application: Application, didReceive notification: LocalNotification)

    /// Tells the delegate that the user chose a custom action on a local notification.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - identifier: The action's identifier.
    ///   - notification: The local notification the action was chosen on.
    ///   - completionHandler: Call when done.
    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?, for notification: LocalNotification,
        completionHandler: @escaping @Sendable () -> Void)

    // MARK: Background execution

    /// Tells the app that it can begin a fetch operation if it has data to download.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - completionHandler: Call with the result within 30 seconds.
    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void)

    /// Tells the delegate that events for a background URL session are waiting.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - identifier: The session's identifier.
    ///   - completionHandler: Call when the events are processed.
    func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void)

    // MARK: User activity and quick actions

    /// Asks the delegate whether it informs the user about an activity being continued.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - userActivityType: The activity's type.
    /// - Returns: `true` if the app notifies the user itself. Default: `false`.
    func application(_ application: Application, willContinueUserActivityWithType userActivityType: String) -> Bool

    /// Tells the delegate that the data for continuing an activity is available.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - userActivity: The activity to continue: its type, title and payload.
    ///   - restorationHandler: Call with the objects that continue it.
    /// - Returns: Whether the app continued the activity. Default: `false`.
    func application(
        _ application: Application, continue userActivity: UserActivity,
        restorationHandler: @escaping @Sendable ([String]?) -> Void
    ) -> Bool

    /// Tells the delegate that an activity was updated.
    func application(_ application: Application, didUpdate userActivity: UserActivity)

    /// Tells the delegate that an activity could not be continued.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - userActivityType: The activity's type.
    ///   - error: Why.
    func application(
        _ application: Application, didFailToContinueUserActivityWithType userActivityType: String, error: any Error)

    /// Tells the delegate that the user chose a quick action.
    ///
    /// Not called for the quick action that launched the app when a launch method returned `false`.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - shortcutItem: The action.
    ///   - completionHandler: Call with whether the action was handled.
    func application(
        _ application: Application, performActionFor shortcutItem: ShortcutItem,
        completionHandler: @escaping @Sendable (Bool) -> Void)

    /// Asks the delegate whether to allow extensions of a kind.
    ///
    /// - Parameters:
    ///   - application: The app object whose delegate this is.
    ///   - extensionPointIdentifier: The kind of extension.
    /// - Returns: Whether to allow it. Default: `true`.
    func application(
        _ application: Application,
        shouldAllowExtensionPointIdentifier extensionPointIdentifier: ExtensionPointIdentifier
    ) -> Bool
}

/// Counts how often a default (unimplemented) delegate method ran, so ``Application`` can tell
/// an implemented method from the default without Objective-C's `respondsToSelector:`.
///
/// Each invocation pushes a frame; a default implementation marks the innermost frame, so a
/// delegate method that itself asks the app something (which calls another delegate method)
/// is still seen as implemented.
@MainActor
enum DelegateDefaults {
    static var frames: [Bool] = []
    static func hit() {
        if !frames.isEmpty { frames[frames.count - 1] = true }
    }
}

extension ApplicationDelegate {
    /// No window.
    public var window: Window? { nil }

    /// Not implemented: returns `true`, and does not count for launch-URL gating.
    public func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions?)
        -> Bool
    {
        DelegateDefaults.hit()
        return true
    }

    /// Not implemented: returns `true`, and does not count for launch-URL gating.
    public func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?)
        -> Bool
    {
        DelegateDefaults.hit()
        return true
    }

    /// Not implemented: does nothing.
    public func applicationDidFinishLaunching(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationDidBecomeActive(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationWillResignActive(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationDidEnterBackground(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationWillEnterForeground(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationWillTerminate(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationDidReceiveMemoryWarning(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationSignificantTimeChange(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationProtectedDataWillBecomeUnavailable(_ application: Application) { DelegateDefaults.hit() }
    /// Not implemented: does nothing.
    public func applicationProtectedDataDidBecomeAvailable(_ application: Application) { DelegateDefaults.hit() }

    /// Not implemented: does nothing.
    public func application(
        _ application: Application, willChangeStatusBarOrientation newStatusBarOrientation: InterfaceOrientation,
        duration: TimeInterval
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(
        _ application: Application, didChangeStatusBarOrientation oldStatusBarOrientation: InterfaceOrientation
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, willChangeStatusBarFrame newStatusBarFrame: Rect) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didChangeStatusBarFrame oldStatusBarFrame: Rect) {
        DelegateDefaults.hit()
    }
    /// Not implemented: the app's configured orientations.
    public func application(_ application: Application, supportedInterfaceOrientationsFor window: Window?)
        -> InterfaceOrientationMask
    {
        DelegateDefaults.hit()
        return application.configuration.supportedInterfaceOrientations
    }

    /// Not implemented: `false` (no preservation).
    public func application(_ application: Application, shouldSaveApplicationState coder: StateRestorationCoder) -> Bool
    {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: `false` (no restoration).
    public func application(_ application: Application, shouldRestoreApplicationState coder: StateRestorationCoder)
        -> Bool
    {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, willEncodeRestorableStateWith coder: StateRestorationCoder) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didDecodeRestorableStateWith coder: StateRestorationCoder) {
        DelegateDefaults.hit()
    }
    /// Not implemented: `nil`.
    public func application(
        _ application: Application, restorableObjectWithIdentifierPath identifierComponents: [String],
        coder: StateRestorationCoder
    ) -> AnyObject? {
        DelegateDefaults.hit()
        return nil
    }

    /// Not implemented: `false`.
    public func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: `false`.
    public func application(
        _ application: Application, open url: URL, sourceApplication: String?, annotation: UserInfoValue?
    ) -> Bool {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: `false`.
    public func application(_ application: Application, handleOpen url: URL) -> Bool {
        DelegateDefaults.hit()
        return false
    }

    /// Not implemented: does nothing.
    public func application(
        _ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(
        _ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing (the plain variant is used instead).
    public func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: completes at once.
    public func application(
        _ application: Application, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: UserInfo, completionHandler: @escaping @Sendable () -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didRegister notificationSettings: UserNotificationSettings) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didReceive notification: LocalNotification) {
        DelegateDefaults.hit()
    }
    /// Not implemented: completes at once.
    public func application(
        _ application: Application, handleActionWithIdentifier identifier: String?, for notification: LocalNotification,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: completes with ``BackgroundFetchResult/noData``.
    public func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: completes at once.
    public func application(
        _ application: Application, handleEventsForBackgroundURLSession identifier: String,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: `false`.
    public func application(_ application: Application, willContinueUserActivityWithType userActivityType: String)
        -> Bool
    {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: `false`.
    public func application(
        _ application: Application, continue userActivity: UserActivity,
        restorationHandler: @escaping @Sendable ([String]?) -> Void
    ) -> Bool {
        DelegateDefaults.hit()
        return false
    }
    /// Not implemented: does nothing.
    public func application(_ application: Application, didUpdate userActivity: UserActivity) {
        DelegateDefaults.hit()
    }
    /// Not implemented: does nothing.
    public func application(
        _ application: Application, didFailToContinueUserActivityWithType userActivityType: String, error: any Error
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: completes with `false`.
    public func application(
        _ application: Application, performActionFor shortcutItem: ShortcutItem,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        DelegateDefaults.hit()
    }
    /// Not implemented: `true`.
    public func application(
        _ application: Application,
        shouldAllowExtensionPointIdentifier extensionPointIdentifier: ExtensionPointIdentifier
    ) -> Bool {
        DelegateDefaults.hit()
        return true
    }
}
