import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import DesktopIntegration
import Foundation
import Glibc
import InProcessHost
import SystemdBus
import SystemdBusTesting
import Testing
import WebPush

@MainActor
@Suite("SystemdHost's desktop half: notifications, badge and idle inhibitors without lifecycled", .serialized)
struct SystemdHostDesktopTests {
    @Test func aNotificationWhileLockedIsABannerWhoseClickIsDidReceiveAndTheIdleInhibitorsFollowActive() async throws {
        let rig = try HostRig()
        let server = try DBusMock(template: "notification_daemon", address: rig.sessionBus.address)
        defer { server.stop() }
        let freedesktopScreenSaver = try DBusMock.freedesktopScreenSaver(address: rig.sessionBus.address, cookie: 17)
        defer { freedesktopScreenSaver.stop() }
        func calls(_ method: String) throws -> Int { try freedesktopScreenSaver.callCount(method) }
        await rig.launch()

        // The idle timer: logind's inhibitor and the screensaver's, while active only.
        rig.app.isIdleTimerDisabled = true
        #expect(try await eventually { try rig.inhibitors().contains("'idle', 'org.example.Tests'") })
        #expect(try await eventually { try calls("Inhibit") == 1 })

        // Locked: inactive. Both inhibitors go; a notification now is a banner.
        try rig.session("Lock")
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        #expect(try await eventually { try !rig.inhibitors().contains("'idle', 'org.example.Tests'") })
        #expect(try await eventually { try calls("UnInhibit") == 1 })
        rig.app.scheduleLocalNotification(
            LocalNotification(
                identifier: "tea", fireDate: Date(timeIntervalSinceNow: 0.2), alertTitle: "Tea",
                alertBody: "Ready", applicationIconBadgeNumber: 1))
        #expect(try await eventually { try server.methodCalls("Notify").contains("'Tea'") }, "no banner")
        #expect(rig.seen(Application.didReceiveLocalNotificationNotification.rawValue) == 0)
        #expect(rig.app.applicationIconBadgeNumber == 1)
        #expect(rig.app.scheduledLocalNotifications == [])
        // The click: didReceive while still inactive (the screen is locked).
        try server.emitSignal(
            interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
            arguments: ["uint32 1", "'default'"])
        await rig.wait(for: Application.didReceiveLocalNotificationNotification.rawValue)
        #expect(rig.app.applicationState == .inactive)
        await rig.stop()
    }
}

@MainActor
@Suite("SystemdHost: a push's banner remembers it is remote", .serialized)
struct SystemdHostPushBannerTests {
    @Test func itsButtonRunsTheRemoteActionAndItsClickTheRemoteCallbackNotALocalOne() async throws {
        let rig = try HostRig()
        let server = try DBusMock(template: "notification_daemon", address: rig.sessionBus.address)
        defer { server.stop() }
        await rig.launch()
        rig.app.registerUserNotificationSettings(
            UserNotificationSettings(
                types: [.alert],
                categories: [
                    UserNotificationCategory(
                        identifier: "mail", actions: [UserNotificationAction(identifier: "archive", title: "Archive")])
                ]))
        // Locked: inactive, so a push's alert is a banner, with the category's button.
        try rig.session("Lock")
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        let payload: UserInfo = ["id": "p1", "aps": ["alert": "Mail", "category": "mail"]]
        rig.app.handle(.remoteNotification(payload))
        #expect(try await eventually { try server.methodCalls("Notify").contains("'archive', 'Archive'") }, "no banner")
        try server.emitSignal(
            interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
            arguments: ["uint32 1", "'archive'"])
        await rig.wait(for: Application.handleRemoteNotificationActionNotification.rawValue)
        #expect(rig.seen(Application.handleLocalNotificationActionNotification.rawValue) == 0)

        // A second push; its click reaches didReceiveRemoteNotification (the first went there on arrival).
        let received = rig.seen(Application.didReceiveRemoteNotificationNotification.rawValue)
        rig.app.handle(.remoteNotification(["id": "p2", "aps": ["alert": "More mail"]]))
        #expect(try await eventually { try server.methodCalls("Notify").contains("'More mail'") }, "no banner")
        try server.emitSignal(
            interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
            arguments: ["uint32 2", "'default'"])
        await rig.wait(for: Application.didReceiveRemoteNotificationNotification.rawValue, count: received + 2)
        #expect(rig.seen(Application.didReceiveLocalNotificationNotification.rawValue) == 0)
        await rig.stop()
    }
}

@MainActor
@Suite("SystemdHost's UnifiedPush connector, without lifecycled", .serialized)
struct SystemdHostPushTests {
    @Test func registersWithADistributorOnTheSessionBusAndReceivesAPush() async throws {
        let state = try TemporaryDirectory(prefix: "systemd-host-push")
        defer { state.remove() }
        let rig = try HostRig(environment: ["XDG_STATE_HOME": state.path])
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/unifiedpush-standin-distributor.py").path
        let standIn = try ChildProcess.spawn(
            "/usr/bin/python3", [script, "standin"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": rig.sessionBus.address, "PATH": "/usr/bin:/bin"],
            stdout: .file(state.path + "/standin.log"))
        defer { standIn.terminateAndWait() }
        #expect(
            await eventually {
                ((try? String(contentsOfFile: state.path + "/standin.log", encoding: .utf8)) ?? "").contains("ready")
            })
        await rig.launch()

        rig.app.registerForRemoteNotifications()
        await rig.wait(for: Application.didRegisterForRemoteNotificationsNotification.rawValue)
        #expect(rig.app.isRegisteredForRemoteNotifications)
        let stateFile = state.path + "/org.example.Tests/remote-notifications.json"
        let stored = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: stateFile))) as? [String: Any])
        let token = try #require(stored["token"] as? String)
        let keys = try WebPushKeys(
            privateKey: try #require(Base64URL.decode(stored["privateKey"] as? String ?? "")),
            authSecret: try #require(Base64URL.decode(stored["authSecret"] as? String ?? "")))
        let body = try WebPushEncryption.encrypt(
            Data(#"{"hello":"systemd"}"#.utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret)

        // The distributor's Message is decrypted and reaches the app (the fetch variant's notification).
        let loop = try EventLoop(name: "push-control")
        defer { loop.shutdown() }
        let control = try await BusConnection(
            .address(rig.sessionBus.address), loop: loop, description: "push-control", timeout: .seconds(5))
        defer { control.close() }
        _ = try await control.call(
            destination: "org.unifiedpush.Distributor.standin", path: "/org/unifiedpush/Distributor",
            interface: "org.example.StandIn", member: "SendMessage",
            arguments: [
                .string("org.example.Tests"), .string(token), .array(elementSignature: "y", body.map { .byte($0) }),
                .string("m-1"),
            ])
        await rig.wait(for: Application.didReceiveRemoteNotificationNotification.rawValue)
        #expect(
            rig.recorder.entries.contains {
                $0.userInfo["ApplicationRemoteNotificationKey"]?.dictionaryValue?["hello"]?.stringValue == "systemd"
            }, "\(rig.recorder.timeline)")
        await rig.stop()
    }
}
