import AppLifecycle
import AppLifecycleSystemd
import Foundation
import Glibc
import LifecycledProtocol
import LocalNotificationEngine
import SystemdBus
import SystemdBusTesting
import Testing

/// The lifecycled binary on a private bus, restarted and killed over one state directory; its
/// standard error goes to a log file the test reads.
private final class LocalNotificationRig {
    static let app = "org.example.Durable"
    let binary: String
    let bus: PrivateBus
    let directory: TemporaryDirectory
    let stateDirectory: String
    let logPath: String
    let client: DaemonTestClient
    let tracker: NameOwnerTracker
    private(set) var daemon: SpawnedDaemon?

    init(prefix: String, apps: [String] = [LocalNotificationRig.app]) async throws {
        binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        bus = try PrivateBus()
        directory = try TemporaryDirectory(prefix: prefix)
        stateDirectory = directory.path + "/state"
        logPath = directory.path + "/lifecycled.log"
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: appsDirectory(directory), withIntermediateDirectories: true)
        for app in apps { try writeManifest(directory, id: app, executable: "/bin/true") }
        client = try await DaemonTestClient(address: bus.address, name: "\(prefix)-client")
        tracker = try await client.connection.trackNameOwner(LifecycledProtocol.busName)
    }

    var scheduleURL: URL { URL(fileURLWithPath: stateDirectory + "/" + LocalNotificationScheduleFile.fileName) }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts lifecycled and waits until it owns its name.
    func start() async throws {
        let arguments = [
            "--address", bus.address, "--apps-directory", appsDirectory(directory), "--no-host-sources",
            "--state-directory", stateDirectory,
        ]
        // `exec`: the pid is lifecycled's own, and its standard error is appended to the log.
        daemon = try SpawnedDaemon("/bin/sh", ["-c", "exec \"$0\" \"$@\" 2>>\(logPath)", binary] + arguments)
        #expect(await eventually { self.tracker.currentOwner != nil }, "lifecycled did not start: \(log)")
    }

    /// Stops lifecycled with a signal and waits for it to exit and leave the bus.
    func stop(_ signal: Int32) async {
        guard let daemon else { return }
        kill(daemon.process.processIdentifier, signal)
        _ = await daemon.exitStatus()
        self.daemon = nil
        #expect(await eventually { self.tracker.currentOwner == nil })
    }

    /// Stops everything the rig started (each by its own pid).
    func close() {
        daemon?.kill()
        client.close()
        bus.stop()
    }

    /// The identifiers `ListNotifications(app)` returns.
    func scheduled(_ app: String = LocalNotificationRig.app) async throws -> [String] {
        let reply = try await client.call(LifecycledProtocol.Method.listNotifications.name, [.string(app)])
        return (reply.first?.arrayValue ?? []).compactMap {
            (try? UserInfoBusCodec.decodeUserInfo($0))?["identifier"]?.stringValue
        }
    }

    /// `ScheduleNotification`: the identifier, or the D-Bus error.
    func schedule(
        _ identifier: String, in seconds: Double, app: String = LocalNotificationRig.app, extra: UserInfo = [:]
    )
        async -> Result<String, BusError>
    {
        var info: UserInfo = [
            "identifier": .string(identifier), "alertBody": .string("body of \(identifier)"),
            "fireDate": .date(Date().addingTimeInterval(seconds)),
        ]
        for (key, value) in extra.values { info[key] = value }
        do {
            let reply = try await client.call(
                LifecycledProtocol.Method.scheduleNotification.name, [.string(app), UserInfoBusCodec.encode(info)])
            return .success(reply.first?.stringValue ?? "")
        } catch let error as BusError {
            return .failure(error)
        } catch {
            return .failure(BusError(name: "unexpected", message: "\(error)"))
        }
    }
}

/// Writes a schedule file by hand, as a previous lifecycled would have (or a user's editor).
private func writeSchedule(_ notifications: [ScheduledLocalNotification], to url: URL) throws {
    try LocalNotificationScheduleFile.save(.init(notifications: notifications), to: url)
}

private func scheduledNotification(
    _ identifier: String, app: String, fireDate: Date, extra: [String: UserInfoValue] = [:]
)
    throws -> ScheduledLocalNotification
{
    var payload: [String: UserInfoValue] = [
        "identifier": .string(identifier), "alertTitle": .string(identifier), "alertBody": .string("overdue"),
        "fireDate": .date(fireDate),
    ]
    for (key, value) in extra { payload[key] = value }
    return try ScheduledLocalNotification(appID: app, payload: payload, buttons: [], scheduledAt: Date())
}

/// Runs a program to completion (mount, umount), throwing when it fails.
private func run(_ executable: String, _ arguments: [String]) throws {
    let (status, output) = try ChildProcess.run(executable, arguments)
    guard status == 0 else {
        throw TestFailure("\(executable) \(arguments.joined(separator: " ")) exited \(status): \(output)")
    }
}

/// Writes zeros to a new file until the file system is full; returns the bytes written.
private func fillFileSystem(at path: String) throws -> Int {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let chunk = [UInt8](repeating: 0, count: 4096)
    var total = 0
    while true {
        let written = chunk.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        if written > 0 {
            total += written
            continue
        }
        if written < 0, errno == EINTR { continue }
        guard written < 0, errno == ENOSPC else {
            throw TestFailure("filling \(path): \(String(cString: strerror(errno)))")
        }
        return total
    }
}

@Suite("lifecycled local notifications: durability, limits, restarts", .serialized, .timeLimit(.minutes(3)))
struct LocalNotificationDurabilityTests {
    /// Issue 16, defect 2: on a full disk `ScheduleNotification` fails with `NotSaved` (what to do
    /// in its message) instead of succeeding; once space returns, scheduling works again, and after
    /// a SIGKILL every acknowledged notification is there, none of the refused ones.
    @Test func aFullDiskRefusesTheScheduleAndNothingAcknowledgedIsLost() async throws {
        let rig = try await LocalNotificationRig(prefix: "full-disk")
        defer { rig.directory.remove() }
        var mounted = false
        // Declared before the rig's close, so it runs after it (defers run in reverse): lifecycled
        // is gone and nothing holds the mount. A failed unmount is reported, not hidden.
        defer {
            if mounted {
                do { try run("/bin/umount", [rig.stateDirectory]) } catch {
                    Issue.record("\(error): the tmpfs is left")
                }
            }
        }
        defer { rig.close() }
        try run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", rig.stateDirectory])
        mounted = true
        try await rig.start()

        var acknowledged: [String] = []
        var refused: [String] = []
        func schedule(_ identifier: String) async -> BusError? {
            switch await rig.schedule(identifier, in: 3600) {
            case .success(let id):
                #expect(id == identifier)
                acknowledged.append(identifier)
                return nil
            case .failure(let error):
                refused.append(identifier)
                return error
            }
        }
        for index in 0..<5 { #expect(await schedule("before-\(index)") == nil) }

        let filler = rig.stateDirectory + "/filler"
        let filled = try fillFileSystem(at: filler)
        for index in 0..<10 {
            let error = await schedule("full-\(index)")
            #expect(error?.name == LifecycledProtocol.ErrorName.notSaved, "\(String(describing: error))")
            #expect(
                error?.message.contains("free space in \(rig.stateDirectory)") == true, "\(String(describing: error))")
        }
        // Not in the schedule either: an error means not scheduled.
        #expect(try await rig.scheduled().sorted() == acknowledged.sorted())
        // A cancellation cannot be saved either: it is said so, and it holds in memory.
        let cancelled = acknowledged.removeFirst()
        #expect(
            await rig.client.errorName(
                LifecycledProtocol.Method.cancelNotification.name,
                [.string(LocalNotificationRig.app), .string(cancelled)])
                == LifecycledProtocol.ErrorName.notSaved)
        #expect(try await rig.scheduled().sorted() == acknowledged.sorted())
        func onDisk() -> [String] {
            LocalNotificationScheduleFile.load(from: rig.scheduleURL).notifications.map(\.identifier).sorted()
        }
        #expect(onDisk().contains(cancelled))

        // Space returns: lifecycled writes again by itself (its retry), no call needed.
        try FileManager.default.removeItem(atPath: filler)
        #expect(
            await eventually(hangGuard: .seconds(30)) { onDisk() == acknowledged.sorted() },
            "not written again after space returned: \(onDisk())")
        for index in 0..<5 { #expect(await schedule("after-\(index)") == nil) }

        await rig.stop(SIGKILL)
        try await rig.start()
        let survived = try await rig.scheduled()
        let lost = Set(acknowledged).subtracting(survived)
        print(
            "full disk (\(filled) bytes of filler): \(acknowledged.count) acknowledged, \(refused.count) refused with NotSaved, \(lost.count) lost after SIGKILL"
        )
        #expect(lost.isEmpty, "acknowledged but lost: \(lost)")
        #expect(Set(survived) == Set(acknowledged), "\(survived)")
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 2: a schedule file that cannot be read is set aside as
    /// `<name>.corrupt-<time>` (its bytes intact), a new one is started, and what is scheduled
    /// then survives a SIGKILL.
    @Test func anUnreadableScheduleIsSetAsideAndANewOneStarted() async throws {
        let rig = try await LocalNotificationRig(prefix: "corrupt-schedule")
        defer { rig.directory.remove() }
        defer { rig.close() }
        let garbage = "{\"version\": 1, \"notifications\": [ truncated"
        try garbage.write(to: rig.scheduleURL, atomically: true, encoding: .utf8)
        try await rig.start()
        for index in 0..<8 {
            guard case .success = await rig.schedule("n\(index)", in: 3600) else {
                Issue.record("n\(index) was not scheduled: \(rig.log)")
                continue
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: rig.stateDirectory)
        let setAside = try #require(
            names.first { $0.hasPrefix(LocalNotificationScheduleFile.fileName + ".corrupt-") }, "\(names)")
        #expect(try String(contentsOfFile: rig.stateDirectory + "/" + setAside, encoding: .utf8) == garbage)
        #expect(rig.log.contains("set aside as"), "\(rig.log)")

        await rig.stop(SIGKILL)
        try await rig.start()
        #expect(try await rig.scheduled().sorted() == (0..<8).map { "n\($0)" })
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 4: with no notification server, fired notifications are kept for the
    /// app's next activation on disk, at most 64 per app (the oldest dropped, logged), through a
    /// SIGTERM and a SIGKILL restart, and handed to the app when it becomes active.
    @Test func keptNotificationsAreBoundedAndSurviveRestartsUntilTheAppIsActive() async throws {
        let rig = try await LocalNotificationRig(prefix: "kept-notifications")
        defer { rig.directory.remove() }
        defer { rig.close() }
        try await rig.start()
        let count = LifecycledProtocol.Limits.keptNotificationsPerApp + 6
        for index in 0..<count {
            guard case .success = await rig.schedule("k\(index)", in: -1) else {
                Issue.record("k\(index) was not scheduled")
                continue
            }
        }
        func keptOnDisk() -> [String] {
            LocalNotificationScheduleFile.load(from: rig.scheduleURL).undelivered.map(\.identifier)
        }
        let expected = (6..<count).map { "k\($0)" }
        #expect(await eventually { keptOnDisk() == expected }, "\(keptOnDisk())")
        #expect(
            rig.log.contains("kept local notification 'k0' dropped, the oldest of more than 64"), "\(rig.log)")

        await rig.stop(SIGTERM)
        #expect(keptOnDisk() == expected)
        try await rig.start()
        await rig.stop(SIGKILL)
        try await rig.start()
        #expect(keptOnDisk() == expected)

        let app = try await FakeApp(LocalNotificationRig.app, address: rig.bus.address)
        defer { app.close() }
        _ = try await app.register()
        try await app.report(.inactive)
        try await app.report(.active)
        func delivered() -> [String] {
            app.client.log.all.filter {
                $0.member == LifecycledProtocol.Signal.command.name
                    && $0.arguments[1].stringValue == "local-notification"
            }.compactMap {
                try? UserInfoBusCodec.decodeUserInfo($0.arguments[2])["notification"]?.dictionaryValue?["identifier"]?
                    .stringValue
            }
        }
        #expect(await eventually { delivered() == expected }, "\(delivered())")
        #expect(await eventually { keptOnDisk().isEmpty })
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 3: notifications that came due while lifecycled was not running (the
    /// reboot case) are shown as banners at start when a notification server is on the bus, none
    /// kept as if there were no server.
    @Test func overdueNotificationsAtStartAreShownAsBanners() async throws {
        let rig = try await LocalNotificationRig(prefix: "overdue-at-start")
        defer { rig.directory.remove() }
        defer { rig.close() }
        let count = 20
        let overdue = try (0..<count).map {
            try scheduledNotification(
                "o\($0)", app: LocalNotificationRig.app, fireDate: Date().addingTimeInterval(-60 - Double($0)))
        }
        try writeSchedule(overdue, to: rig.scheduleURL)
        let server = try DBusMock(template: "notification_daemon", address: rig.bus.address)
        defer { server.stop() }
        try await rig.start()
        func notifyCount() -> Int { ((try? server.calls("Notify")) ?? []).count }
        #expect(
            await eventually { notifyCount() == count },
            "\(notifyCount()) banners; \((try? server.methodCalls("Notify")) ?? ""); \(rig.log)")
        // The banners' ids come back before the file drops them from its on-their-way list: both settle.
        #expect(
            await eventually {
                let file = LocalNotificationScheduleFile.load(from: rig.scheduleURL)
                return file.notifications.isEmpty && file.undelivered.isEmpty
            })
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 6: at the limits, `ScheduleNotification` refuses with `LimitsExceeded`
    /// (per app, then in total), and what was accepted still travels: `ListNotifications("")`
    /// answers and lifecycled stays on the bus, and after a SIGKILL an app's registration gets its
    /// whole schedule in its `Command`.
    @Test func theScheduleIsBoundedPerAppAndInTotalAndEveryMessageStaysSendable() async throws {
        let apps = (0..<5).map { "org.example.Big\($0)" }
        let rig = try await LocalNotificationRig(prefix: "schedule-limits", apps: apps)
        defer { rig.directory.remove() }
        defer { rig.close() }
        try await rig.start()
        // 60 KB of userInfo each, just under the 64 KiB a userInfo may have.
        let extra: UserInfo = ["userInfo": .dictionary(["blob": .string(String(repeating: "x", count: 60_000))])]
        var accepted: [String: [String]] = [:]
        var limited: [String: BusError] = [:]
        for app in apps {
            for index in 0..<40 {
                switch await rig.schedule("b\(index)", in: 3600, app: app, extra: extra) {
                case .success(let id): accepted[app, default: []].append(id)
                case .failure(let error):
                    limited[app] = error
                }
                if limited[app] != nil { break }
            }
        }
        let perApp = LifecycledProtocol.Limits.scheduleBytesPerApp
        let total = LifecycledProtocol.Limits.scheduleBytes
        let counts = apps.map { accepted[$0]?.count ?? 0 }
        print("schedule limits: accepted per app \(counts), \(counts.reduce(0, +)) in all (60 KB userInfo each)")
        for app in apps.prefix(4) {
            #expect(limited[app]?.name == BusError.Name.limitsExceeded, "\(app): \(String(describing: limited[app]))")
            #expect(limited[app]?.message.contains("more than the \(perApp) one app may have") == true)
            #expect((accepted[app]?.count ?? 0) * 60_000 <= perApp)
        }
        #expect(limited[apps[4]]?.name == BusError.Name.limitsExceeded)
        #expect(limited[apps[4]]?.message.contains("more than the \(total) lifecycled keeps") == true)
        #expect(counts.reduce(0, +) * 60_000 <= total)

        // The largest reply: every app's schedule, in one message.
        let all = try await rig.client.call(LifecycledProtocol.Method.listNotifications.name, [.string("")])
        #expect(all.first?.arrayValue?.count == counts.reduce(0, +))
        _ = try await rig.client.call(LifecycledProtocol.Method.listApps.name)

        await rig.stop(SIGKILL)
        try await rig.start()
        let app = try await FakeApp(apps[0], address: rig.bus.address)
        defer { app.close() }
        _ = try await app.register()
        try await app.client.log.wait(for: "the schedule Command") {
            $0.commands(apps[0]).contains("scheduled-local-notifications")
        }
        let command = try #require(
            app.client.log.all.first {
                $0.member == LifecycledProtocol.Signal.command.name
                    && $0.arguments[1].stringValue == "scheduled-local-notifications"
            })
        let list = try UserInfoBusCodec.decodeUserInfo(command.arguments[2])["notifications"]?.arrayValue
        #expect(list?.count == accepted[apps[0]]?.count)
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 11: an entry of the file is checked at load as `ScheduleNotification`
    /// checks it: a hand-edited 40 MiB entry is refused with a log line (the file as it was is
    /// kept beside), and the rest of the file loads and can be listed.
    @Test func anEntryOverTheLimitsIsRefusedAtLoadAndTheRestLoads() async throws {
        let rig = try await LocalNotificationRig(prefix: "oversized-entry")
        defer { rig.directory.remove() }
        defer { rig.close() }
        let app = LocalNotificationRig.app
        let later = Date().addingTimeInterval(3600)
        let huge = try scheduledNotification(
            "huge", app: app, fireDate: later,
            extra: ["userInfo": .dictionary(["blob": .string(String(repeating: "y", count: 40 * 1024 * 1024))])])
        try writeSchedule(
            [
                try scheduledNotification("small-1", app: app, fireDate: later), huge,
                try scheduledNotification("small-2", app: app, fireDate: later),
            ], to: rig.scheduleURL)
        try await rig.start()
        #expect(try await rig.scheduled().sorted() == ["small-1", "small-2"])
        #expect(
            rig.log.contains("'huge' of \(app) in \(rig.scheduleURL.path) refused at load"), "\(rig.log.prefix(2000))")
        #expect(rig.log.contains("larger than \(LifecycledProtocol.Limits.userInfoBytes)"), "\(rig.log.prefix(2000))")
        let names = try FileManager.default.contentsOfDirectory(atPath: rig.stateDirectory)
        #expect(names.contains { $0.hasPrefix(LocalNotificationScheduleFile.fileName + ".refused-") }, "\(names)")
        // The new file holds the rest only, and a restart reads it.
        #expect(
            await eventually {
                LocalNotificationScheduleFile.load(from: rig.scheduleURL).notifications.map(\.identifier).sorted()
                    == ["small-1", "small-2"]
            })
        await rig.stop(SIGKILL)
        try await rig.start()
        #expect(try await rig.scheduled().sorted() == ["small-1", "small-2"])
        await rig.stop(SIGTERM)
    }

    /// Review finding 10: when an earlier start already kept a `.refused-<time>` copy in this
    /// second, the file as it was is still kept, as `-2` (a `link()` to the taken name failed with
    /// EEXIST and kept nothing, and the next write dropped the refused entry for good).
    @Test func aSecondRefusalInTheSameSecondStillKeepsTheFileAsItWas() async throws {
        let rig = try await LocalNotificationRig(prefix: "refused-twice")
        defer { rig.directory.remove() }
        defer { rig.close() }
        let app = LocalNotificationRig.app
        let later = Date().addingTimeInterval(3600)
        let oversized = try scheduledNotification(
            "oversized", app: app, fireDate: later,
            extra: ["userInfo": .dictionary(["blob": .string(String(repeating: "y", count: 100_000))])])
        try writeSchedule(
            [try scheduledNotification("small", app: app, fireDate: later), oversized], to: rig.scheduleURL)
        let original = try Data(contentsOf: rig.scheduleURL)
        // Earlier copies of this second and of the next minute (the start takes a moment).
        let now = Int(Date().timeIntervalSince1970)
        for second in now..<(now + 60) {
            let earlier = rig.scheduleURL.path + ".refused-\(second)"
            #expect(FileManager.default.createFile(atPath: earlier, contents: Data("earlier".utf8)))
        }
        try await rig.start()
        #expect(try await rig.scheduled() == ["small"])
        let names = try FileManager.default.contentsOfDirectory(atPath: rig.stateDirectory)
        let copy = try #require(
            names.first { $0.hasPrefix(LocalNotificationScheduleFile.fileName + ".refused-") && $0.hasSuffix("-2") },
            "no copy kept: \(names.sorted()); \(rig.log.prefix(2000))")
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.stateDirectory + "/" + copy)) == original)
        #expect(rig.log.contains("the file as it was is kept as"), "\(rig.log.prefix(2000))")
        await rig.stop(SIGTERM)
    }

    /// Issue 16, defect 14: `lifectl cancel-notification` of an identifier the app never had
    /// says it is unknown and exits 1; of one it has, it exits 0.
    @Test func cancelNotificationOfAnUnknownIdentifierExitsOne() async throws {
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        let rig = try await LocalNotificationRig(prefix: "cancel-unknown")
        defer { rig.directory.remove() }
        defer { rig.close() }
        try await rig.start()
        let unknown = try await runTool(
            ctl, ["cancel-notification", "--address", rig.bus.address, LocalNotificationRig.app, "never"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains(LifecycledProtocol.ErrorName.unknownNotification), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("has no notification 'never'"), "\(unknown.stderr)")
        guard case .success = await rig.schedule("known", in: 3600) else {
            Issue.record("not scheduled")
            return
        }
        let known = try await runTool(
            ctl, ["cancel-notification", "--address", rig.bus.address, LocalNotificationRig.app, "known"])
        #expect(known.status == 0, "\(known.stderr)")
        #expect(try await rig.scheduled().isEmpty)
        await rig.stop(SIGTERM)
    }
}
