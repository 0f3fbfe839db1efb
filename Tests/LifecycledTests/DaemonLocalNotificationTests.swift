import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import DurableState
import Foundation
import Glibc
import LifecycledProtocol
import LocalNotificationEngine
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

private let counter = "org.example.Counter"

/// A daemon hosting counter-app (its callbacks logged to the returned file) beside python-dbusmock's
/// `notification_daemon` on the same private session bus.
@MainActor
private func withCounterAndNotificationServer(
    startServer: Bool = true, log: RecordedLog? = nil,
    _ body: @escaping @MainActor (DaemonHarness, DBusMock?, String) async throws -> Void
) async throws {
    let products = try #require(
        BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
    var appLog = ""
    try await withDaemon(
        termination: TerminationPolicy(deadline: .seconds(5), grace: .milliseconds(500)),
        configure: { configuration in
            if let log { configuration.logger = log.logger(label: "lifecycled") }
        },
        setUp: { dir in
            appLog = dir.path + "/counter.log"
            let launcher = try writeScript(
                dir, "counter.sh",
                "exec \(products)/counter-app --host lifecycled --state-directory \(dir.path)/state >>\(appLog) 2>&1")
            try writeManifest(dir, id: counter, executable: launcher)
        }
    ) { h in
        var server: DBusMock?
        if startServer {
            server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            #expect(
                await eventually { h.daemon.localNotifications.server?.serverOwner != nil },
                "lifecycled did not see the notification server")
        }
        defer { server?.stop() }
        try await body(h, server, appLog)
    }
}

private func notification(_ id: String, in seconds: Double, title: String, actions: [(String, String)] = [])
    -> BusValue
{
    var info: UserInfo = [
        "identifier": .string(id), "fireDate": .date(Date().addingTimeInterval(seconds)),
        "alertTitle": .string(title), "alertBody": .string("body of \(id)"),
    ]
    if !actions.isEmpty {
        info["actions"] = .array(
            actions.map { .dictionary(["identifier": .string($0.0), "title": .string($0.1)]) })
    }
    return UserInfoBusCodec.encode(info)
}

/// Whether a `CloseNotification` call the mock recorded closes banner `id` (the mock's template
/// declares its argument `i`, so it records a plain number).
private func closes(_ call: String, _ id: UInt32) -> Bool {
    call.contains("<\(id)>") || call.contains("<uint32 \(id)>")
}

/// The `Notify` calls the mock received, one string each.
private func notifyCalls(_ server: DBusMock) throws -> [String] { try server.calls("Notify") }

@Suite("lifecycled local notifications", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonLocalNotificationTests {
    @Test func aBannerClickLaunchesTheAppWithTheNotificationThenDidReceiveThenActiveAndAnActiveAppGetsNoBanner()
        async throws
    {
        try await withCounterAndNotificationServer { h, server, appLog in
            let server = try #require(server)
            let id = try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(counter), notification("r1", in: 0.5, title: "Stretch", actions: [("increment", "+1")])])
            #expect(id.first?.stringValue == "r1")
            // Not running: a banner, with the default action and the category's button, naming the app.
            #expect(try await eventually { try notifyCalls(server).count == 1 }, "no Notify call")
            let call = try #require(try notifyCalls(server).first)
            #expect(call.contains("'Stretch'") && call.contains("'body of r1'"), "\(call)")
            #expect(call.contains("['default', 'Open', 'increment', '+1']"), "\(call)")
            #expect(call.contains("'desktop-entry': <'org.example.Counter'>"), "\(call)")
            #expect(
                try await h.client.call(LifecycledProtocol.Method.listNotifications.name, [.string(counter)]).first
                    == .array(elementSignature: "a{sv}", []))

            // A spoofed ActionInvoked from a peer that does not own org.freedesktop.Notifications does nothing.
            try h.client.connection.emitSignal(
                path: "/org/freedesktop/Notifications", interface: "org.freedesktop.Notifications",
                member: "ActionInvoked", arguments: [.uint32(1), .string("increment")])
            // A sync point on lifecycled's side: a round trip to the bus on the same connection
            // means the bus has routed the spoofed signal; the server's ActivationToken emitted
            // after it reaches lifecycled after it, and goes through the same event stream, in
            // order. Once lifecycled has recorded that token for banner 1, it has handled (or
            // never got) the spoofed signal, and banner 1 was still there.
            _ = try await h.client.connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetId")
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActivationToken", signature: "us",
                arguments: ["uint32 1", "'after-the-spoof'"])
            #expect(
                await eventually { h.daemon.localNotifications.activationTokens[1] == "after-the-spoof" },
                "a spoofed ActionInvoked consumed the banner (the server's token for it was not taken)")
            #expect(h.daemon.localNotifications.banners[1] != nil, "a spoofed ActionInvoked consumed the banner")

            // The user clicks it: the server sends the activation token first, then the action.
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActivationToken", signature: "us",
                arguments: ["uint32 1", "'token-42'"])
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
                arguments: ["uint32 1", "'default'"])
            try await h.client.log.waitForState(counter, .active)
            #expect(
                try await eventually { callbacks(appLog).contains("didBecomeActive") }, "\(logLines(appLog))")
            #expect(
                callbacks(appLog).prefix(3) == [
                    "didFinishLaunching localNotification=r1 activationToken=token-42",
                    "didReceive local notification r1", "didBecomeActive",
                ], "\(logLines(appLog))")
            // Handled: the banner is withdrawn, and a second action on it is ignored (acted on once).
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 1) } })
            #expect(h.daemon.localNotifications.banners[1] == nil)

            // Active now: the next one goes to the delegate, not to a banner.
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(counter), notification("r2", in: 0, title: "Now")])
            #expect(
                try await eventually { callbacks(appLog).contains("didReceive local notification r2") },
                "\(logLines(appLog))")
            #expect(try notifyCalls(server).count == 1)
            #expect(!callbacks(appLog).contains { $0.hasPrefix("handleAction") })
        }
    }

    @Test func scheduledFiredAndShownAreCountedInGetCountersAndTheJournalFields() async throws {
        let log = RecordedLog()
        try await withCounterAndNotificationServer(log: log) { h, server, appLog in
            let server = try #require(server)
            func counters() async throws -> UserInfo {
                let reply = try await h.client.call(LifecycledProtocol.Method.getCounters.name)
                return try UserInfoBusCodec.decodeUserInfo(try #require(reply.first))
            }
            #expect(try await counters()["notifications-scheduled"] == .int(0))
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(counter), notification("c1", in: 0.3, title: "Count me")])
            #expect(try await counters()["notifications-scheduled"] == .int(1))
            #expect(try await eventually { try notifyCalls(server).count == 1 }, "no Notify call")
            #expect(await eventually { log.messages.contains { $0.contains("'c1' shown as banner") } })
            let counted = try await counters()
            #expect(counted["notifications-scheduled"] == .int(1))
            #expect(counted["notifications-fired"] == .int(1))
            #expect(counted["notifications-shown"] == .int(1))
            #expect(counted["notifications-delivered-to-app"] == .int(0))
            // No broker: the push counters are there, and 0.
            #expect(counted["push-received"] == .int(0))
            // The lines of each event carry the counters (journal fields NOTIFICATIONS_SHOWN=…).
            let shown = try #require(log.entries.last { $0.message.contains("'c1' shown as banner") })
            #expect(shown.metadata["notifications-shown"] == "1")
            #expect(shown.metadata["notifications-fired"] == "1")
            #expect(shown.metadata["app_id"] == counter)
            let scheduled = try #require(log.entries.last { $0.message.contains("scheduled local notification 'c1'") })
            #expect(scheduled.metadata["notifications-scheduled"] == "1")
            #expect(scheduled.metadata["notifications-shown"] == "0")
        }
    }

    @Test func anActionButtonLaunchesTheAppInTheBackgroundForHandleActionAndItIsSuspendedAfter() async throws {
        try await withCounterAndNotificationServer { h, server, appLog in
            let server = try #require(server)
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(counter), notification("r3", in: 0, title: "Water", actions: [("increment", "+1")])])
            #expect(try await eventually { try notifyCalls(server).count == 1 }, "no Notify call")
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
                arguments: ["uint32 1", "'increment'"])
            #expect(
                try await eventually { callbacks(appLog).contains("handleAction increment for r3") },
                "\(logLines(appLog))")
            try await h.client.log.waitForState(counter, .suspended)
            // Launched for the action with no notification in its options, handled in the background.
            #expect(callbacks(appLog).first == "didFinishLaunching", "\(logLines(appLog))")
            #expect(
                logLines(appLog).contains { $0.contains("handleAction increment for r3 state=background") },
                "\(logLines(appLog))")
            #expect(!callbacks(appLog).contains("didBecomeActive"))
            #expect(!h.client.log.stateChanges(counter).contains { $0.hasSuffix("->active") })
        }
    }

    @Test func withoutAServerTheNotificationWaitsForTheAppsNextActivation() async throws {
        try await withDaemon { h in
            let app = try await FakeApp("org.example.Quiet", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(app.id), notification("q1", in: 0, title: "Later")])
            // It fires at once and is kept (no server to show it), not sent to the background app;
            // once kept, nothing of it is left to deliver.
            #expect(await eventually { h.daemon.localNotifications.undelivered[app.id]?.count == 1 }, "not kept")
            try await h.emitted.wait(for: "the firing's schedule change") {
                $0.commands(app.id).filter { $0 == LifecycledCommand.scheduleChangedName }.count == 2
            }
            #expect(h.daemon.localNotifications.schedule.count == 0 && h.daemon.localNotifications.delivering.isEmpty)
            #expect(!h.emitted.commands(app.id).contains("local-notification"))
            // The app's mirror of its schedule gets changes, not the whole list: added, then fired.
            let changes = h.emitted.all.filter {
                $0.member == LifecycledProtocol.Signal.command.name && $0.arguments[0].stringValue == app.id
                    && $0.arguments[1].stringValue == LifecycledCommand.scheduleChangedName
            }.compactMap { try? UserInfoBusCodec.decodeUserInfo($0.arguments[2]) }
            #expect(changes.count == 2, "\(changes)")
            #expect(
                changes.first?["updated"]?.arrayValue?.first?.dictionaryValue?["identifier"]?.stringValue == "q1")
            #expect(changes.last?["removed"] == .array([.string("q1")]))
            try await app.report(.inactive)
            try await app.report(.active)
            try await h.emitted.wait(for: "the kept notification") {
                $0.commands(app.id).contains("local-notification")
            }
        }
    }

    @Test func theScheduleSurvivesADaemonRestartAndFiresOnceAndBadInputIsRefused() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        try writeManifest(dir, id: counter, executable: "/bin/true")
        let configuration = DaemonConfiguration(
            busAddress: .address(bus.address), appsDirectories: [appsDirectory(dir)], bridgeSources: [],
            stateDirectory: dir.path + "/daemon-state", logger: Logger(label: "lifecycled"))
        let client = try await DaemonTestClient(address: bus.address, name: "restart-client")
        defer { client.close() }

        let first = LifecycleDaemon(configuration: configuration)
        try await first.start()
        try await client.call(
            LifecycledProtocol.Method.scheduleNotification.name,
            [.string(counter), notification("p1", in: 2, title: "Kept")])
        // Bad input: a clear D-Bus error, and the schedule is unchanged.
        let hugeInfo: UserInfo = [
            "identifier": .string("big"), "alertBody": .string(String(repeating: "x", count: 10_000)),
        ]
        let huge = UserInfoBusCodec.encode(hugeInfo)
        #expect(
            await client.errorName(LifecycledProtocol.Method.scheduleNotification.name, [.string(counter), huge])
                == "org.freedesktop.DBus.Error.InvalidArgs")
        #expect(
            await client.errorName(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string("org.example.Nobody"), notification("n", in: 1, title: "x")])
                == LifecycledProtocol.ErrorName.unknownApp)
        first.abandonForTesting()
        // What the next daemon finds: p1 alone, on disk (checked here, not in its schedule after
        // its start: on a loaded machine p1 may be due by then, and fire at once).
        let saved = LocalNotificationScheduleFile.load(from: try #require(first.localNotifications.scheduleURL))
            .notifications
        #expect(saved.map(\.key) == [LocalNotificationSchedule.Key(appID: counter, identifier: "p1")])

        let second = LifecycleDaemon(configuration: configuration)
        try await second.start()
        defer { Task { await second.shutdown(reason: .hostRequest) } }
        // No server: the firing is kept for the app; once, and the schedule is empty (on disk too).
        #expect(
            try await eventually(hangGuard: .seconds(5)) { second.localNotifications.undelivered[counter]?.count == 1 })
        // Written after the firing, off the main actor.
        let scheduleURL = try #require(second.localNotifications.scheduleURL)
        #expect(await eventually { LocalNotificationScheduleFile.load(from: scheduleURL).notifications.isEmpty })
        // Once: nothing of it is left to fire or on its way to a banner, and an alarm now finds nothing due.
        #expect(second.localNotifications.schedule.count == 0 && second.localNotifications.delivering.isEmpty)
        second.localNotifications.fireDue()
        #expect(second.localNotifications.delivering.isEmpty)
        #expect(second.localNotifications.undelivered[counter]?.count == 1)
        await second.shutdown(reason: .hostRequest)
    }

    /// Issue 16, defect 14: a banner is withdrawn (`CloseNotification`) when its notification is
    /// handled, cancelled or replaced; a banner is acted on at most once; cancelling an identifier
    /// the app never had is `UnknownNotification`, and `lifecyclectl cancel-notification` exits 1.
    @Test func bannersAreWithdrawnWhenHandledCancelledOrReplacedAndActedOnOnce() async throws {
        try await withDaemon { h in
            let server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            defer { server.stop() }
            #expect(await eventually { h.daemon.localNotifications.server?.serverOwner != nil })
            let app = try await FakeApp("org.example.Banners", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            func closed() throws -> [String] { try server.calls("CloseNotification") }
            func schedule(_ id: String, in seconds: Double) async throws {
                try await app.client.call(
                    LifecycledProtocol.Method.scheduleNotification.name,
                    [.string(app.id), notification(id, in: seconds, title: id, actions: [("archive", "Archive")])])
            }
            // Handled: the action runs once, however often the server reports it; the banner goes.
            try await schedule("h1", in: 0)
            #expect(try await eventually { try notifyCalls(server).count == 1 })
            for _ in 0..<2 {
                try server.emitSignal(
                    interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
                    arguments: ["uint32 1", "'archive'"])
            }
            try await h.emitted.wait(for: "the action") { $0.commands(app.id).contains("local-notification-action") }
            #expect(try await eventually { try closed().count == 1 })
            let closedCalls1 = try closed()
            #expect(closedCalls1.first.map { closes($0, 1) } == true, "\(closedCalls1)")
            #expect(h.daemon.localNotifications.banners[1] == nil)

            // Cancelled: its banner is withdrawn.
            try await schedule("c1", in: 0)
            #expect(try await eventually { try notifyCalls(server).count == 2 })
            try await app.client.call(
                LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("c1")])
            #expect(try await eventually { try closed().count == 2 })
            let closedCalls2 = try closed()
            #expect(closedCalls2.last.map { closes($0, 2) } == true, "\(closedCalls2)")

            // Replaced: scheduling the same identifier again withdraws the banner it had.
            try await schedule("r1", in: 0)
            #expect(try await eventually { try notifyCalls(server).count == 3 })
            try await schedule("r1", in: 3600)
            #expect(try await eventually { try closed().count == 3 })
            let closedCalls3 = try closed()
            #expect(closedCalls3.last.map { closes($0, 3) } == true, "\(closedCalls3)")
            #expect(h.daemon.localNotifications.banners.isEmpty)

            // Never existed: a distinct error; the app's "cancel all" of nothing is not one.
            #expect(
                await app.client.errorName(
                    LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("never")])
                    == LifecycledProtocol.ErrorName.unknownNotification)
            try await app.client.call(
                LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("r1")])
            #expect(
                await app.client.errorName(
                    LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("r1")])
                    == LifecycledProtocol.ErrorName.unknownNotification)
            try await app.client.call(
                LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("")])
            // The mock's replies to Notify came after its second ActionInvoked for banner 1, so
            // that one was handled by now: ignored, the action ran once.
            #expect(h.emitted.commands(app.id).filter { $0 == "local-notification-action" }.count == 1)
        }
    }

    /// Review finding 5: a notification cancelled or replaced while the server is making its
    /// banner (`Notify` is out) is found by the cancel (no `UnknownNotification`), its banner is
    /// withdrawn as soon as the server answers, and nothing is kept for the app. The mock's
    /// `Notify` is replaced by one that waits for the test's word (a file), so the cancel lands
    /// while it is out, every time.
    @Test func aCancelOrAReplacementWhileNotifyIsOutWithdrawsTheBannerAndKeepsNothing() async throws {
        try await withDaemon { h in
            let server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            defer { server.stop() }
            #expect(await eventually { h.daemon.localNotifications.server?.serverOwner != nil })
            let gate = try TemporaryDirectory(prefix: "slow-notify")
            defer { gate.remove() }
            func release(_ call: Int) {
                FileManager.default.createFile(atPath: gate.path + "/release-\(call)", contents: nil)
            }
            // Call n marks entered-n, waits for release-n, then answers 100 + n.
            try server.addMethod(
                interface: "org.freedesktop.Notifications", name: "Notify", inSignature: "susssasa{sv}i",
                outSignature: "u",
                code: """
                    import os, time
                    gate = \(DBusMock.quote(gate.path))
                    n = len([f for f in os.listdir(gate) if f.startswith('entered-')]) + 1
                    open(gate + '/entered-%d' % n, 'w').close()
                    while not os.path.exists(gate + '/release-%d' % n): time.sleep(0.01)
                    ret = dbus.UInt32(100 + n)
                    """)
            // Whatever happens, the mock is not left waiting (stop() would still end it).
            defer { for call in 1...2 { release(call) } }
            let app = try await FakeApp("org.example.Racing", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            func entered(_ call: Int) -> Bool { FileManager.default.fileExists(atPath: gate.path + "/entered-\(call)") }
            func schedule(_ id: String, in seconds: Double) async throws {
                try await app.client.call(
                    LifecycledProtocol.Method.scheduleNotification.name,
                    [.string(app.id), notification(id, in: seconds, title: id)])
            }
            let scheduleURL = try #require(h.daemon.localNotifications.scheduleURL)
            @Sendable func kept() -> [String] {
                LocalNotificationScheduleFile.load(from: scheduleURL).undelivered.map(\.identifier)
            }

            // Cancelled while Notify is out: found, and banner 101 is withdrawn once it exists.
            try await schedule("c1", in: 0)
            #expect(await eventually { entered(1) }, "Notify was not called")
            #expect(h.daemon.localNotifications.delivering.count == 1)
            #expect(
                await app.client.errorName(
                    LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("c1")])
                    == nil)
            release(1)
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 101) } })
            #expect(h.daemon.localNotifications.banners.isEmpty && h.daemon.localNotifications.bannerIDs.isEmpty)
            #expect(h.daemon.localNotifications.delivering.isEmpty && h.daemon.localNotifications.undelivered.isEmpty)
            #expect(await eventually { kept().isEmpty }, "\(kept())")

            // Replaced while Notify is out: the new one is scheduled, the old one's banner 102 withdrawn.
            try await schedule("r1", in: 0)
            #expect(await eventually { entered(2) }, "Notify was not called again")
            try await schedule("r1", in: 3600)
            release(2)
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 102) } })
            #expect(h.daemon.localNotifications.banners.isEmpty && h.daemon.localNotifications.bannerIDs.isEmpty)
            #expect(h.daemon.localNotifications.delivering.isEmpty && h.daemon.localNotifications.undelivered.isEmpty)
            #expect(h.daemon.localNotifications.schedule.entry(.init(appID: app.id, identifier: "r1")) != nil)
            #expect(await eventually { kept().isEmpty }, "\(kept())")
            #expect(!h.emitted.commands(app.id).contains("local-notification"))
        }
    }

    /// Review finding 5: a notification does not fire while its `ScheduleNotification` write is
    /// out, so a `NotSaved` reply is the whole truth: it was neither delivered nor kept. The
    /// write is held (the writer's save waits for the test) and the alarm's work (`fireDue`) runs
    /// meanwhile; the save then fails as a full disk does.
    @Test func nothingFiresBeforeItsScheduleIsSavedSoNotSavedMeansNotDelivered() async throws {
        try await withDaemon { h in
            let server = try DBusMock(template: "notification_daemon", address: h.bus.address)
            defer { server.stop() }
            #expect(await eventually { h.daemon.localNotifications.server?.serverOwner != nil })
            let app = try await FakeApp("org.example.Unsaved", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            let gate = HeldSave()
            defer { gate.release() }
            h.daemon.localNotifications.writer = GroupCommitFile(
                url: try #require(h.daemon.localNotifications.scheduleURL), logger: h.daemon.logger,
                write: { _, _ in
                    gate.enterAndWait()
                    throw ApplicationError(.io, "write: held by the test", errno: ENOSPC)
                })
            let reply = Task {
                await app.client.errorName(
                    LifecycledProtocol.Method.scheduleNotification.name,
                    [.string(app.id), notification("due", in: -1, title: "Due")])
            }
            #expect(await eventually { gate.entered }, "the write did not start")
            // The alarm goes off while the write is out: the notification is not in the schedule yet.
            h.daemon.localNotifications.fireDue()
            #expect(
                h.daemon.localNotifications.delivering.isEmpty, "fired before its write said whether it is scheduled")
            gate.release()
            #expect(await reply.value == LifecycledProtocol.ErrorName.notSaved)
            #expect(h.daemon.localNotifications.schedule.count == 0)
            #expect(h.daemon.localNotifications.delivering.isEmpty && h.daemon.localNotifications.undelivered.isEmpty)
            #expect(h.daemon.localNotifications.banners.isEmpty)
            #expect(!h.emitted.commands(app.id).contains("local-notification"))
            #expect(try notifyCalls(server).isEmpty)
        }
    }

    @Test func theIdleInhibitorIsHeldExactlyWhileTheAppIsActiveAndWantsIt() async throws {
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let logind = try DBusMock(template: "logind", address: systemBus.address)
        defer { logind.stop() }
        func idleInhibitors() throws -> Bool {
            try logind.call(interface: "org.freedesktop.login1.Manager", method: "ListInhibitors")
                .contains("'idle', 'org.example.Reader'")
        }
        try await withDaemon(systemBus: .address(systemBus.address)) { h in
            // The desktop's side: org.freedesktop.ScreenSaver, a stand-in from its interface.
            let screensaver = try DBusMock.freedesktopScreenSaver(address: h.bus.address, cookie: 4242)
            defer { screensaver.stop() }
            func screensaverCalls(_ method: String) throws -> Int { try screensaver.callCount(method) }
            let app = try await FakeApp("org.example.Reader", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.inactive)
            try await app.client.call(
                LifecycledProtocol.Method.setIdleTimerDisabled.name, [.string(app.id), .bool(true)])
            // Decided in the call: nothing was asked of logind (a request would have opened the
            // system bus in the daemon's first turn after the call, before this barrier's answer).
            try await h.client.barrier()
            #expect(
                h.daemon.idle.systemBus == nil && h.daemon.idle.systemBusOpening == nil, "held while only inactive")
            #expect(h.daemon.idle.idleInhibitors[app.id] == nil && h.daemon.idle.screenSaverCookies[app.id] == nil)
            #expect(try !idleInhibitors(), "held while only inactive")
            try await app.report(.active)
            #expect(try await eventually { try idleInhibitors() }, "not held while active")
            #expect(try await eventually { try screensaverCalls("Inhibit") == 1 }, "the screensaver was not inhibited")
            #expect(try screensaver.methodCalls("Inhibit").contains("'org.example.Reader disabled the idle timer'"))
            try await app.report(.inactive)
            #expect(try await eventually { try !idleInhibitors() }, "still held after resigning active")
            #expect(try await eventually { try screensaverCalls("UnInhibit") == 1 })
            #expect(try screensaver.methodCalls("UnInhibit").contains("4242"), "UnInhibit without the cookie")
            try await app.report(.active)
            #expect(try await eventually { try idleInhibitors() })
            try await app.client.call(
                LifecycledProtocol.Method.setIdleTimerDisabled.name, [.string(app.id), .bool(false)])
            #expect(try await eventually { try !idleInhibitors() }, "still held after isIdleTimerDisabled = false")
            // Another connection may not ask for it in the app's name.
            #expect(
                await h.client.errorName(
                    LifecycledProtocol.Method.setIdleTimerDisabled.name, [.string(app.id), .bool(true)])
                    == LifecycledProtocol.ErrorName.notRegistered)
        }
    }

    @Test func theBadgeIsAnnouncedAsALauncherEntryUpdate() async throws {
        try await withDaemon { h in
            let updates = ValueRecorder<[BusValue]>()
            let subscription = try await h.client.connection.subscribe(
                sender: try #require(h.daemon.connection?.uniqueName), interface: "com.canonical.Unity.LauncherEntry",
                member: "Update", signature: "sa{sv}"
            ) { signal in updates.add(signal.arguments) }
            defer { subscription.cancel() }
            try writeManifest(h.directory, id: "org.example.Mail", executable: "/bin/true")
            #expect(
                await h.client.errorName(
                    LifecycledProtocol.Method.setBadge.name, [.string("org.example.Mail"), .int64(3)])
                    == LifecycledProtocol.ErrorName.unknownApp, "the manifest was written after the daemon read them")
            let app = try await FakeApp("org.example.Mail", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            // Another process of the same user may not set the app's badge, before or after it registered.
            #expect(
                await h.client.errorName(LifecycledProtocol.Method.setBadge.name, [.string(app.id), .int64(99)])
                    == LifecycledProtocol.ErrorName.notRegistered)
            try await app.client.call(LifecycledProtocol.Method.setBadge.name, [.string(app.id), .int64(3)])
            #expect(
                await h.client.errorName(LifecycledProtocol.Method.setBadge.name, [.string(app.id), .int64(42)])
                    == LifecycledProtocol.ErrorName.notRegistered)
            try await app.client.call(LifecycledProtocol.Method.setBadge.name, [.string(app.id), .int64(0)])
            #expect(try await eventually { updates.values.count == 2 })
            #expect(updates.values[0][0] == .string("application://org.example.Mail.desktop"))
            #expect(
                updates.values[0][1]
                    == .vardict(["count": .int64(3), "count-visible": .bool(true)]))
            #expect(updates.values[1][1] == .vardict(["count": .int64(0), "count-visible": .bool(false)]))
            #expect(h.emitted.commands(app.id).filter { $0 == "badge" }.count == 2)
        }
    }
}

/// A schedule save the test holds: ``enterAndWait()`` (on the writer's thread) marks it entered
/// and waits until ``release()``.
private final class HeldSave: Sendable {
    private let state = Mutex<(entered: Bool, released: Bool)>((false, false))

    var entered: Bool { state.withLock { $0.entered } }

    func enterAndWait() {
        state.withLock { $0.entered = true }
        while !state.withLock({ $0.released }) { usleep(1000) }
    }

    func release() { state.withLock { $0.released = true } }
}
