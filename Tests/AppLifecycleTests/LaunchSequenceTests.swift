import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@MainActor
@Suite("Launch sequence")
struct LaunchSequenceTests {
    @Test("will finish → did finish → DidFinishLaunching (with launch options) → did become active")
    func launchOrder() throws {
        let harness = Harness(FullDelegate())
        var options = LaunchOptions()
        options.sourceApplication = "org.example.Mail"
        harness.launch(options)
        try harness.recorder.verifyConsecutive([
            "application(_:willFinishLaunchingWithOptions:)",
            "ApplicationWillFinishLaunchingNotification",
            "application(_:didFinishLaunchingWithOptions:)",
            Application.names.didFinishLaunching,
            "applicationDidBecomeActive(_:)",
            Application.names.didBecomeActive,
        ])
        let launched = try #require(harness.recorder.entries(named: Application.names.didFinishLaunching).first)
        #expect(launched.userInfo["UIApplicationLaunchOptionsSourceApplicationKey"] == .string("org.example.Mail"))
        #expect(
            harness.recorder.entries(named: "application(_:willFinishLaunchingWithOptions:)").first?.state == .inactive)
        #expect(harness.app.applicationState == .active)
        #expect(harness.host.didFinishLaunching)
        #expect(harness.host.stateChanges.map(\.to) == [.inactive, .active])
    }

    @Test("the legacy applicationDidFinishLaunching runs only when didFinishLaunchingWithOptions is not implemented")
    func legacyDidFinishLaunching() throws {
        @MainActor final class Legacy: ApplicationDelegate {
            func applicationDidFinishLaunching(_ application: Application) {}
        }
        let legacy = Harness(Legacy())
        legacy.launch()
        try legacy.recorder.verifyOrder(["applicationDidFinishLaunching(_:)", Application.names.didFinishLaunching])

        let modern = Harness(FullDelegate())
        modern.launch()
        try modern.recorder.verifyAbsent("applicationDidFinishLaunching(_:)")
    }

    @Test("a launch into the background ends in didEnterBackground, not didBecomeActive")
    func backgroundLaunch() throws {
        let harness = Harness(FullDelegate())
        var options = LaunchOptions()
        options.launchedInBackground = true
        harness.launch(options)
        try harness.recorder.verifyOrder([
            Application.names.didFinishLaunching, "applicationDidEnterBackground(_:)",
            Application.names.didEnterBackground,
        ])
        try harness.recorder.verifyAbsent("applicationDidBecomeActive(_:)")
        #expect(harness.app.applicationState == .suspended)
    }

    @Test("a launch while the session is locked stays inactive until unlock")
    func launchWhileLocked() throws {
        let harness = Harness(FullDelegate())
        harness.app.handle(.locked(true))
        harness.launch()
        #expect(harness.app.applicationState == .inactive)
        #expect(!harness.app.isProtectedDataAvailable)
        harness.host.send(.locked(false))
        try harness.recorder.verifyOrder([
            Application.names.didFinishLaunching, "applicationProtectedDataDidBecomeAvailable(_:)",
            "applicationDidBecomeActive(_:)",
        ])
        #expect(harness.app.applicationState == .active)
    }

    @Test("a second launch is refused")
    func secondLaunch() {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.launch()
        #expect(harness.recorder.count(of: "application(_:willFinishLaunchingWithOptions:)") == 1)
    }

    @Test(
        "launch-method return values gate the launch URL",
        arguments: [
            // (will implemented & value, did implemented & value, remote launch) → opened
            (Optional(true), Optional(true), false, true),
            (Optional(false), Optional(true), false, false),
            (Optional(true), Optional(false), false, false),
            (Optional(false), Optional(false), false, false),
            (nil, Optional(false), false, false),
            (nil, Optional(true), false, true),
            (Optional(false), nil, false, false),
            (nil, nil, false, true),
            (Optional(false), Optional(false), true, true),
        ] as [(Bool?, Bool?, Bool, Bool)]
    )
    func launchURLGating(will: Bool?, did: Bool?, remote: Bool, opened: Bool) throws {
        #expect(Application.launchAccepted(will: will, did: did, forRemoteNotification: remote) == opened)

        let delegate = GatingDelegate(will: will, did: did)
        let harness = Harness(delegate)
        var options = LaunchOptions()
        options.url = URL(string: "notes://open/42")
        if remote { options.remoteNotification = ["aps": ["alert": "hi"]] }
        harness.launch(options)
        #expect(delegate.opened == (opened ? [URL(string: "notes://open/42")!] : []))
        #expect(harness.host.openedURLs.map(\.handled) == [opened])
        if opened {
            try harness.recorder.verifyOrder([
                Application.names.didFinishLaunching, "application(_:open:options:)", Application.names.didBecomeActive,
            ])
        }
    }

    @Test("a launch for a local notification calls didFinishLaunching then didReceive")
    func localNotificationLaunch() throws {
        let harness = Harness(FullDelegate())
        var options = LaunchOptions()
        options.localNotification = LocalNotification(identifier: "standup", alertBody: "Stand-up in 5")
        harness.launch(options)
        try harness.recorder.verifyOrder([
            "application(_:didFinishLaunchingWithOptions:)", Application.names.didFinishLaunching,
            "application(_:didReceive:)", "ApplicationDidReceiveLocalNotificationNotification",
        ])
    }

    @Test("the remote notification that launched the app goes only to the fetch variant")
    func remoteNotificationLaunch() throws {
        @MainActor final class PlainOnly: ApplicationDelegate {
            var received = 0
            func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo) {
                received += 1
            }
        }
        let plain = PlainOnly()
        let harness = Harness(plain)
        var options = LaunchOptions()
        options.remoteNotification = ["aps": ["badge": 3]]
        harness.launch(options)
        #expect(plain.received == 0)

        let full = FullDelegate()
        let fetching = Harness(full)
        fetching.launch(options)
        #expect(full.fetchCompletion != nil)
        try fetching.recorder.verifyOrder([
            Application.names.didFinishLaunching, "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
        ])
    }

    @Test("service-manager launch reasons become launch options")
    func serviceManagerOptions() {
        let options = LaunchOptions.fromServiceManager(
            environment: [
                "TRIGGER_UNIT": "backup.timer", "TRIGGER_PATH": "/srv/inbox", "LISTEN_PID": "77", "LISTEN_FDS": "2",
                "LISTEN_FDNAMES": "http:admin",
            ],
            processID: 77)
        #expect(options.triggerUnit == "backup.timer")
        #expect(options.triggerPath == "/srv/inbox")
        #expect(options.listenFileDescriptorNames == ["http", "admin"])
        let foreign = LaunchOptions.fromServiceManager(
            environment: ["LISTEN_PID": "78", "LISTEN_FDS": "2", "TRIGGER_PATH": "relative"], processID: 77,
            arguments: [])
        #expect(foreign.isEmpty)
    }

    @Test("every UIKit launch-option key keeps UIKit's raw string")
    func launchOptionKeys() {
        let keys: [LaunchOptions.Key] = [
            .url, .sourceApplication, .annotation, .remoteNotification, .localNotification, .location,
            .newsstandDownloads, .bluetoothCentrals, .bluetoothPeripherals,
        ]
        #expect(
            keys.map(\.rawValue) == [
                "UIApplicationLaunchOptionsURLKey", "UIApplicationLaunchOptionsSourceApplicationKey",
                "UIApplicationLaunchOptionsAnnotationKey",
                "UIApplicationLaunchOptionsRemoteNotificationKey", "UIApplicationLaunchOptionsLocalNotificationKey",
                "UIApplicationLaunchOptionsLocationKey",
                "UIApplicationLaunchOptionsNewsstandDownloadsKey", "UIApplicationLaunchOptionsBluetoothCentralsKey",
                "UIApplicationLaunchOptionsBluetoothPeripheralsKey",
            ])
        var options = LaunchOptions()
        options.bluetoothCentrals = ["central-1"]
        options.newsstandDownloads = ["issue-7"]
        options.location = true
        #expect(options.bluetoothCentrals == ["central-1"])
        #expect(options.newsstandDownloads == ["issue-7"])
        #expect(options.userInfo["UIApplicationLaunchOptionsLocationKey"] == .bool(true))
    }
}

/// Implements the launch methods only where asked to, to exercise the gating rule.
@MainActor
final class GatingDelegate: ApplicationDelegate {
    let will: Bool?
    let did: Bool?
    var opened: [URL] = []
    init(will: Bool?, did: Bool?) {
        self.will = will
        self.did = did
    }
    func application(_ application: Application, willFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        guard let will else { return defaultWill(application, launchOptions) }
        return will
    }
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        guard let did else { return defaultDid(application, launchOptions) }
        return did
    }
    func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
        opened.append(url)
        return true
    }
    // Forwarding to the protocol's default keeps "not implemented" visible to the app.
    private func defaultWill(_ application: Application, _ options: LaunchOptions?) -> Bool {
        Unimplemented().application(application, willFinishLaunchingWithOptions: options)
    }
    private func defaultDid(_ application: Application, _ options: LaunchOptions?) -> Bool {
        Unimplemented().application(application, didFinishLaunchingWithOptions: options)
    }
    @MainActor private final class Unimplemented: ApplicationDelegate {}
}
