import AppLifecycle
import AppLifecycleTesting
import Foundation

/// A delegate that implements every method, with hooks and configurable answers.
@MainActor
final class FullDelegate: ApplicationDelegate {
    var willFinishResult = true
    var didFinishResult = true
    var openResult = true
    var onDidEnterBackground: ((Application) -> Void)?
    var onWillTerminate: ((Application) -> Void)?
    var onDidBecomeActive: ((Application) -> Void)?
    var onWillResignActive: ((Application) -> Void)?
    var fetchCompletion: (@Sendable (BackgroundFetchResult) -> Void)?
    var restoreState = true
    var saveState = true
    var restoredPaths: [[String]] = []

    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        willFinishResult
    }
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        didFinishResult
    }
    func applicationDidFinishLaunching(_ application: Application) {}
    func applicationDidBecomeActive(_ application: Application) { onDidBecomeActive?(application) }
    func applicationWillResignActive(_ application: Application) { onWillResignActive?(application) }
    func applicationDidEnterBackground(_ application: Application) { onDidEnterBackground?(application) }
    func applicationWillEnterForeground(_ application: Application) {}
    func applicationWillTerminate(_ application: Application) { onWillTerminate?(application) }
    func applicationDidReceiveMemoryWarning(_ application: Application) {}
    func applicationSignificantTimeChange(_ application: Application) {}
    func applicationProtectedDataWillBecomeUnavailable(_ application: Application) {}
    func applicationProtectedDataDidBecomeAvailable(_ application: Application) {}
    func application(
        _ application: Application, willChangeStatusBarOrientation newStatusBarOrientation: InterfaceOrientation,
        duration: TimeInterval
    ) {}
    func application(
        _ application: Application, didChangeStatusBarOrientation oldStatusBarOrientation: InterfaceOrientation
    ) {}
    func application(_ application: Application, willChangeStatusBarFrame newStatusBarFrame: Rect) {}
    func application(_ application: Application, didChangeStatusBarFrame oldStatusBarFrame: Rect) {}
    func application(_ application: Application, shouldSaveApplicationState coder: StateRestorationCoder) -> Bool {
        coder.encode("2", forKey: "version")
        return saveState
    }
    func application(_ application: Application, shouldRestoreApplicationState coder: StateRestorationCoder) -> Bool {
        restoreState
    }
    func application(_ application: Application, willEncodeRestorableStateWith coder: StateRestorationCoder) {
        coder.encode("note-42", forKey: "openDocument")
        coder.encodeRestorableObject(identifierPath: ["root", "editor"])
    }
    func application(_ application: Application, didDecodeRestorableStateWith coder: StateRestorationCoder) {}
    func application(
        _ application: Application, restorableObjectWithIdentifierPath identifierComponents: [String],
        coder: StateRestorationCoder
    ) -> AnyObject? {
        restoredPaths.append(identifierComponents)
        return self
    }
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool { openResult }
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        fetchCompletion = completionHandler
    }
    func application(_ application: Application, didReceive notification: LocalNotification) {}
    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        fetchCompletion = completionHandler
    }
}

/// A delegate that implements nothing.
@MainActor
final class EmptyDelegate: ApplicationDelegate {}

/// An app under a virtual host, with a private center and a recorder.
@MainActor
struct Harness {
    let app: Application
    let host: VirtualHost
    let recorder: LifecycleRecorder
    let center: LifecycleNotificationCenter

    init(
        _ delegate: any ApplicationDelegate,
        configuration: Application.Configuration = .init(isStateRestorationEnabled: false)
    ) {
        host = VirtualHost()
        center = LifecycleNotificationCenter()
        app = Application(delegate: delegate, host: host, notificationCenter: center, configuration: configuration)
        recorder = LifecycleRecorder(application: app)
    }

    func launch(_ options: LaunchOptions = LaunchOptions()) { app.launch(options: options) }
}

extension Application {
    nonisolated static let names = (
        didFinishLaunching: "UIApplicationDidFinishLaunchingNotification",
        didBecomeActive: "UIApplicationDidBecomeActiveNotification",
        willResignActive: "UIApplicationWillResignActiveNotification",
        didEnterBackground: "UIApplicationDidEnterBackgroundNotification",
        willEnterForeground: "UIApplicationWillEnterForegroundNotification",
        willTerminate: "UIApplicationWillTerminateNotification",
        memoryWarning: "UIApplicationDidReceiveMemoryWarningNotification",
        timeChange: "UIApplicationSignificantTimeChangeNotification",
        protectedUnavailable: "UIApplicationProtectedDataWillBecomeUnavailable",
        protectedAvailable: "UIApplicationProtectedDataDidBecomeAvailable"
    )
}
