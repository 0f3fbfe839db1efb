import AppLifecycle
import AppLifecycleTesting
import Dispatch
import Foundation
import LifecycledProtocol
import LifecycledTestSupport
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import lifecyclectl

/// Captures a command's output lines and tells when a long-running command listens.
final class Capture: Sendable {
    private let lines = Mutex<(out: [String], err: [String])>(([], []))
    private let isReady = Mutex(false)
    let changes = ChangeSignal()
    let isTerminal: Bool

    init(isTerminal: Bool = false) { self.isTerminal = isTerminal }

    var out: [String] { lines.withLock { $0.out } }
    var err: [String] { lines.withLock { $0.err } }
    var ready: Bool { isReady.withLock { $0 } }

    var output: CtlOutput {
        CtlOutput(
            isTerminal: isTerminal,
            out: { [self] line in
                lines.withLock { $0.out.append(line) }
                changes.signal()
            },
            err: { [self] line in
                lines.withLock { $0.err.append(line) }
                changes.signal()
            },
            ready: { [self] in
                isReady.withLock { $0 = true }
                changes.signal()
            })
    }
}

/// A private bus with a fake lifecycled on it, torn down (by pid) even when the test fails.
struct CtlFixture {
    let bus: PrivateBus
    let loop: EventLoop
    let fake: FakeLifecycled

    static func with(simulationEnabled: Bool = true, _ body: (CtlFixture) async throws -> Void) async throws {
        try await withFakeLifecycled(simulationEnabled: simulationEnabled) { env in
            try await body(CtlFixture(bus: env.bus, loop: env.loop, fake: env.fake))
        }
    }

    func run<C: CtlCommand>(_ command: C.Type, _ arguments: [String], capture: Capture = Capture()) async -> (
        status: Int32, capture: Capture
    ) {
        let status = await C.invoke(arguments + ["--address", bus.address], output: capture.output)
        return (status, capture)
    }
}

@Suite("lifecyclectl subcommands, in-process against a fake lifecycled")
struct CtlCommandTests {
    @Test("status and apps: text and JSON")
    func statusAndApps() async throws {
        try await CtlFixture.with { env in
            let (status, capture) = await env.run(StatusCommand.self, [])
            #expect(status == 0)
            #expect(capture.out.first == "lifecycled: running as \(env.fake.connection.uniqueName), protocol 1")
            #expect(capture.out.contains("host: sleeping no, locked no, session active yes"))
            #expect(capture.out.contains("apps: 2 known, 1 running (1 active, 1 notRunning)"))
            #expect(capture.out.contains("simulation: enabled"))
            // GetCounters, as lifecycled counts pushes and local notifications.
            #expect(
                capture.out.contains(
                    "pushes: 7 received, 5 delivered, 1 queued, 2 failed deliveries, 1 expired, 0 dropped; 3 registrations"
                ))
            #expect(
                capture.out.contains(
                    "local notifications: 4 scheduled, 3 fired, 2 shown as banners, 1 handed to the active app"))
            #expect(env.fake.log.calls(LifecycledProtocol.Method.getCounters.name).count == 1)

            let (jsonStatus, jsonCapture) = await env.run(StatusCommand.self, ["--json"])
            #expect(jsonStatus == 0)
            let object = try JSONSerialization.jsonObject(with: Data(jsonCapture.out.joined().utf8)) as? [String: Any]
            #expect((object?["apps"] as? [Any])?.count == 2)
            let counters = object?["counters"] as? [String: Int]
            #expect(counters?["push-received"] == 7)
            #expect(counters?["notifications-shown"] == 2)
            #expect(counters?.count == FakeLifecycled.counters.count)

            let (appsStatus, apps) = await env.run(AppsCommand.self, [])
            #expect(appsStatus == 0)
            #expect(
                apps.out == [
                    "ID                   STATE       PID   WINDOWS  NEXT FETCH  WHY",
                    "org.example.Counter  active      4242  -        -           -",
                    "org.example.Notes    notRunning  -     -        -           -",
                ])
            let (_, appsJSON) = await env.run(AppsCommand.self, ["--json"])
            let decoded = try JSONDecoder().decode([LifecycledApp].self, from: Data(appsJSON.out.joined().utf8))
            #expect(decoded.map(\.id) == [FakeLifecycled.counterID, FakeLifecycled.notesID])
        }
    }

    @Test("open, post and simulate make the protocol's calls")
    func calls() async throws {
        try await CtlFixture.with { env in
            let (openStatus, open) = await env.run(OpenCommand.self, ["counter://increment?by=2"])
            #expect(openStatus == 0)
            #expect(open.out == [FakeLifecycled.counterID])
            #expect(
                env.fake.log.calls(LifecycledProtocol.Method.openURL.name).first?.arguments.first
                    == .string("counter://increment?by=2"))

            let (postStatus, _) = await env.run(
                PostCommand.self, [FakeLifecycled.counterID, "Refresh", "--user-info", #"{"count": 3, "tag": "x"}"#])
            #expect(postStatus == 0)
            let post = try #require(env.fake.log.calls(LifecycledProtocol.Method.post.name).first)
            #expect(post.arguments[0] == .string(FakeLifecycled.counterID))
            #expect(post.arguments[1] == .string("Refresh"))
            #expect(try UserInfoBusCodec.decodeUserInfo(post.arguments[2]) == ["count": .int(3), "tag": "x"])

            let (simStatus, _) = await env.run(SimulateCommand.self, ["memory-warning", "critical"])
            #expect(simStatus == 0)
            #expect(await env.run(SimulateCommand.self, ["sleep"]).status == 0)
            #expect(await env.run(SimulateCommand.self, ["terminate", "--app", FakeLifecycled.counterID]).status == 0)
            let simulated = env.fake.log.calls(LifecycledProtocol.Method.simulate.name)
            #expect(
                simulated.map { $0.arguments[0] } == [
                    .string("memory-warning"), .string("sleep"), .string("terminate"),
                ])
            #expect(try UserInfoBusCodec.decodeUserInfo(simulated[0].arguments[1]) == ["level": "critical"])
            #expect(try UserInfoBusCodec.decodeUserInfo(simulated[1].arguments[1]) == [:])
            #expect(
                try UserInfoBusCodec.decodeUserInfo(simulated[2].arguments[1]) == [
                    "app": .string(FakeLifecycled.counterID)
                ])
        }
    }

    @Test("D-Bus errors exit 1 with the error's name and message")
    func daemonErrors() async throws {
        try await CtlFixture.with(simulationEnabled: false) { env in
            let (noHandler, open) = await env.run(OpenCommand.self, ["mailto:someone@example.org"])
            #expect(noHandler == 1)
            #expect(open.err.first?.contains(LifecycledProtocol.ErrorName.noHandler) == true)
            let (unknown, post) = await env.run(PostCommand.self, ["org.example.Nobody", "Refresh"])
            #expect(unknown == 1)
            #expect(post.err.first?.contains(LifecycledProtocol.ErrorName.unknownApp) == true)
            let (disabled, sim) = await env.run(SimulateCommand.self, ["lock"])
            #expect(disabled == 1)
            #expect(sim.err.first?.contains("SimulationDisabled: Simulate is not enabled") == true)
        }
    }

    @Test("daemon absent: every command exits 1 and says so")
    func daemonAbsent() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let cases: [(any CtlCommand.Type, [String])] = [
            (StatusCommand.self, []), (AppsCommand.self, []), (MonitorCommand.self, []),
            (OpenCommand.self, ["counter://x"]), (PostCommand.self, [FakeLifecycled.counterID, "N"]),
            (SimulateCommand.self, ["wake"]),
        ]
        for (command, arguments) in cases {
            let capture = Capture()
            let status = await command.invoke(arguments + ["--address", bus.address], output: capture.output)
            #expect(status == 1, "\(command)")
            #expect(capture.err.contains { $0.contains(BusError.Name.serviceUnknown) }, "\(command): \(capture.err)")
        }
        // No bus at all is a runtime failure too.
        let capture = Capture()
        #expect(
            await StatusCommand.invoke(["--address", "unix:path=\(bus.directory.path)/none"], output: capture.output)
                == 1)
        #expect(!capture.err.isEmpty)
    }

    @Test("usage errors exit 2 before anything is sent: bad URL, bad JSON, unknown simulate event or level, bad app id")
    func usageErrors() async throws {
        try await CtlFixture.with { env in
            let cases: [(any CtlCommand.Type, [String], String)] = [
                (OpenCommand.self, ["not a url"], "is not a URL"),
                (OpenCommand.self, ["/just/a/path"], "is not a URL"),
                (OpenCommand.self, ["counter://" + String(repeating: "a", count: 9000)], "longer than"),
                (PostCommand.self, [FakeLifecycled.counterID, "N", "--user-info", "{not json"], "--user-info"),
                (PostCommand.self, [FakeLifecycled.counterID, "N", "--user-info", "[1, 2]"], "--user-info"),
                (PostCommand.self, ["not-an-id", "N"], "not a valid app id"),
                (SimulateCommand.self, ["explode"], "The value 'explode' is invalid for '<event>'"),
                (SimulateCommand.self, ["memory-warning"], "needs a level"),
                (SimulateCommand.self, ["memory-warning", "huge"], "The value 'huge' is invalid for '<level>'"),
                (SimulateCommand.self, ["sleep", "low"], "'sleep' takes no level"),
                (SimulateCommand.self, ["terminate", "--app", "x"], "not a valid app id"),
                (
                    SimulateCommand.self, ["sleep", "--app", FakeLifecycled.counterID],
                    "--app only applies to terminate"
                ),
                (MonitorCommand.self, ["--app", "x"], "not a valid app id"),
                (AppsCommand.self, ["--no-such-flag"], "no-such-flag"),
                (FetchCommand.self, ["not-an-id"], "not a valid app id"),
                (BackgroundRefreshCommand.self, ["not-an-id", "on"], "not a valid app id"),
                (BackgroundRefreshCommand.self, [FakeLifecycled.counterID, "maybe"], "The value 'maybe' is invalid"),
            ]
            for (command, arguments, message) in cases {
                let capture = Capture()
                let status = await command.invoke(arguments + ["--address", env.bus.address], output: capture.output)
                #expect(status == 2, "\(command) \(arguments)")
                #expect(capture.err.contains { $0.contains(message) }, "\(command) \(arguments): \(capture.err)")
            }
            #expect(env.fake.log.all.isEmpty)
        }
    }

    @Test("monitor whose output stalls drops the oldest events and says how many, on stderr and in --json")
    func monitorCountsWhatItDrops() async throws {
        try await CtlFixture.with { env in
            let capture = Capture()
            let inner = capture.output
            // The first line written blocks until the test opens the gate: a reader that stopped reading.
            let gate = AsyncStream<Void>.makeStream()
            let gateOpen = Mutex(false)
            let stalled = ValueRecorder<Void>()
            let output = CtlOutput(
                isTerminal: false,
                out: { line in
                    if !gateOpen.withLock({ $0 }) {
                        stalled.add(())
                        let semaphore = DispatchSemaphore(value: 0)
                        Task {
                            for await _ in gate.stream { break }
                            semaphore.signal()
                        }
                        semaphore.wait()
                        gateOpen.withLock { $0 = true }
                    }
                    inner.out(line)
                },
                err: { inner.err($0) }, ready: { inner.ready() })
            let task = Task {
                await MonitorCommand.invoke(["--json", "--buffer", "4", "--address", env.bus.address], output: output)
            }
            defer { task.cancel() }
            try await capture.changes.wait(for: "monitor ready") { capture.ready }
            let sent = 40
            for sequence in 0..<sent {
                try env.fake.notification(FakeLifecycled.counterID, "Tick", ["seq": .int(Int64(sequence))])
                if sequence == 0 { _ = try await stalled.next("the output to stall") }
            }
            // The monitor takes the rest while its output is stalled; wait until the last has been seen.
            try await Task.sleep(for: .milliseconds(300))  // lets the bus deliver the burst; not an assertion
            gate.continuation.yield()
            try await capture.changes.wait(for: "the last notification") {
                capture.out.contains { $0.contains(#""seq":\#(sent - 1)"#) }
            }
            task.cancel()
            #expect(await task.value == 0)
            let objects = try capture.out.map {
                try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
            }
            let shown = objects.filter { $0["kind"] as? String == "notification" }.count
            let dropped = objects.filter { $0["kind"] as? String == "dropped" }.compactMap { $0["count"] as? Int }
                .reduce(0, +)
            // Nothing vanishes unannounced: what was shown and what was counted as dropped add up.
            #expect(dropped > 0)
            #expect(shown + dropped == sent, "shown \(shown), dropped \(dropped)")
            #expect(capture.err.contains { $0.contains("event(s) dropped") })
        }
    }

    @Test("monitor prints one line per signal (plain, coloured, JSON), honours --app, and ends when cancelled")
    func monitor() async throws {
        try await CtlFixture.with { env in
            for (arguments, terminal) in [
                ([String](), false), (["--json"], false), (["--app", FakeLifecycled.notesID], true),
            ] {
                let capture = Capture(isTerminal: terminal)
                let task = Task { await env.run(MonitorCommand.self, arguments, capture: capture).status }
                defer { task.cancel() }
                try await capture.changes.wait(for: "monitor ready") { capture.ready }
                try env.fake.stateChanged(FakeLifecycled.counterID, "inactive", "active")
                try env.fake.notification(FakeLifecycled.counterID, "UIApplicationDidBecomeActiveNotification")
                try env.fake.notification(
                    FakeLifecycled.notesID, "UIApplicationDidReceiveMemoryWarningNotification", ["level": "low"])
                let expected = arguments.contains("--app") ? 1 : 3
                try await capture.changes.wait(for: "\(expected) lines") { capture.out.count >= expected }
                task.cancel()
                #expect(await task.value == 0)
                let lines = capture.out
                #expect(lines.count == expected, "\(lines)")
                if arguments == ["--json"] {
                    let objects = try lines.map {
                        try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
                    }
                    #expect(objects[0]["kind"] as? String == "state")
                    #expect(objects[0]["state"] as? String == "active")
                    #expect(objects[1]["name"] as? String == "UIApplicationDidBecomeActiveNotification")
                    #expect((objects[2]["userInfo"] as? [String: Any])?["level"] as? String == "low")
                } else if terminal {
                    #expect(lines[0].contains("\u{1B}[36m\(FakeLifecycled.notesID)\u{1B}[0m"))
                    #expect(lines[0].contains(#"{"level":"low"}"#))
                } else {
                    #expect(!lines.joined().contains("\u{1B}["))
                    #expect(lines[0].hasSuffix("  \(FakeLifecycled.counterID)  inactive → active"))
                    #expect(
                        lines[1].hasSuffix("  \(FakeLifecycled.counterID)  UIApplicationDidBecomeActiveNotification"))
                }
            }
        }
    }
}
