import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import LocalNotificationEngine
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// A zone with one fixed offset, so a test can move the daemon's local zone without touching `$TZ`.
private struct FixedOffsetZone: UTCOffsetRules {
    var identifier: String
    var offset: Int
    func utcOffset(at instant: Int) -> Int { offset }
}

/// Whether this process may call `clock_settime(CLOCK_REALTIME)` (CAP_SYS_TIME, bit 25 of CapEff).
private let mayStepTheClock: Bool = {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
        let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << 25) != 0
}()

private func wallClock(secondsFromNow seconds: Int, offset: Int) -> String {
    WallClockDateTime(instant: Int(Date().timeIntervalSince1970) + seconds, utcOffset: offset).description
}

@Suite("lifecycled notification times", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonNotificationTimeTests {
    @Test func aFloatingNotificationFiresWhenTheNewZonesClockShowsItsTime() async throws {
        try await withDaemon { h in
            h.daemon.localTimeZoneChanged(to: FixedOffsetZone(identifier: "Etc/UTC", offset: 0))
            let app = try await FakeApp("org.example.Alarm", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.inactive)
            try await app.report(.active)
            // 07:00 on the local clock, two hours from now in UTC.
            let info: UserInfo = [
                "identifier": .string("alarm"), "wallClock": .string(wallClock(secondsFromNow: 7_200, offset: 0)),
                "timeZone": .string("Etc/UTC"), "alertBody": .string("Wake up"),
            ]
            let absolute: UserInfo = [
                "identifier": .string("meeting"), "alertBody": .string("Meeting"),
                "fireDate": .date(Date().addingTimeInterval(7_200)),
            ]
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name, [.string(app.id), UserInfoBusCodec.encode(info)])
            try await h.client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(app.id), UserInfoBusCodec.encode(absolute)])
            // Two hours away in either zone: the alarm waits for it, and were it to go off now
            // (a slow machine changes nothing here) neither is due.
            let now = LocalNotificationCenter.realtimeNow()
            var schedule = h.daemon.localNotifications.schedule
            #expect((schedule.earliestInstant() ?? 0) > now + 7_000)
            h.daemon.localNotifications.fireDue()
            try await h.client.barrier()
            #expect(!h.emitted.commands(app.id).contains("local-notification"))
            #expect(h.daemon.localNotifications.schedule.count == 2)
            // The machine travels two hours east: its clock shows 07:00 now. The absolute one stays.
            h.daemon.localTimeZoneChanged(to: FixedOffsetZone(identifier: "Etc/GMT-2", offset: 7_200))
            try await h.emitted.wait(for: "the floating notification") {
                $0.commands(app.id).contains("local-notification")
            }
            #expect(h.daemon.localNotifications.schedule.count == 1)
            #expect(h.daemon.localNotifications.schedule.entry(.init(appID: app.id, identifier: "meeting")) != nil)
        }
    }

    @Test(.enabled(if: mayStepTheClock, "needs CAP_SYS_TIME to call clock_settime(CLOCK_REALTIME)"))
    func aClockSetReArmsTheAlarmAndTheNotificationStillFiresOnce() async throws {
        try await TestResourceLock.realtimeClock.withLock {
            try await withDaemon { h in
                let app = try await FakeApp("org.example.Late", address: h.bus.address)
                defer { app.close() }
                _ = try await app.register()
                try await app.report(.inactive)
                try await app.report(.active)
                let info: UserInfo = [
                    "identifier": .string("soon"), "alertBody": .string("Soon"),
                    "fireDate": .date(Date().addingTimeInterval(1.5)),
                ]
                try await h.client.call(
                    LifecycledProtocol.Method.scheduleNotification.name,
                    [.string(app.id), UserInfoBusCodec.encode(info)])
                // A step of the clock (to its own value: discontinuous for the kernel, harmless for the machine).
                var current = timespec()
                clock_gettime(CLOCK_REALTIME, &current)
                #expect(clock_settime(CLOCK_REALTIME, &current) == 0, "errno \(errno)")
                #expect(
                    await eventually { h.daemon.localNotifications.clockSets == 1 },
                    "the alarm did not report the clock set")
                try await h.emitted.wait(for: "the notification after the clock set") {
                    $0.commands(app.id).contains("local-notification")
                }
                // Once: it left the schedule when it fired, so an alarm now (another clock set, a
                // re-arm at the old time) has nothing to fire again.
                #expect(h.daemon.localNotifications.schedule.count == 0)
                h.daemon.localNotifications.alarmWentOff(.clockSet)
                try await h.client.barrier()
                #expect(h.emitted.commands(app.id).filter { $0 == "local-notification" }.count == 1)
            }
        }
    }
}

@Suite("lifecycled binary keeps local notifications", .serialized, .timeLimit(.minutes(2)))
struct DaemonNotificationPersistenceTests {
    @Test func aNotificationScheduledBeforeAKillDashNineFiresOnceAfterTheRestartAtItsTime() async throws {
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        try writeManifest(dir, id: "org.example.Kept", executable: "/bin/true")
        let server = try DBusMock(template: "notification_daemon", address: bus.address)
        defer { server.stop() }
        let client = try await DaemonTestClient(address: bus.address, name: "kill-client")
        defer { client.close() }
        let tracker = try await client.connection.trackNameOwner(LifecycledProtocol.busName)
        let arguments = [
            "--address", bus.address, "--apps-directory", appsDirectory(dir), "--no-host-sources",
            "--state-directory", dir.path + "/daemon-state",
        ]
        func notifyCount() throws -> Int { try server.callCount("Notify") }

        let first = try SpawnedDaemon(binary, arguments)
        defer { first.kill() }
        #expect(await eventually { tracker.currentOwner != nil }, "lifecycled did not start")
        let fireDate = Date().addingTimeInterval(3)
        let info: UserInfo = [
            "identifier": .string("kept"), "alertTitle": .string("Kept"), "alertBody": .string("through kill -9"),
            "fireDate": .date(fireDate),
        ]
        try await client.call(
            LifecycledProtocol.Method.scheduleNotification.name,
            [.string("org.example.Kept"), UserInfoBusCodec.encode(info)])
        kill(first.process.processIdentifier, SIGKILL)
        #expect(await first.exitStatus() != 0)
        #expect(await eventually { tracker.currentOwner == nil })

        let second = try SpawnedDaemon(binary, arguments)
        defer { second.kill() }
        #expect(await eventually { tracker.currentOwner != nil }, "lifecycled did not start again")
        #expect(try await eventually(hangGuard: .seconds(10)) { try notifyCount() == 1 }, "never fired")
        // Not before its time: the server's record of the call (whole seconds), not a look right
        // after the restart, which a loaded machine can make later than the fire date.
        #expect(
            try server.callTimes("Notify").first ?? 0 >= UInt64(fireDate.timeIntervalSince1970), "fired before its time"
        )
        // At its time (the alarm is absolute; a second of slack for a loaded machine), and once.
        #expect(Date() >= fireDate && Date() < fireDate.addingTimeInterval(2))
        // Once: it left the schedule when it fired, and a notification due now fires after it
        // (one alarm, fire-time order, Notify calls in order on lifecycled's connection), so a
        // second firing of the first would reach the server before this one does.
        let listed = try await client.call(
            LifecycledProtocol.Method.listNotifications.name, [.string("org.example.Kept")])
        #expect(listed.first?.arrayValue?.isEmpty == true, "still scheduled: \(listed)")
        let after: UserInfo = [
            "identifier": .string("after"), "alertTitle": .string("After"), "alertBody": .string("the barrier"),
            "fireDate": .date(Date()),
        ]
        try await client.call(
            LifecycledProtocol.Method.scheduleNotification.name,
            [.string("org.example.Kept"), UserInfoBusCodec.encode(after)])
        #expect(
            try await eventually(hangGuard: .seconds(10)) {
                try server.calls("Notify").contains { $0.contains("the barrier") }
            }, "the later notification never fired")
        let calls = try server.calls("Notify")
        let bodies = calls.map { $0.contains("through kill -9") ? "kept" : "after" }
        #expect(bodies == ["kept", "after"], "\(calls)")
        kill(second.process.processIdentifier, SIGTERM)
        #expect(await second.exitStatus() == 0)
    }
}
