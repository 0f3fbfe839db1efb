import AppLifecycle
import Foundation

/// The counter app: counts how often it came to the foreground and saves the count when it
/// leaves, printing one line per callback.
///
/// Uses only the public API. `counter://increment` adds one, `counter://reset` sets zero.
@MainActor
final class CounterAppDelegate: ApplicationDelegate {
    private let store: CounterStore
    private(set) var count: Int
    private var inForeground = false
    /// The interval to ask for at launch (`--fetch-interval`), if any.
    private let fetchInterval: Double?
    /// What a background fetch answers; `nil` never calls the handler (`--fetch-result overrun`).
    private let fetchResult: BackgroundFetchResult?
    /// The observers of the device's conditions (power state, thermal state, background refresh),
    /// kept for the app's life: each prints the property it announces.
    private var conditionObservers: [NotificationObservation] = []

    init(store: CounterStore, fetchInterval: Double? = nil, fetchResult: BackgroundFetchResult? = .newData) {
        self.store = store
        self.count = store.load()
        self.fetchInterval = fetchInterval
        self.fetchResult = fetchResult
    }

    private func say(_ callback: String, _ application: Application) {
        print("counter-app: \(callback) state=\(application.applicationState) count=\(count)")
        fflush(nil)
    }

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        let notification = launchOptions?.localNotification.map { " localNotification=\($0.identifier)" } ?? ""
        let token = launchOptions?[.activationToken]?.stringValue.map { " activationToken=\($0)" } ?? ""
        let item = launchOptions?.shortcutItem.map { " shortcutItem=\($0.type)" } ?? ""
        let push = launchOptions?.remoteNotification.map { " remoteNotification=\(Self.describe($0))" } ?? ""
        say("didFinishLaunching\(notification)\(token)\(item)\(push)", application)
        // Not a callback: what the launch brought (its command line) and kept (the push registration).
        print(
            "counter-app: launched arguments=\(launchOptions?.arguments ?? []) registeredForRemoteNotifications=\(application.isRegisteredForRemoteNotifications)"
        )
        fflush(nil)
        // A push whose aps.category is "counter" offers "+1" on its banner.
        application.registerUserNotificationSettings(
            UserNotificationSettings(
                types: [.alert, .badge, .sound],
                categories: [
                    UserNotificationCategory(
                        identifier: "counter", actions: [UserNotificationAction(identifier: "increment", title: "+1")])
                ]))
        // As an iOS app does on every launch: the token stays the same while the endpoint does.
        application.registerForRemoteNotifications()
        if let fetchInterval { application.setMinimumBackgroundFetchInterval(fetchInterval) }
        observeConditions(application)
        // The "peek" quick action only opens the app: returning false keeps performActionFor from running.
        return launchOptions?.shortcutItem?.type != "peek"
    }

    func applicationDidBecomeActive(_ application: Application) {
        if !inForeground {
            inForeground = true
            count += 1
        }
        say("didBecomeActive", application)
    }

    func applicationWillResignActive(_ application: Application) { say("willResignActive", application) }

    func applicationDidEnterBackground(_ application: Application) {
        inForeground = false
        say("didEnterBackground", application)
        // The save runs under a background task: the app is not suspended until it is written.
        let task = application.beginBackgroundTask(withName: "save-count")
        save(application)
        application.endBackgroundTask(task)
    }

    func applicationWillEnterForeground(_ application: Application) { say("willEnterForeground", application) }

    func applicationWillTerminate(_ application: Application) {
        save(application)
        say("willTerminate", application)
    }

    func applicationDidReceiveMemoryWarning(_ application: Application) { say("didReceiveMemoryWarning", application) }
    func applicationSignificantTimeChange(_ application: Application) { say("significantTimeChange", application) }
    func applicationProtectedDataWillBecomeUnavailable(_ application: Application) {
        say("protectedDataWillBecomeUnavailable", application)
    }
    func applicationProtectedDataDidBecomeAvailable(_ application: Application) {
        say("protectedDataDidBecomeAvailable", application)
    }

    func application(
        _ application: Application, willChangeStatusBarOrientation newStatusBarOrientation: InterfaceOrientation,
        duration: TimeInterval
    ) {
        say("willChangeStatusBarOrientation to=\(newStatusBarOrientation) duration=\(duration)s", application)
    }

    func application(
        _ application: Application, didChangeStatusBarOrientation oldStatusBarOrientation: InterfaceOrientation
    ) {
        say(
            "didChangeStatusBarOrientation from=\(oldStatusBarOrientation) to=\(application.statusBarOrientation)",
            application)
    }

    /// One line for each of the device's conditions the app is told changed (the notifications
    /// carry no userInfo: the app reads the property, as on iOS).
    private func observeConditions(_ application: Application) {
        let center = application.notificationCenter
        conditionObservers = [
            center.addObserver(for: Application.PowerStateDidChangeMessage.self, object: application) {
                [weak self, weak application] _ in
                guard let self, let application else { return }
                self.say("powerStateDidChange isLowPowerModeEnabled=\(application.isLowPowerModeEnabled)", application)
            },
            center.addObserver(for: Application.ThermalStateDidChangeMessage.self, object: application) {
                [weak self, weak application] _ in
                guard let self, let application else { return }
                self.say("thermalStateDidChange thermalState=\(application.thermalState)", application)
            },
            center.addObserver(for: Application.BackgroundRefreshStatusDidChangeMessage.self, object: application) {
                [weak self, weak application] _ in
                guard let self, let application else { return }
                self.say(
                    "backgroundRefreshStatusDidChange backgroundRefreshStatus=\(application.backgroundRefreshStatus)",
                    application)
            },
        ]
    }

    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        guard url.scheme == "counter" else { return false }
        switch url.host {
        case "increment": count += 1
        case "reset": count = 0
        default:
            say("open \(url.absoluteString) (not understood)", application)
            return false
        }
        say("open \(url.absoluteString)", application)
        return true
    }

    func application(_ application: Application, didReceive notification: LocalNotification) {
        say("didReceive local notification \(notification.identifier)", application)
    }

    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?, for notification: LocalNotification,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        // "increment" on a reminder's banner counts without opening the app.
        if identifier == "increment" { count += 1 }
        say("handleAction \(identifier ?? "-") for \(notification.identifier)", application)
        completionHandler()
    }

    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: UserInfo, completionHandler: @escaping @Sendable () -> Void
    ) {
        // "increment" on a push's banner adds its `increment` (else one) without opening the app.
        if identifier == "increment" {
            count += userInfo["increment"]?.intValue.map(Int.init) ?? 1
            save(application)
        }
        say("handleAction \(identifier ?? "-") for remote \(Self.describe(userInfo))", application)
        completionHandler()
    }

    func application(
        _ application: Application, performActionFor shortcutItem: ShortcutItem,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        if shortcutItem.type == "increment" { count += 1 }
        say("performActionFor \(shortcutItem.type)", application)
        completionHandler(true)
    }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        // "Hand the token to the server": the demo's server is `lifecyclectl push`, which reads this file.
        let path = store.directory + "/device-token.json"
        do {
            try AtomicFile.write(deviceToken, to: URL(fileURLWithPath: path))
            let endpoint =
                (try? RemoteNotificationDeviceToken(deviceToken: deviceToken))?.endpoint.absoluteString ?? "?"
            say("didRegisterForRemoteNotifications endpoint=\(endpoint) token=\(path)", application)
        } catch {
            say("didRegisterForRemoteNotifications, but the token could not be saved: \(error)", application)
        }
    }

    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        say("didFailToRegisterForRemoteNotifications \(error)", application)
    }

    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        // {"increment": n} adds n: a server can count for the user while the app is suspended.
        let added = userInfo["increment"]?.intValue.map(Int.init) ?? 0
        count += added
        say("didReceiveRemoteNotification \(Self.describe(userInfo))", application)
        if added != 0 { save(application) }
        completionHandler(added != 0 ? .newData : .noData)
    }

    func application(
        _ application: Application,
        performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        say("performFetch result=\(fetchResult?.rawValue ?? "overrun")", application)
        // Overrun: the handler is never called; the app is ended at the deadline.
        if let fetchResult { completionHandler(fetchResult) }
    }

    /// A payload on one line: its JSON.
    static func describe(_ payload: UserInfo) -> String {
        payload.json
    }

    private func save(_ application: Application) {
        do {
            try store.save(count)
            say("saved \(store.path)", application)
        } catch {
            say("could not save \(store.path): \(error)", application)
        }
    }
}
