import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Testing

// The README's first example, compiled as written (without its @main type, which would clash with
// the test runner): if the README's code stops compiling, this file does too.

@MainActor
private enum Drafts {
    static var saved = 0
    static var opened: [URL] = []
    static var cacheLimit = -1
    static var refreshed: [SignificantTimeChange.Reason] = []
    static func save() async { saved += 1 }
    static func open(_ url: URL, from source: String?) -> Bool {
        opened.append(url)
        return true
    }
    static func trimCache(to limit: Int) { cacheLimit = limit }
    static func refreshToday(reason: SignificantTimeChange.Reason) { refreshed.append(reason) }
}

@MainActor
private final class AppDelegate: ApplicationDelegate {
    private var saveTask = BackgroundTaskIdentifier.invalid

    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        if let url = launchOptions?.url { return url.scheme == "notes" }  // false: the URL is not opened
        return true
    }

    func applicationDidEnterBackground(_ application: Application) {
        // Ask for time first, then start the work that outlives this callback.
        saveTask = application.beginBackgroundTask(withName: "save") { [unowned self] in
            application.endBackgroundTask(self.saveTask)
        }
        let task = saveTask
        Task { @MainActor in
            await Drafts.save()
            application.endBackgroundTask(task)
        }
    }

    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        Drafts.open(url, from: options.sourceApplication)
    }
}

@MainActor
private func subscribe() -> [NotificationObservation] {
    // Any object, typed:
    let typed = LifecycleNotificationCenter.default.addObserver(for: Application.DidReceiveMemoryWarningMessage.self) {
        message in
        Drafts.trimCache(to: message.warning.level == .critical ? 0 : 100)
    }
    // …or by UIKit's name, with a userInfo:
    let named = LifecycleNotificationCenter.default.addObserver(forName: Application.didBecomeActiveNotification) {
        note in
        print(note.name.rawValue, note.userInfo)  // "UIApplicationDidBecomeActiveNotification" {}
    }
    // …or as an AsyncSequence, from any task:
    let changes = LifecycleNotificationCenter.default.messages(of: Application.SignificantTimeChangeMessage.self)
    Task {
        for await change in changes { Drafts.refreshToday(reason: change.change.reason) }
    }
    return [typed, named]
}

@Suite("The README's example", .serialized)
@MainActor
struct ReadmeExampleTests {
    @Test("the delegate saves in a background task, and the subscribers see the default center's posts")
    func example() async throws {
        let tokens = subscribe()
        defer { tokens.forEach { $0.cancel() } }
        let host = VirtualHost()
        let app = Application(
            delegate: AppDelegate(), host: host, configuration: .init(isStateRestorationEnabled: false))
        var options = LaunchOptions()
        options.url = URL(string: "notes://today")
        app.launch(options: options)
        #expect(Drafts.opened == [URL(string: "notes://today")!])
        host.send(.memoryWarning(MemoryWarning(level: .critical, source: "test")))
        #expect(Drafts.cacheLimit == 0)
        host.send(.foreground(false))
        #expect(app.applicationState == .background)
        for _ in 0..<100 where app.applicationState != .suspended { await Task.yield() }
        #expect(Drafts.saved == 1)
        #expect(app.applicationState == .suspended)
        host.send(.terminate(.hostRequest))
    }
}
