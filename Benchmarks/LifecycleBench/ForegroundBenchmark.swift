import AppLifecycle
import AppLifecycleSystemd
import ArgumentParser
import Foundation
import Glibc
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting

/// `lifecycle-bench foreground`: from the compositor's focus change to the app being active again,
/// thaw included, against a bare client of the same protocol event.
///
/// A real sway 1.7 headless runs two hosted counter-apps, each with a foot window of its app id,
/// under lifecycled in single-foreground mode (a phone): the one behind is suspended and frozen.
/// Each round focuses the frozen one through sway's IPC and times, from that command, (ours)
/// lifecycled's `StateChanged(app → active)`: the window source, the policy, the thaw, the app's
/// `applicationWillEnterForeground` and `applicationDidBecomeActive` and its report; and (the
/// reference) a `ForeignToplevelWindowSource` in this process seeing the window activated, the
/// least any client of the protocol can do. Needs root (sway runs as `nobody`), sway and foot.
///
/// Then idle CPU: a third app, a plain program that does not adopt AppLifecycle (foot showing a
/// clock that ticks ten times a second, as an app that animates while it is visible), is sent
/// behind and frozen; the CPU time of its process group is read over a window while frozen, then
/// the same app is exempted (thawed, left running behind) and read over the same window. The
/// counter-app behind is read the same two ways.
struct ForegroundBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "foreground",
        abstract:
            "Focus change to applicationDidBecomeActive (thaw included) under sway, against a bare protocol client.")

    @Option(help: "Focus changes measured.") var rounds = 40
    @Flag(help: "One JSON object per line.") var json = false
    @Option(help: "Seconds each idle-CPU window lasts.") var idleSeconds = 5

    static let apps = ["org.example.BenchFront", "org.example.BenchBack"]
    static let clock = "org.example.BenchClock"

    func run() async throws {
        guard SwaySession.isAvailable else {
            throw ValidationError("needs sway and foot (apt-get install sway foot) and root")
        }
        let directory = URL(fileURLWithPath: ownExecutable()).deletingLastPathComponent().path
        let counterApp = directory + "/counter-app"
        guard let lifecycled = DaemonRig.lifecycledPath(), FileManager.default.isExecutableFile(atPath: counterApp)
        else { throw ValidationError("lifecycled and counter-app are not built next to lifecycle-bench") }
        let sway = try await SwaySession()
        defer { sway.stop() }
        guard let display = sway.waylandDisplay, let socket = sway.socketPath else {
            throw ValidationError("sway did not start: \(sway.log().suffix(400))")
        }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let root = bus.directory.path
        let appsDirectory = root + "/apps"
        try FileManager.default.createDirectory(atPath: appsDirectory, withIntermediateDirectories: true)
        for id in Self.apps {
            // The app and its window in one process group: frozen and thawed together.
            let launcher = root + "/\(id).sh"
            try """
            #!/bin/sh
            /usr/bin/foot --app-id \(id) /bin/cat &
            exec \(counterApp) --host lifecycled --app-id \(id) --state-directory \(root)/\(id)-state
            """.write(toFile: launcher, atomically: true, encoding: .utf8)
            chmod(launcher, 0o755)
            try #"{"id": "\#(id)", "executable": "\#(launcher)"}"#.write(
                toFile: appsDirectory + "/\(id).json", atomically: true, encoding: .utf8)
        }
        try #"""
        {"id": "\#(Self.clock)", "executable": "/usr/bin/foot", "adoptsLifecycle": false,
         "arguments": ["--app-id", "\#(Self.clock)", "/bin/sh", "-c", "while :; do date +%T.%N; sleep 0.1; done"]}
        """#.write(toFile: appsDirectory + "/\(Self.clock).json", atomically: true, encoding: .utf8)
        let configuration = root + "/lifecycled.conf"
        try "[lifecycle]\nforeground-mode = single\nwindow-source = wayland\nfreeze-delay = 1\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["WAYLAND_DISPLAY"] = display
        environment["XDG_RUNTIME_DIR"] = sway.runtimeDirectory
        environment["HOME"] = sway.directory.path
        environment["DISPLAY"] = nil
        let daemon = try ChildProcess.spawn(
            lifecycled,
            [
                "--address", bus.address, "--no-host-sources", "--apps-directory", appsDirectory,
                "--state-directory", root + "/state", "--config", configuration,
            ],
            environment: environment, stdout: .null)
        defer { daemon.terminateAndWait() }

        let loop = try EventLoop(name: "bench-foreground")
        defer { loop.shutdown() }
        let client = try await BusConnection(
            .address(bus.address), loop: loop, description: "bench", timeout: .seconds(10))
        defer { client.close() }
        let states = ArrivalLog()
        let subscription = try await client.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Signal.stateChanged.name,
            signature: "sss"
        ) { signal in
            guard let app = signal.arguments[0].stringValue, let state = signal.arguments[2].stringValue else { return }
            states.add(app, state, at: monotonicNanoseconds())
        }
        defer { subscription.cancel() }
        try await DaemonRig.waitForName(on: client)

        // The reference: a bare client of the same protocol in this process.
        let reference = ForeignToplevelWindowSource(socketPath: socket, loop: loop, logger: Logger(label: "bench"))
        defer { reference.stop() }
        try await reference.start()
        let activations = ArrivalLog()
        let readTask = Task {
            for await update in reference.updates {
                guard case .windows(let windows) = update else { continue }
                let now = monotonicNanoseconds()
                for window in windows where window.isActivated {
                    activations.add(window.appID ?? "", "activated", at: now)
                }
            }
        }
        defer { readTask.cancel() }

        for id in Self.apps {
            _ = try await client.call(
                destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.launch.name,
                arguments: [.string(id), UserInfoBusCodec.encode([:] as UserInfo)])
            try await states.first(id, "active", after: 0)
        }
        var ours: [Double] = []
        var bare: [Double] = []
        var target = 0
        for _ in 0..<rounds {
            let front = Self.apps[target]
            // The one to focus is behind: suspended (and so frozen) before the focus changes.
            try await states.latest(of: front, is: "suspended")
            try await Self.waitUntilFrozen(front, client)
            let start = monotonicNanoseconds()
            _ = try sway.command("[app_id=\(front)] focus")
            let active = try await states.first(front, "active", after: start)
            let seen = try await activations.first(front, "activated", after: start)
            ours.append(Double(active - start) / 1000)
            bare.append(Double(seen - start) / 1000)
            target = 1 - target
        }
        let (p50, p99) = (Measurement.percentile(ours, 50), Measurement.percentile(ours, 99))
        let (r50, r99) = (Measurement.percentile(bare, 50), Measurement.percentile(bare, 99))
        let idle = try await measureIdleCPU(client: client, sway: sway)
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "foreground", "rounds": rounds, "ours_p50_us": p50, "ours_p99_us": p99,
                    "reference_p50_us": r50, "reference_p99_us": r99, "ratio_p50": p50 / r50,
                    "goal_p99_us": 16_000, "goal_met": p99 < 16_000,
                    "idle_window_s": idleSeconds,
                    "clock_frozen_cpu_ms_per_s": idle.clockFrozen, "clock_running_cpu_ms_per_s": idle.clockRunning,
                    "counter_frozen_cpu_ms_per_s": idle.counterFrozen,
                    "counter_running_cpu_ms_per_s": idle.counterRunning,
                ]))
        } else {
            print("focus change → active (thawed), \(rounds) rounds under sway 1.7 headless, single-foreground mode")
            print(
                "  ours (lifecycled + counter-app):   p50 \(Measurement.format(p50)) µs   p99 \(Measurement.format(p99)) µs"
            )
            print(
                "  reference (bare protocol client):  p50 \(Measurement.format(r50)) µs   p99 \(Measurement.format(r99)) µs"
            )
            print(
                "  ratio p50 \(Measurement.format(p50 / r50, 2)); goal p99 < 16 ms (one frame at 60 Hz): \(p99 < 16_000 ? "met" : "not met")"
            )
            print(
                "idle CPU behind the front app, CPU ms per second over \(idleSeconds) s (process group, children included)"
            )
            print(
                "  foot with a ticking clock:  frozen \(Measurement.format(idle.clockFrozen, 3))   running (exempt) \(Measurement.format(idle.clockRunning, 3))"
            )
            print(
                "  counter-app and its foot:   frozen \(Measurement.format(idle.counterFrozen, 3))   running (exempt) \(Measurement.format(idle.counterRunning, 3))"
            )
        }
    }

    /// CPU milliseconds per second of the apps behind, frozen and then exempted (left running).
    struct IdleCPU {
        var clockFrozen = 0.0
        var clockRunning = 0.0
        var counterFrozen = 0.0
        var counterRunning = 0.0
    }

    /// Launches the clock program in front, sends it behind (frozen after `freeze-delay`), and reads
    /// its CPU frozen and then exempted; the same for the counter-app behind it.
    func measureIdleCPU(client: BusConnection, sway: SwaySession) async throws -> IdleCPU {
        _ = try await client.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.launch.name,
            arguments: [.string(Self.clock), UserInfoBusCodec.encode([:] as UserInfo)])
        try await Self.waitUntil(client, "\(Self.clock) to have its window in front") {
            $0[Self.clock]?["window-state"]?.stringValue == "activated"
        }
        let counter = Self.apps[0]
        let front = Self.apps[1]
        _ = try sway.command("[app_id=\(front)] focus")
        try await Self.waitUntil(client, "\(Self.clock) and \(counter) to be frozen behind \(front)") {
            $0[Self.clock]?["frozen"]?.boolValue == true && $0[counter]?["frozen"]?.boolValue == true
        }
        let apps = try await Self.describe(client)
        guard let clockPID = apps[Self.clock]?["pid"]?.intValue, let counterPID = apps[counter]?["pid"]?.intValue
        else { throw ValidationError("lifecycled did not give the apps' pids") }
        var result = IdleCPU()
        let window = Duration.seconds(idleSeconds)
        (result.clockFrozen, result.counterFrozen) = try await Self.cpuPerSecond(
            groups: [Int32(clockPID), Int32(counterPID)], over: window)
        for id in [Self.clock, counter] {
            _ = try await client.call(
                destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.setFreezeExempt.name,
                arguments: [.string(id), .bool(true)])
        }
        try await Self.waitUntil(client, "the exempted apps to be thawed") {
            $0[Self.clock]?["frozen"]?.boolValue == false && $0[counter]?["frozen"]?.boolValue == false
        }
        (result.clockRunning, result.counterRunning) = try await Self.cpuPerSecond(
            groups: [Int32(clockPID), Int32(counterPID)], over: window)
        return result
    }

    /// The CPU time (user and system, reaped children included) that each process group used over
    /// `window`, in milliseconds per second, from `/proc/PID/stat`.
    static func cpuPerSecond(groups: [Int32], over window: Duration) async throws -> (Double, Double) {
        let before = groups.map(cpuTicks(processGroup:))
        let start = monotonicNanoseconds()
        try await Task.sleep(for: window)
        let after = groups.map(cpuTicks(processGroup:))
        let seconds = Double(monotonicNanoseconds() - start) / 1e9
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let rates = zip(before, after).map { Double($1 - $0) / ticksPerSecond * 1000 / seconds }
        return (rates[0], rates[1])
    }

    /// utime + stime + cutime + cstime of every process in a process group, in clock ticks.
    static func cpuTicks(processGroup: Int32) -> Int {
        var total: UInt64 = 0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = ProcessStat(pid: pid), stat.processGroup == processGroup
            else { continue }
            total += stat.cpuTicks + stat.reapedChildrenTicks
        }
        return Int(total)
    }

    /// lifecycled's `DescribeApps`, by app id.
    static func describe(_ client: BusConnection) async throws -> [String: UserInfo] {
        let reply = try await client.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.describeApps.name)
        let apps = try (reply.first?.arrayValue ?? []).map(UserInfoBusCodec.decodeUserInfo)
        return Dictionary(apps.compactMap { app in app["id"]?.stringValue.map { ($0, app) } }) { first, _ in first }
    }

    /// Asks `DescribeApps` until `done` holds (bounded: 30 s).
    static func waitUntil(
        _ client: BusConnection, _ what: String, _ done: ([String: UserInfo]) -> Bool
    ) async throws {
        for _ in 0..<3_000 {
            if done(try await describe(client)) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ValidationError("\(what): not within 30 s")
    }

    /// Waits until lifecycled says the app is frozen.
    static func waitUntilFrozen(_ id: String, _ client: BusConnection) async throws {
        try await waitUntil(client, "\(id) to be frozen") { $0[id]?["frozen"]?.boolValue == true }
    }
}

/// What the benchmark saw arrive, with the time it arrived (`CLOCK_MONOTONIC`): lifecycled's
/// `StateChanged` (an app and its state) or the reference client's activations (an app, `activated`).
private final class ArrivalLog: Sendable {
    private let entries = Mutex<[(app: String, value: String, at: UInt64)]>([])

    func add(_ app: String, _ value: String, at: UInt64) { entries.withLock { $0.append((app, value, at)) } }

    /// The arrival of the first `app`, `value` at or after `start`, waiting for it.
    @discardableResult
    func first(_ app: String, _ value: String, after start: UInt64) async throws -> UInt64 {
        try await wait("\(app) \(value)") { $0.first { $0.app == app && $0.value == value && $0.at >= start }?.at }
    }

    /// Waits until the latest value of `app` is `value`.
    func latest(of app: String, is value: String) async throws {
        try await wait("\(app) \(value)") { $0.last { $0.app == app }?.value == value ? () : nil }
    }

    /// Polls the entries every millisecond until `find` finds something (bounded: 20 s). The
    /// times measured are the arrivals recorded by `add`, not when this notices them.
    private func wait<T>(
        _ what: String, _ find: ([(app: String, value: String, at: UInt64)]) -> T?
    ) async throws -> T {
        for _ in 0..<20_000 {
            if let found = entries.withLock({ find($0) }) { return found }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw ValidationError("\(what) did not arrive within 20 s")
    }
}
