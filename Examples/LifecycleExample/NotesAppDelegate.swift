import AppLifecycle
import Foundation

/// The example app: a notes app that saves its draft when it leaves the foreground.
///
/// It implements the callbacks a real app cares about, using only the public API: it saves in
/// a background task when entering the background, drops caches on a memory warning, refreshes
/// its "today" header on significant time changes, and hides the open note while protected
/// data is unavailable.
@MainActor
final class NotesAppDelegate: ApplicationDelegate {
    private(set) var draft = "Buy oat milk"
    private(set) var cacheSize = 64
    private var saveTask = BackgroundTaskIdentifier.invalid

    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        true
    }

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        // Reminders carry a "Snooze" button; the dock offers "New note" as a quick action.
        let snooze = UserNotificationAction(identifier: "snooze", title: "Snooze 10 min")
        application.registerUserNotificationSettings(
            UserNotificationSettings(
                types: [.alert, .badge, .sound],
                categories: [UserNotificationCategory(identifier: "reminder", actions: [snooze])]))
        application.shortcutItems = [ShortcutItem(type: "new-note", localizedTitle: "New note")]
        // Only notes:// URLs are handled; refusing here keeps application(_:open:options:) from being called.
        if let url = launchOptions?.url { return url.scheme == "notes" }
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {}
    func applicationWillResignActive(_ application: Application) {}

    func applicationDidEnterBackground(_ application: Application) {
        // Ask for time before starting work that outlives this callback.
        saveTask = application.beginBackgroundTask(withName: "save-draft") { [weak self] in
            guard let self else { return }
            application.endBackgroundTask(self.saveTask)
        }
        let task = saveTask
        Task { @MainActor in
            // The save itself; a real app writes a file here.
            application.endBackgroundTask(task)
        }
    }

    func applicationWillEnterForeground(_ application: Application) {}
    func applicationWillTerminate(_ application: Application) {}
    func applicationDidReceiveMemoryWarning(_ application: Application) { cacheSize = 0 }
    func applicationSignificantTimeChange(_ application: Application) {}
    func applicationProtectedDataWillBecomeUnavailable(_ application: Application) {}
    func applicationProtectedDataDidBecomeAvailable(_ application: Application) {}

    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        url.scheme == "notes"
    }

    /// A reminder the user opened (or that fired while the app was active): the badge is cleared.
    func application(_ application: Application, didReceive notification: LocalNotification) {
        application.applicationIconBadgeNumber = 0
    }

    /// "Snooze" on a reminder's banner schedules it again, ten minutes later.
    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?, for notification: LocalNotification,
        completionHandler: @escaping @Sendable () -> Void
    ) {
        if identifier == "snooze" {
            var again = notification
            again.fireDate = Date(timeIntervalSinceNow: 600)
            application.scheduleLocalNotification(again)
        }
        completionHandler()
    }

    /// The "New note" quick action starts an empty draft.
    func application(
        _ application: Application, performActionFor shortcutItem: ShortcutItem,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) {
        if shortcutItem.type == "new-note" { draft = "" }
        completionHandler(shortcutItem.type == "new-note")
    }
}
