import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@MainActor
@Suite("Remote notifications: registration, the device token, and the aps dictionary")
struct RemoteNotificationAPITests {
    @MainActor final class Registrant: ApplicationDelegate {
        var tokens: [Data] = []
        var errors: [ApplicationError] = []
        func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
        {
            tokens.append(deviceToken)
        }
        func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error)
        {
            if let error = error as? ApplicationError { errors.append(error) }
        }
    }

    static let key = Data([0x04] + (1...64).map { UInt8($0) })
    static let secret = Data((100..<116).map { UInt8($0) })

    @Test("register goes to the host; didRegister sets isRegistered, a failure or Unregistered clears it")
    func registration() throws {
        let delegate = Registrant()
        let harness = Harness(delegate)
        harness.launch()
        #expect(!harness.app.isRegisteredForRemoteNotifications)
        harness.app.registerForRemoteNotifications()
        #expect(harness.host.remoteNotificationRequests == [true])
        let token = try RemoteNotificationDeviceToken(
            endpoint: URL(string: "https://push.example.net/push/abc")!, publicKey: Self.key, authSecret: Self.secret)
        harness.host.send(.registeredForRemoteNotifications(deviceToken: token.deviceToken))
        #expect(delegate.tokens == [token.deviceToken])
        #expect(harness.app.isRegisteredForRemoteNotifications)
        try harness.recorder.verifyConsecutive([
            "application(_:didRegisterForRemoteNotificationsWithDeviceToken:)",
            "ApplicationDidRegisterForRemoteNotificationsNotification",
        ])
        harness.host.send(.unregisteredForRemoteNotifications)
        #expect(!harness.app.isRegisteredForRemoteNotifications)
        harness.host.send(.registeredForRemoteNotifications(deviceToken: token.deviceToken))
        harness.app.unregisterForRemoteNotifications()
        #expect(harness.host.remoteNotificationRequests == [true, false])
        #expect(!harness.app.isRegisteredForRemoteNotifications)
        harness.host.send(
            .failedToRegisterForRemoteNotifications(ApplicationError(.noPushDistributor, "none on the bus")))
        #expect(delegate.errors.map(\.code) == [.noPushDistributor])
        #expect(!harness.app.isRegisteredForRemoteNotifications)
    }

    @Test("a host without push answers register with noPushDistributor")
    func defaultHostFails() async {
        final class Plain: ApplicationHost {
            let clock = VirtualClock()
            var scheduler: any LifecycleScheduler { clock }
        }
        let delegate = Registrant()
        let host = Plain()
        let app = Application(
            delegate: delegate, host: host, configuration: .init(isStateRestorationEnabled: false))
        app.launch(options: LaunchOptions())
        app.registerForRemoteNotifications()
        // The default answers from a main-actor task, after the call returns.
        #expect(delegate.errors.isEmpty)
        for _ in 0..<1000 where delegate.errors.isEmpty { await Task.yield() }
        #expect(delegate.errors.first?.code == .noPushDistributor)
    }

    @Test("the device token is a Push API subscription, readable by any Web Push library")
    func deviceTokenEncoding() throws {
        let token = try RemoteNotificationDeviceToken(
            endpoint: URL(string: "https://push.example.net/push/abc")!, publicKey: Self.key, authSecret: Self.secret)
        let json = try #require(String(data: token.deviceToken, encoding: .utf8))
        #expect(json.hasPrefix(#"{"endpoint":"https://push.example.net/push/abc","keys":{"auth":""#))
        #expect(!json.contains("=") && !json.contains("+"))
        let object = try #require(try JSONSerialization.jsonObject(with: token.deviceToken) as? [String: Any])
        let keys = try #require(object["keys"] as? [String: String])
        #expect(Data(base64Encoded: keys["auth"]! + "==") == Self.secret)
        #expect(try RemoteNotificationDeviceToken(deviceToken: token.deviceToken) == token)
        #expect(
            try JSONDecoder().decode(RemoteNotificationDeviceToken.self, from: JSONEncoder().encode(token)) == token)
    }

    @Test(
        "bad device tokens are rejected with invalidInput",
        arguments: [
            #"{"endpoint":"ftp://x/y","keys":{"p256dh":"BAEC","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#,
            #"{"endpoint":"https://x/y","keys":{"p256dh":"BAEC","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#,
            #"{"endpoint":"https://x/y","keys":{"p256dh":"+/+/","auth":"AAAAAAAAAAAAAAAAAAAAAA"}}"#,
            #"{"endpoint":"https://x/y"}"#, "not json",
        ])
    func badTokens(_ text: String) {
        #expect(throws: ApplicationError.self) { try RemoteNotificationDeviceToken(deviceToken: Data(text.utf8)) }
    }

    @Test("aps.badge sets the badge; aps.alert is a banner unless the app is active")
    func apsDictionary() throws {
        let harness = Harness(Registrant())
        harness.launch()
        harness.host.send(.remoteNotification(["aps": ["alert": "in the foreground", "badge": 2]]))
        #expect(harness.host.presentedNotifications.isEmpty)
        #expect(harness.app.applicationIconBadgeNumber == 2)
        #expect(harness.host.badgeNumbers == [2])
        harness.host.send(.foreground(false))
        harness.host.send(
            .remoteNotification([
                "id": "m1", "aps": ["alert": ["title": "Mail", "body": "3 new"], "badge": 5, "sound": "bell"],
            ]))
        let banner = try #require(harness.host.presentedNotifications.first)
        #expect(banner.alertTitle == "Mail")
        #expect(banner.alertBody == "3 new")
        #expect(banner.soundName == "bell")
        #expect(banner.identifier == "remote-m1")
        #expect(banner.userInfo["id"]?.stringValue == "m1")
        #expect(harness.host.badgeNumbers == [2, 5])
        // No aps, or an aps without an alert: no banner.
        harness.host.send(.remoteNotification(["aps": ["content-available": 1]]))
        harness.host.send(.remoteNotification(["data": "x"]))
        #expect(harness.host.presentedNotifications.count == 1)
    }
}
