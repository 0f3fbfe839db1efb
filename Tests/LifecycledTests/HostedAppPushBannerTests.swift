import AppLifecycle
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// The seeds' remote-notification semantics end to end: counter-app hosted by lifecycled, pushes
/// through a real broker (``FleetRig``), banners on python-dbusmock's `notification_daemon` on the
/// daemon's bus, the user's clicks as the server's `ActivationToken` and `ActionInvoked` signals.
@Suite(
    "A push's banner through lifecycled: its click, its actions, the badge, the registration",
    .serialized, .timeLimit(.minutes(3)))
@MainActor
struct HostedAppPushBannerTests {
    nonisolated static let counter = "org.example.Counter"

    /// A daemon with counter-app's manifest pointed at the rig's broker, the notification server
    /// beside it, and the app's device token once its first launch registered.
    private func withCounterAppAndBanners(
        _ rig: FleetRig, _ body: (DaemonHarness, DBusMock, _ appLog: String, _ token: Data) async throws -> Void
    ) async throws {
        try await withHostedCounterApp(rig, id: Self.counter) { h in
            let server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            defer { server.stop() }
            #expect(
                await eventually { h.daemon.localNotifications.server?.serverOwner != nil },
                "lifecycled did not see the notification server")
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let appLog = h.directory.path + "/counter.log"
            let tokenFile = h.directory.path + "/counter-state/device-token.json"
            _ = try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), UserInfoBusCodec.encode(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)
            #expect(await eventually { FileManager.default.fileExists(atPath: tokenFile) }, "\(logLines(appLog))")
            let token = try Data(contentsOf: URL(fileURLWithPath: tokenFile))
            try await body(h, server, appLog, token)
        }
    }

    /// Ends the app and waits until lifecycled saw it gone.
    private func terminate(_ h: DaemonHarness) async throws {
        _ = try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(Self.counter)])
        try await h.client.log.waitForState(Self.counter, .notRunning)
        #expect(await eventually { h.daemon.registry[Self.counter]?.isRunning == false })
    }

    /// Pushes `json` to the app, which is not running: it is launched in the background, shows
    /// the push's banner and is suspended; returns the banner's server id.
    private func pushToShowBanner(
        _ rig: FleetRig, _ h: DaemonHarness, _ server: DBusMock, token: Data, json: String, appLog: String
    ) async throws -> UInt32 {
        let before = try server.calls("Notify").count
        let changesBefore = h.client.log.stateChanges(Self.counter).count
        try await rig.push(to: token, json: json)
        #expect(
            try await eventually(hangGuard: .seconds(20)) { try server.calls("Notify").count == before + 1 },
            "no banner for the push: \(logLines(appLog).suffix(12))")
        try await h.client.log.wait(for: "launched in the background and suspended") {
            Array($0.stateChanges(Self.counter).dropFirst(changesBefore)).last == "background->suspended"
        }
        return UInt32(before + 1)
    }

    private func click(_ server: DBusMock, _ banner: UInt32, action: String, token: String? = nil) throws {
        if let token {
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActivationToken", signature: "us",
                arguments: ["uint32 \(banner)", "'\(token)'"])
        }
        try server.emitSignal(
            interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
            arguments: ["uint32 \(banner)", "'\(action)'"])
    }

    @Test func aClickOnAPushBannerReachesTheRemotePathRunningOrNot() async throws {
        let rig = try await FleetRig()
        try await withCounterAppAndBanners(rig) { h, server, appLog, token in
            let launched = { logLines(appLog).filter { $0.hasPrefix("counter-app: launched ") } }
            // The first launch: the command line in ApplicationLaunchOptionsArgumentsKey; no registration yet.
            let first = try #require(launched().first)
            #expect(
                first.contains(#"arguments=["--host", "lifecycled", "--state-directory", "#), "\(first)")
            #expect(first.hasSuffix("registeredForRemoteNotifications=false"), "\(first)")

            // Not running: the push launches it in the background; its banner names the category's action.
            try await terminate(h)
            let one = #"{"aps":{"alert":"one","badge":3,"category":"counter"},"increment":1}"#
            let banner = try await pushToShowBanner(rig, h, server, token: token, json: one, appLog: appLog)
            let notify = try #require(try server.calls("Notify").last)
            #expect(notify.contains("'one'") && notify.contains("'increment', '+1'"), "\(notify)")
            #expect(h.daemon.localNotifications.badges[Self.counter] == 3)
            // Relaunched: registered from launch on, as iOS keeps it.
            #expect(launched().last?.hasSuffix("registeredForRemoteNotifications=true") == true, "\(launched())")

            // Running (suspended): the click brings it to the foreground, then the remote callback
            // while inactive; never the local path.
            let before = callbacks(appLog).count
            // The callbacks, without the count's save lines.
            let since = { (start: Int) in Array(callbacks(appLog).dropFirst(start)).filter { !$0.hasPrefix("saved ") } }
            try click(server, banner, action: "default", token: "tap-1")
            try await h.client.log.waitForState(Self.counter, .active)
            #expect(
                try await eventually { callbacks(appLog).dropFirst(before).contains("didBecomeActive") },
                "\(logLines(appLog))")
            #expect(
                since(before).prefix(3) == [
                    "willEnterForeground", #"didReceiveRemoteNotification \#(one)"#, "didBecomeActive",
                ], "\(logLines(appLog).suffix(12))")
            #expect(
                logLines(appLog).last { $0.contains("didReceiveRemoteNotification") }?.contains("state=inactive")
                    == true)
            #expect(!callbacks(appLog).contains { $0.hasPrefix("didReceive local") })

            // An aps without badge clears the badge (the seeds), also the one a relaunched app is told it shows.
            try await terminate(h)
            let two = #"{"aps":{"alert":"two"},"increment":2}"#
            let second = try await pushToShowBanner(rig, h, server, token: token, json: two, appLog: appLog)
            #expect(await eventually { h.daemon.localNotifications.badges[Self.counter] == 0 })

            // Not running: the click launches it with the payload in
            // UIApplicationLaunchOptionsRemoteNotificationKey and the activation token.
            try await terminate(h)
            let launchesBefore = callbacks(appLog).count
            try click(server, second, action: "default", token: "tap-2")
            try await h.client.log.waitForState(Self.counter, .active)
            #expect(
                try await eventually { callbacks(appLog).dropFirst(launchesBefore).contains("didBecomeActive") },
                "\(logLines(appLog))")
            #expect(
                since(launchesBefore).prefix(3) == [
                    #"didFinishLaunching activationToken=tap-2 remoteNotification=\#(two)"#,
                    #"didReceiveRemoteNotification \#(two)"#, "didBecomeActive",
                ], "\(logLines(appLog).suffix(12))")
        }
    }

    @Test func anActionOnAPushBannerRunsInTheBackgroundRunningOrNot() async throws {
        let rig = try await FleetRig()
        try await withCounterAppAndBanners(rig) { h, server, appLog, token in
            try await terminate(h)
            let one = #"{"aps":{"alert":"add one","category":"counter"},"increment":1}"#
            let banner = try await pushToShowBanner(rig, h, server, token: token, json: one, appLog: appLog)

            // Running (suspended): handled in the background, suspended again after.
            let changesBefore = h.client.log.stateChanges(Self.counter).count
            try click(server, banner, action: "increment")
            #expect(
                try await eventually { callbacks(appLog).contains(#"handleAction increment for remote \#(one)"#) },
                "\(logLines(appLog).suffix(12))")
            #expect(
                logLines(appLog).contains {
                    $0.contains("handleAction increment for remote") && $0.contains("state=background")
                },
                "\(logLines(appLog).suffix(12))")
            try await h.client.log.wait(for: "suspended after the action") {
                Array($0.stateChanges(Self.counter).dropFirst(changesBefore)) == [
                    "suspended->background", "background->suspended",
                ]
            }

            // Not running: launched in the background for the action, never active.
            try await terminate(h)
            let three = #"{"aps":{"alert":"add three","category":"counter"},"increment":3}"#
            let second = try await pushToShowBanner(rig, h, server, token: token, json: three, appLog: appLog)
            try await terminate(h)
            let before = callbacks(appLog).count
            let changesBeforeLaunch = h.client.log.stateChanges(Self.counter).count
            try click(server, second, action: "increment")
            #expect(
                try await eventually(hangGuard: .seconds(20)) {
                    callbacks(appLog).contains(#"handleAction increment for remote \#(three)"#)
                }, "\(logLines(appLog).suffix(12))")
            try await h.client.log.waitForState(Self.counter, .suspended)
            let sinceLaunch = Array(callbacks(appLog).dropFirst(before))
            #expect(sinceLaunch.first == "didFinishLaunching", "\(sinceLaunch)")
            #expect(!sinceLaunch.contains { $0.hasPrefix("didReceiveRemoteNotification") }, "\(sinceLaunch)")
            #expect(
                !h.client.log.stateChanges(Self.counter).dropFirst(changesBeforeLaunch).contains {
                    $0.hasSuffix("->active")
                })
        }
    }
}
