import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledClient
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// A delegate that implements the notification and quick-action callbacks (each completes at once).
@MainActor
private final class ReminderDelegate: ApplicationDelegate {
    func application(_ application: Application, didReceive notification: LocalNotification) {}
    func application(
        _ application: Application, handleActionWithIdentifier identifier: String?, for notification: LocalNotification,
        completionHandler: @escaping @Sendable () -> Void
    ) { completionHandler() }
    func application(
        _ application: Application, performActionFor shortcutItem: ShortcutItem,
        completionHandler: @escaping @Sendable (Bool) -> Void
    ) { completionHandler(true) }
}

@Suite("Application's outgoing API through LifecycledHost and lifecycled", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct HostedAppNotificationTests {
    @Test func everyCallReachesItsFreedesktopServiceAndTheDelegateHearsBackInOrder() async throws {
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let logind = try DBusMock(template: "logind", address: systemBus.address)
        defer { logind.stop() }
        try await withDaemon(systemBus: .address(systemBus.address)) { h in
            let server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            defer { server.stop() }
            #expect(await eventually { h.daemon.localNotifications.server?.serverOwner != nil })
            let id = "org.example.Reminders"
            let badges = ValueRecorder<[BusValue]>()
            let dock = try await h.client.connection.addMatch(
                "type='signal',interface='com.canonical.Unity.LauncherEntry',member='Update'"
            ) { badges.add($0.arguments) }
            defer { dock.cancel() }

            let host = LifecycledHost(
                configuration: .init(
                    appID: id, busAddress: .address(h.bus.address), environment: [:], handlesTerminationSignals: false))
            let app = Application(
                delegate: ReminderDelegate(), host: host, notificationCenter: LifecycleNotificationCenter(),
                configuration: .init(applicationIdentifier: id, isStateRestorationEnabled: false))
            let recorder = LifecycleRecorder(application: app)
            let running = Task { @MainActor in await app.run() }
            defer { running.cancel() }
            try await h.client.log.waitForState(id, .active)
            @MainActor func seen(_ name: String) -> Int { recorder.count(of: name) }

            // Categories, then a notification that fires while the app is active: didReceive, no banner.
            let snooze = UserNotificationAction(identifier: "snooze", title: "Snooze")
            app.registerUserNotificationSettings(
                UserNotificationSettings(
                    types: [.alert, .badge],
                    categories: [UserNotificationCategory(identifier: "reminder", actions: [snooze])]))
            app.scheduleLocalNotification(
                LocalNotification(
                    identifier: "now", fireDate: Date(timeIntervalSinceNow: 0.2), alertBody: "Now", category: "reminder"
                ))
            #expect(app.scheduledLocalNotifications?.map(\.identifier) == ["now"])
            #expect(await eventually { seen("application(_:didReceive:)") == 1 }, "\(recorder.timeline)")
            #expect(await eventually { app.scheduledLocalNotifications == [] }, "the fired one is still listed")
            #expect(try server.callCount("Notify") == 0)

            // Badge and idle timer.
            app.applicationIconBadgeNumber = 2
            #expect(
                try await badges.next("the badge")[1] == .vardict(["count": .int64(2), "count-visible": .bool(true)]))
            app.isIdleTimerDisabled = true
            func idleHeld() throws -> Bool {
                try logind.call(interface: "org.freedesktop.login1.Manager", method: "ListInhibitors")
                    .contains("'idle', '\(id)'")
            }
            #expect(try await eventually { try idleHeld() }, "no idle inhibitor while active")

            // Locked: inactive. The inhibitor goes; a notification now is a banner with the category's button.
            try await h.client.call(LifecycledProtocol.Method.simulate.name, [.string("lock"), encodeInfo([:])])
            try await h.client.log.waitForState(id, .inactive)
            #expect(try await eventually { try !idleHeld() }, "the idle inhibitor outlived active")
            app.presentLocalNotificationNow(
                LocalNotification(
                    identifier: "later", alertTitle: "Later", alertBody: "Tea & <cake>", category: "reminder"))
            #expect(
                try await eventually { try server.methodCalls("Notify").contains("'Later'") },
                "no banner while inactive")
            #expect(try server.methodCalls("Notify").contains("['default', 'Open', 'snooze', 'Snooze']"))
            // The template's server has body-markup: the body's markup characters are escaped.
            #expect(try server.methodCalls("Notify").contains("'Tea &amp; &lt;cake&gt;'"))
            #expect(seen("application(_:didReceive:)") == 1)
            // The user chooses Snooze on it: handleActionWithIdentifier.
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
                arguments: ["uint32 1", "'snooze'"])
            #expect(
                await eventually { seen("application(_:handleActionWithIdentifier:for:completionHandler:)") == 1 },
                "\(recorder.timeline)")

            // A far one, then cancelled: gone from lifecycled's schedule too.
            app.scheduleLocalNotification(
                LocalNotification(identifier: "far", fireDate: Date(timeIntervalSinceNow: 3_600), alertBody: "Far"))
            #expect(await eventually { h.daemon.localNotifications.schedule.count == 1 })
            app.cancelAllLocalNotifications()
            #expect(await eventually { h.daemon.localNotifications.schedule.count == 0 })

            // A dynamic quick action, reached by gdbus through org.freedesktop.Application.
            try await h.client.call(LifecycledProtocol.Method.simulate.name, [.string("unlock"), encodeInfo([:])])
            try await h.client.log.waitForState(id, .active)
            app.shortcutItems = [ShortcutItem(type: "compose", localizedTitle: "Compose")]
            let call = try await runTool(
                "/usr/bin/gdbus",
                [
                    "call", "--address", h.bus.address, "--dest", id, "--object-path", "/org/example/Reminders",
                    "--method", "org.freedesktop.Application.ActivateAction", "compose", "[]", "{}",
                ])
            #expect(call.status == 0, "\(call.stderr)")
            #expect(await eventually { seen("application(_:performActionFor:completionHandler:)") == 1 })
            try recorder.verifyOrder([
                "application(_:didReceive:)", "application(_:handleActionWithIdentifier:for:completionHandler:)",
                "application(_:performActionFor:completionHandler:)",
            ])

            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(id)])
            await running.value
            host.stop()
        }
    }
}
