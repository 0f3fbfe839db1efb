import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@MainActor
@Suite("URLs and notifications: the seeds' precedence rules")
struct URLAndNotificationTests {
    @MainActor final class AllOpeners: ApplicationDelegate {
        var calls: [String] = []
        func application(_ application: Application, open url: URL, options: OpenURLOptions) -> Bool {
            calls.append("options")
            return true
        }
        func application(
            _ application: Application, open url: URL, sourceApplication: String?, annotation: UserInfoValue?
        ) -> Bool {
            calls.append("source")
            return true
        }
        func application(_ application: Application, handleOpen url: URL) -> Bool {
            calls.append("handle")
            return true
        }
    }
    @MainActor final class OldOpeners: ApplicationDelegate {
        var calls: [String] = []
        var annotation: UserInfoValue?
        func application(
            _ application: Application, open url: URL, sourceApplication: String?, annotation: UserInfoValue?
        ) -> Bool {
            calls.append("source:\(sourceApplication ?? "-")")
            self.annotation = annotation
            return false
        }
        func application(_ application: Application, handleOpen url: URL) -> Bool {
            calls.append("handle")
            return true
        }
    }
    @MainActor final class OldestOpener: ApplicationDelegate {
        var calls: [String] = []
        func application(_ application: Application, handleOpen url: URL) -> Bool {
            calls.append("handle")
            return true
        }
    }

    @Test("open:options: wins; then open:sourceApplication:annotation:; then handleOpen")
    func openPrecedence() {
        let url = URL(string: "notes://n/1")!
        let options = OpenURLOptions(sourceApplication: "org.example.Mail", annotation: ["k": "v"])
        let all = AllOpeners()
        let a = Harness(all)
        a.launch()
        a.host.send(.openURL(url, options))
        #expect(all.calls == ["options"])

        let old = OldOpeners()
        let b = Harness(old)
        b.launch()
        b.host.send(.openURL(url, options))
        #expect(old.calls == ["source:org.example.Mail"])
        #expect(old.annotation == ["k": "v"])
        #expect(b.host.openedURLs.map(\.handled) == [false])

        let oldest = OldestOpener()
        let c = Harness(oldest)
        c.launch()
        c.host.send(.openURL(url, options))
        #expect(oldest.calls == ["handle"])
    }

    @Test(
        "a URL for a background app brings it to the foreground first: will enter foreground → open → did become active"
    )
    func urlWhileSuspended() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .suspended)
        harness.recorder.clear()
        harness.host.send(.openURL(URL(string: "notes://n/2")!, OpenURLOptions()))
        try harness.recorder.verifyOrder([
            "applicationWillEnterForeground(_:)", "application(_:open:options:)", "ApplicationDidOpenURLNotification",
            "applicationDidBecomeActive(_:)",
        ])
        let opened = try #require(harness.recorder.entries(named: "ApplicationDidOpenURLNotification").first)
        #expect(opened.userInfo[ApplicationUserInfoKey.url] == "notes://n/2")
        #expect(opened.state == .inactive)
    }

    @Test("a remote notification goes to the fetch variant when implemented, else the plain one")
    func remotePrecedence() {
        @MainActor final class Plain: ApplicationDelegate {
            var plain = 0
            func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo) { plain += 1 }
        }
        @MainActor final class Both: ApplicationDelegate {
            var plain = 0, fetch = 0
            func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo) { plain += 1 }
            func application(
                _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
                fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
            ) {
                fetch += 1
                completionHandler(.noData)
            }
        }
        let plain = Plain()
        let a = Harness(plain)
        a.launch()
        a.host.send(.remoteNotification(["aps": ["alert": "hi"]]))
        #expect(plain.plain == 1)
        // While suspended the plain variant is not called: the app is not running.
        a.host.send(.foreground(false))
        a.host.send(.remoteNotification(["aps": ["alert": "again"]]))
        #expect(plain.plain == 1)

        let both = Both()
        let b = Harness(both)
        b.launch()
        b.host.send(.remoteNotification(["aps": ["alert": "hi"]]))
        #expect(both.fetch == 1)
        #expect(both.plain == 0)
        b.host.send(.foreground(false))
        b.host.send(.remoteNotification(["aps": ["content-available": 1]]))
        #expect(both.fetch == 2)
        #expect(b.app.applicationState == .suspended)
    }

    @Test("a local notification in the foreground goes to the delegate; in the background to the host")
    func localNotificationRouting() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        let note = LocalNotification(identifier: "tea", alertBody: "Tea is ready")
        harness.host.send(.localNotification(note))
        try harness.recorder.verifyConsecutive([
            "application(_:didReceive:)", "ApplicationDidReceiveLocalNotificationNotification",
        ])
        harness.host.send(.foreground(false))
        harness.host.send(.localNotification(note))
        #expect(harness.recorder.count(of: "application(_:didReceive:)") == 1)
        #expect(harness.host.presentedNotifications == [note])
    }

    @Test("question callbacks post their answers")
    func questions() {
        let harness = Harness(
            FullDelegate(),
            configuration: .init(supportedInterfaceOrientations: .landscape, isStateRestorationEnabled: false))
        harness.launch()
        #expect(harness.app.supportedInterfaceOrientations(for: nil) == .landscape)
        #expect(harness.app.allowsExtensionPoint(.keyboard))
        #expect(harness.recorder.count(of: "ApplicationSupportedInterfaceOrientationsNotification") == 1)
        #expect(
            harness.recorder.entries(named: "ApplicationShouldAllowExtensionPointNotification").first?.userInfo[
                ApplicationUserInfoKey.result] == true)
    }
}
