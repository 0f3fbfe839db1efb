import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("lifecycled host facts", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonHostFactsTests {
    private func simulate(_ h: DaemonHarness, _ kind: String, _ arguments: UserInfo = [:]) async throws {
        try await h.client.call(
            LifecycledProtocol.Method.simulate.name, [.string(kind), UserInfoBusCodec.encode(arguments)])
    }

    private func launch(_ h: DaemonHarness, _ id: String, background: Bool = false) async throws {
        let options: UserInfo = background ? [LaunchOptions.Key.launchedInBackground.rawValue: .bool(true)] : [:]
        try await h.client.call(LifecycledProtocol.Method.launch.name, [.string(id), UserInfoBusCodec.encode(options)])
    }

    @Test func lockSleepWakeUnlockMoveEveryAppInOrderAndSleepReallyStopsThem() async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        let counter = "org.example.Counter"
        let notes = "org.example.Notes"
        var notesLog = ""
        try await withDaemon(setUp: { dir in
            notesLog = dir.path + "/notes.log"
            try writeManifest(
                dir, id: counter, executable: products + "/counter-app",
                arguments: ["--host", "lifecycled", "--state-directory", dir.path + "/state"])
            try writeManifest(dir, id: notes, executable: try writePythonApp(dir), arguments: [notesLog])
        }) { (h: DaemonHarness) async throws in
            try await launch(h, counter)
            try await launch(h, notes)
            try await h.client.log.waitForState(counter, .active)
            try await h.client.log.waitForState(notes, .active)

            try await simulate(h, "lock")
            try await h.client.log.waitForState(counter, .inactive)
            try await h.client.log.waitForState(notes, .inactive)
            #expect(
                try await h.client.property(LifecycledProtocol.Property.hostState.name).dictionaryValue?["locked"]?
                    .unwrapped
                    == .bool(true))

            try await simulate(h, "sleep")
            // The lock is released once both are suspended and really stopped.
            #expect(try await h.waitForSleepRelease() == "all-suspended")
            for id in [counter, notes] {
                let pid = try #require(h.pid(id))
                #expect(processState(pid) == "T", "\(id) (pid \(pid)) is not stopped")
                // Emitted before the release; the client may still be reading it.
                try await h.client.log.waitForState(id, .suspended)
            }

            try await simulate(h, "wake")
            try await h.client.log.waitForState(counter, .inactive)
            try await h.client.log.waitForState(notes, .inactive)
            for id in [counter, notes] {
                let pid = try #require(h.pid(id))
                #expect(processState(pid) != "T", "\(id) (pid \(pid)) was not continued")
            }
            try await simulate(h, "unlock")
            try await h.client.log.waitForState(counter, .active)
            try await h.client.log.waitForState(notes, .active)

            let expected = [
                "not-running->inactive", "inactive->active",  // launch
                "active->inactive",  // lock
                "inactive->background", "background->suspended",  // sleep
                "suspended->background", "background->inactive",  // wake (still locked)
                "inactive->active",  // unlock
            ]
            #expect(h.client.log.stateChanges(counter) == expected)
            #expect(h.client.log.stateChanges(notes) == expected)
            // While it was stopped nothing but the wake reached it, in order.
            #expect(h.emitted.commands(notes) == ["locked", "sleeping", "sleeping", "locked"])
            #expect(
                logLines(notesLog).dropFirst().map { String($0.split(separator: " ")[0]) } == [
                    "locked", "sleeping", "sleeping", "locked",
                ])
        }
    }

    @Test func aRegisteredAppThatHasReportedNoStateYetHoldsSleepUntilItSuspends() async throws {
        try await withDaemon(sleepDeadline: .seconds(20)) { (h: DaemonHarness) async throws in
            let app = try await FakeApp("org.example.Quiet", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            // Registered, still launching: it has acknowledged nothing, so sleep waits for it.
            try await simulate(h, "sleep")
            try await app.client.log.wait(for: "the sleeping command") {
                $0.commands("org.example.Quiet") == ["sleeping"]
            }
            #expect(h.releases.isEmpty, "released while org.example.Quiet had not reported a state: \(h.releases)")
            try await app.report(.background)
            try await app.report(.suspended)
            #expect(try await h.waitForSleepRelease() == "all-suspended")
        }
    }

    @Test func theLastBackgroundTaskEndingLetsSleepGo() async throws {
        try await withDaemon(sleepDeadline: .seconds(20)) { (h: DaemonHarness) async throws in
            let app = try await FakeApp("org.example.Tasked", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            try await app.client.call(
                LifecycledProtocol.Method.backgroundTaskBegan.name,
                [.string("org.example.Tasked"), .uint32(1), .string("upload")])
            try await simulate(h, "sleep")
            try await app.report(.suspended)
            #expect(h.releases.isEmpty, "released while a background task ran: \(h.releases)")
            try await app.client.call(
                LifecycledProtocol.Method.backgroundTaskEnded.name, [.string("org.example.Tasked"), .uint32(1)])
            #expect(try await h.waitForSleepRelease() == "all-suspended")
        }
    }

    @Test func aSleepLockIsReleasedAtTheDeadlineWhenAnAppNeverSuspends() async throws {
        try await withDaemon(sleepDeadline: .milliseconds(300)) { (h: DaemonHarness) async throws in
            let app = try await FakeApp("org.example.Stubborn", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.inactive)
            try await app.report(.active)
            try await simulate(h, "sleep")
            #expect(try await h.waitForSleepRelease() == "deadline")
            try await app.client.log.wait(for: "the sleeping command") {
                $0.commands("org.example.Stubborn") == ["sleeping"]
            }
            #expect(
                try await h.client.property(LifecycledProtocol.Property.hostState.name).dictionaryValue?["sleeping"]?
                    .unwrapped == .bool(true))
        }
    }

    @Test func aMemoryWarningPurgesSuspendedAppsLargestFirstThenWarnsTheRunningOnes() async throws {
        var logs: [String: String] = [:]
        let small = "org.example.Small"
        let large = "org.example.Large"
        let running = "org.example.Running"
        try await withDaemon(setUp: { dir in
            let python = try writePythonApp(dir)
            for (id, megabytes) in [(small, 8), (large, 64), (running, 16)] {
                logs[id] = dir.path + "/\(id).log"
                try writeManifest(dir, id: id, executable: python, arguments: [logs[id]!, String(megabytes)])
            }
        }) { (h: DaemonHarness) async throws in
            try await launch(h, small, background: true)
            try await launch(h, large, background: true)
            try await launch(h, running)
            try await h.client.log.waitForState(small, .suspended)
            try await h.client.log.waitForState(large, .suspended)
            try await h.client.log.waitForState(running, .active)
            // Reported suspended is not yet stopped: the purge takes only apps the kernel confirmed.
            for id in [small, large] {
                #expect(try await eventually { @MainActor in h.daemon.registry[id]?.process?.isSuspended == true })
            }
            let smallRSS = try #require(h.daemon.registry[small]?.process?.residentBytes)
            let largeRSS = try #require(h.daemon.registry[large]?.process?.residentBytes)
            #expect(largeRSS > smallRSS)

            try await simulate(h, "memory-warning", ["level": .string("critical")])
            try await h.client.barrier()
            let log = h.emitted
            let purgedLarge = try #require(
                log.index {
                    $0.member == "StateChanged" && $0.arguments[0].stringValue == large
                        && $0.arguments[2].stringValue == "not-running"
                })
            let purgedSmall = try #require(
                log.index {
                    $0.member == "StateChanged" && $0.arguments[0].stringValue == small
                        && $0.arguments[2].stringValue == "not-running"
                })
            let warned = try #require(
                log.index {
                    $0.member == "Command" && $0.arguments[0].stringValue == running
                        && $0.arguments[1].stringValue == "memory-warning"
                })
            #expect(purgedLarge < purgedSmall)
            #expect(purgedSmall < warned)
            // Purged without being woken: killed by SIGKILL, never given a command.
            #expect(try await h.waitForExit(large) == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(try await h.waitForExit(small) == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(log.commands(large).isEmpty && log.commands(small).isEmpty)
            #expect(
                try await h.client.call(LifecycledProtocol.Method.getState.name, [.string(running)]).first?.stringValue
                    == "active")
        }
    }

    @Test func terminateGivesAHungAppSIGTERMThenSIGKILL() async throws {
        var marks = ""
        var fifo = ""
        try await withDaemon(
            termination: TerminationPolicy(deadline: .milliseconds(300), grace: .milliseconds(300)),
            setUp: { dir in
                marks = dir.path + "/hung.log"
                fifo = try dir.fifo("hung-ready")
                // Ignores the terminate command (it never registers) and survives SIGTERM.
                let hung = try writeScript(
                    dir, "hung.sh",
                    """
                    trap 'echo TERM >> "$1"' TERM
                    echo ready > "$2"
                    /bin/sleep 600 & wait
                    /bin/sleep 600 & wait
                    """)
                try writeManifest(dir, id: "org.example.Hung", executable: hung, arguments: [marks, fifo])
            }
        ) { (h: DaemonHarness) async throws in
            let reader = try FIFOReader(path: fifo, loop: h.client.loop)
            try await launch(h, "org.example.Hung")
            #expect(try await reader.line() == "ready")
            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string("org.example.Hung")])
            // Terminate returns once the process is gone.
            #expect(
                h.exits.first { $0.id == "org.example.Hung" }?.status == .signaled(signal: SIGKILL, coreDumped: false))
            #expect(logLines(marks) == ["TERM"])
            #expect(
                try await h.client.call(LifecycledProtocol.Method.getState.name, [.string("org.example.Hung")]).first?
                    .stringValue == "not-running")
        }
    }

    /// When lifecycled dies while an app is stopped, the kernel sends the orphaned process group
    /// SIGHUP then SIGCONT. SIGHUP must end the app through applicationWillTerminate, not kill it.
    @Test func sigHupEndsAHostedAppThroughApplicationWillTerminate() async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        let id = "org.example.Counter"
        try await withDaemon(setUp: { dir in
            try writeManifest(
                dir, id: id, executable: products + "/counter-app",
                arguments: ["--host", "lifecycled", "--state-directory", dir.path + "/state"])
        }) { (h: DaemonHarness) async throws in
            try await launch(h, id)
            try await h.client.log.waitForState(id, .active)
            let pid = try #require(h.pid(id))
            kill(pid, SIGHUP)
            #expect(try await h.waitForExit(id) == .exited(code: 0))
            // It said goodbye itself: willTerminate ran and reported the end before the exit.
            #expect(h.client.log.stateChanges(id).contains { $0.hasSuffix("->not-running") })
        }
    }

    @Test func aSuspendedAppThatIsTerminatedRightAfterAPostIsNotStoppedAgainAndExitsOnItsOwn() async throws {
        let id = "org.example.Polite"
        try await withDaemon(setUp: { dir in
            try writeManifest(dir, id: id, executable: try writePythonApp(dir), arguments: [dir.path + "/polite.log"])
        }) { (h: DaemonHarness) async throws in
            try await launch(h, id, background: true)
            try await h.client.log.waitForState(id, .suspended)
            // The post continues the app; it says "suspended" again, and that report arrives after
            // the terminate command went out. It must not freeze the app before it reads terminate.
            try await h.client.call(
                LifecycledProtocol.Method.post.name, [.string(id), .string("Refresh"), encodeInfo([:])])
            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(id)])
            #expect(h.exits.first { $0.id == id }?.status == .exited(code: 0))
        }
    }

    @Test func terminateRightAfterTheOpenURLThatLaunchedTheAppReachesItAfterItsRegistration() async throws {
        let id = "org.example.Notes"
        try await withDaemon(setUp: { dir in
            let manifest: [String: Any] = [
                "id": id, "name": id, "executable": try writePythonApp(dir), "arguments": [dir.path + "/notes.log"],
                "urlSchemes": ["notes"],
            ]
            let data = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys])
            try dir.write("apps/\(id).json", String(decoding: data, as: UTF8.self))
        }) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.openURL.name, [.string("notes://open/1"), encodeInfo([:])])
            // Not registered yet: the command waits for the registration instead of being skipped.
            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(id)])
            #expect(h.exits.first { $0.id == id }?.status == .exited(code: 0))
            #expect(h.emitted.commands(id) == ["terminate"])
        }
    }

    // The default deadline (5 s): a loaded 2-core CI machine can take longer than a short
    // deadline to schedule a Python app, and this test is about the cooperative path.
    @Test func terminateGivesACooperativeAppItsCommandAndItExitsOnItsOwn() async throws {
        try await withDaemon(setUp: { dir in
            try writeManifest(
                dir, id: "org.example.Polite", executable: try writePythonApp(dir),
                arguments: [dir.path + "/polite.log"])
        }) { (h: DaemonHarness) async throws in
            try await launch(h, "org.example.Polite")
            try await h.client.log.waitForState("org.example.Polite", .active)
            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string("org.example.Polite")])
            #expect(h.exits.first { $0.id == "org.example.Polite" }?.status == .exited(code: 0))
            #expect(h.emitted.commands("org.example.Polite") == ["terminate"])
            #expect(
                try await h.client.call(LifecycledProtocol.Method.getState.name, [.string("org.example.Polite")]).first?
                    .stringValue == "not-running")
        }
    }

    @Test func simulatedTerminateEndsEveryAppAndStopsTheDaemon() async throws {
        try await withDaemon(setUp: { dir in
            try writeManifest(
                dir, id: "org.example.Polite", executable: try writePythonApp(dir),
                arguments: [dir.path + "/polite.log"])
        }) { (h: DaemonHarness) async throws in
            try await launch(h, "org.example.Polite")
            try await h.client.log.waitForState("org.example.Polite", .active)
            try await simulate(h, "terminate")
            await h.daemon.run()
            #expect(h.daemon.phase == .stopped)
            #expect(h.exits.map(\.id) == ["org.example.Polite"])
            #expect(h.exits.first?.status == .exited(code: 0))
        }
    }
}
