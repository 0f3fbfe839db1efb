import AppLifecycle
import Foundation
import Glibc
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("lifecycled reclaims frozen apps' memory before purging", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonMemoryReclaimTests {
    private func simulate(_ h: DaemonHarness, _ kind: String, _ arguments: UserInfo = [:]) async throws {
        try await h.client.call(
            LifecycledProtocol.Method.simulate.name, [.string(kind), UserInfoBusCodec.encode(arguments)])
    }

    private func launchFrozen(_ h: DaemonHarness, _ ids: [String]) async throws {
        let options: UserInfo = [LaunchOptions.Key.launchedInBackground.rawValue: .bool(true)]
        for id in ids {
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(id), UserInfoBusCodec.encode(options)])
        }
        for id in ids {
            try await h.client.log.waitForState(id, .suspended)
            #expect(await eventually { @MainActor in h.daemon.registry[id]?.process?.isSuspended == true })
            let directory = try #require(h.daemon.registry[id]?.cgroupDirectory)
            #expect(CgroupFreezer(directory: directory).isFrozen == true)
        }
    }

    /// Runs the real `lifecyclectl status` against the daemon and expects `line` in its output.
    private func expectStatusLine(_ h: DaemonHarness, _ line: String) async throws {
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        let status = try await runTool(ctl, ["status", "--address", h.bus.address])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.split(separator: "\n").contains(Substring(line)), "\(status.stdout)")
    }

    private func hostState(_ h: DaemonHarness) async throws -> UserInfo {
        try UserInfoBusCodec.decodeUserInfo(try await h.client.property(LifecycledProtocol.Property.hostState.name))
    }

    @Test(
        "without memory.reclaim (hybrid cgroups here) a real frozen app is purged as before",
        .enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func noReclaimFallsBackToThePurge() async throws {
        let parent = try FreezerFixture()
        defer { parent.remove() }
        let frozen = "org.example.Frozen"
        let log = RecordedLog()
        try await withDaemon(
            appCgroups: .under(parent.path), configure: { $0.logger = log.logger(label: "lifecycled") },
            setUp: { dir in
                try writeManifest(
                    dir, id: frozen, executable: try writePythonApp(dir), arguments: [dir.path + "/f.log"])
            }
        ) { (h: DaemonHarness) async throws in
            #expect(try await hostState(h)["memory-reclaim"]?.stringValue == "unavailable")
            try await launchFrozen(h, [frozen])
            try await simulate(h, "memory-warning", ["level": .string("low")])
            try await h.client.barrier()
            #expect(try await h.waitForExit(frozen) == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(log.messages.contains { $0.hasPrefix("no memory.reclaim for frozen \(frozen)") }, "\(log.messages)")
            let state = try await hostState(h)
            #expect(state["memory-reclaim"]?.stringValue == "unavailable")
            #expect(state["memory-reclaimed"]?.intValue == 0)
            try await expectStatusLine(h, "memory reclaim from frozen apps: unavailable, 0 bytes reclaimed since start")
        }
    }

    @Test(
        "below critical, frozen apps are reclaimed and kept unless it freed nothing; at critical apps are purged, programs reclaimed",
        .enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func reclaimBeforePurge() async throws {
        let parent = try FreezerFixture()
        defer { parent.remove() }
        let whole = "org.example.Whole"
        let part = "org.example.Part"
        let old = "org.example.OldKernel"
        let refused = "org.example.Refused"
        let running = "org.example.Running"
        let plain = "org.example.Plain"
        let mebibyte: UInt64 = 1 << 20
        // The kernel as the test plays it: the apps are frozen for real in real cgroups, which
        // have no memory controller on this machine, so memory.current and memory.reclaim are the fake's.
        let files = FakeReclaimFiles([
            whole: .init(current: 64 * mebibyte, afterReclaim: 4 * mebibyte, answer: 0),
            part: .init(current: 32 * mebibyte, afterReclaim: 30 * mebibyte, answer: EAGAIN),
            old: .init(current: 16 * mebibyte, afterReclaim: 0, answer: ENOENT),
            refused: .init(current: 8 * mebibyte, afterReclaim: 0, answer: EINVAL),
            plain: .init(current: 10 * mebibyte, afterReclaim: mebibyte, answer: 0),
        ])
        let log = RecordedLog()
        try await withDaemon(
            appCgroups: .under(parent.path),
            configure: {
                $0.logger = log.logger(label: "lifecycled")
                $0.memoryReclaimFiles = files.access
            },
            setUp: { dir in
                let python = try writePythonApp(dir)
                for id in [whole, part, old, refused, running] {
                    try writeManifest(dir, id: id, executable: python, arguments: [dir.path + "/\(id).log"])
                }
                try writeManifest(
                    dir, id: plain, executable: "/bin/sleep", arguments: ["600"], extra: ["adoptsLifecycle": false])
            }
        ) { (h: DaemonHarness) async throws in
            #expect(try await hostState(h)["memory-reclaim"]?.stringValue == "available")
            try await launchFrozen(h, [whole, part, old, refused])
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(running), UserInfoBusCodec.encode([:] as UserInfo)])
            try await h.client.log.waitForState(running, .active)
            // A program that does not adopt AppLifecycle, frozen as its windows would freeze it.
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(plain), UserInfoBusCodec.encode([:] as UserInfo)])
            #expect(h.daemon.registry[plain]?.stopProcess { _ in } == true)
            #expect(await eventually { @MainActor in h.daemon.registry[plain]?.process?.isSuspended == true })

            try await simulate(h, "memory-warning", ["level": .string("medium")])
            try await h.client.barrier()
            // Each frozen app was asked for its whole memory.current, once.
            #expect(
                Set(files.writes.map(\.text))
                    == Set([64 * mebibyte, 32 * mebibyte, 16 * mebibyte, 8 * mebibyte, 10 * mebibyte].map { "\($0)" }))
            #expect(files.writes.allSatisfy { $0.path.hasPrefix(parent.path + "/app-") })
            // Those whose reclaim freed memory stay frozen; the others are purged.
            #expect(try await h.waitForExit(old) == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(try await h.waitForExit(refused) == .signaled(signal: SIGKILL, coreDumped: false))
            for id in [whole, part, plain] {
                #expect(h.daemon.registry[id]?.isRunning == true && h.daemon.registry[id]?.process?.isSuspended == true)
            }
            #expect(h.emitted.commands(running).contains("memory-warning"))
            let reclaimed = Int64(60 * mebibyte + 2 * mebibyte + 9 * mebibyte)
            var state = try await hostState(h)
            #expect(state["memory-reclaimed"]?.intValue == reclaimed)
            #expect(state["memory-reclaim"]?.stringValue == "available")
            try await expectStatusLine(
                h, "memory reclaim from frozen apps: available, \(reclaimed) bytes reclaimed since start")
            let messages = log.messages
            #expect(messages.contains { $0.hasPrefix("reclaimed \(60 * mebibyte) bytes from frozen \(whole)") })
            #expect(
                messages.contains {
                    $0.hasPrefix("reclaimed \(2 * mebibyte) bytes from frozen \(part), less than asked")
                })
            #expect(messages.contains { $0.hasPrefix("cannot reclaim from frozen \(refused)") })
            #expect(messages.contains { $0.hasPrefix("memory reclaim: \(reclaimed) bytes from 5 frozen apps, 3 kept") })

            // Critical: the apps are purged at once, not reclaimed first; the program, never purged,
            // is reclaimed again (its memory.current, 1 MiB now, is asked for).
            let writesBefore = files.writes.count
            try await simulate(h, "memory-warning", ["level": .string("critical")])
            try await h.client.barrier()
            #expect(try await h.waitForExit(whole) == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(try await h.waitForExit(part) == .signaled(signal: SIGKILL, coreDumped: false))
            let newWrites = files.writes.dropFirst(writesBefore)
            #expect(newWrites.count == 1 && newWrites.first?.path.contains("/app-\(plain)-") == true)
            #expect(newWrites.first?.text == "\(mebibyte)")
            #expect(
                h.daemon.registry[plain]?.isRunning == true && h.daemon.registry[plain]?.process?.isSuspended == true)
            state = try await hostState(h)
            #expect(state["memory-reclaimed"]?.intValue == reclaimed)
        }
    }
}
