import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

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
