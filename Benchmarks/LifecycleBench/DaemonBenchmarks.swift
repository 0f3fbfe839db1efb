import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import ArgumentParser
import Foundation
import Glibc
import LifecycledClient
import Synchronization
import SystemdBus
import SystemdBusTesting

/// `CLOCK_MONOTONIC` in nanoseconds: comparable between processes on one machine.
func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}

/// This executable, for starting worker processes.
func ownExecutable() -> String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
}

/// A running `lifecycled` on a private session bus, with one app registered by the benchmark
/// itself (it plays the app's side of the protocol, so the daemon's rebroadcast is what is timed).
struct DaemonRig {
    static let appID = "org.example.BenchApp"
    let bus: PrivateBus
    let daemon: ChildProcess
    let loop: EventLoop
    let app: BusConnection

    static func lifecycledPath() -> String? {
        let directory = URL(fileURLWithPath: ownExecutable()).deletingLastPathComponent().path
        let path = directory + "/lifecycled"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    static func start() async throws -> DaemonRig {
        guard let lifecycled = lifecycledPath() else {
            throw ValidationError("lifecycled is not built next to lifecycle-bench (make bench builds both)")
        }
        let bus = try PrivateBus()
        let appsDirectory = bus.directory.appendingPathComponent("apps").path
        try FileManager.default.createDirectory(atPath: appsDirectory, withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let daemon = try ChildProcess.spawn(
            lifecycled, ["--address", bus.address, "--no-host-sources", "--apps-directory", appsDirectory],
            environment: environment, stdout: .null)
        let loop = try EventLoop(name: "bench-app")
        let app = try BusConnection(.address(bus.address), loop: loop, description: "bench-app")
        // Wait until the daemon owns its name.
        let owner = try await app.trackNameOwner(LifecycledProtocol.busName)
        let appeared = AsyncStream.makeStream(of: Void.self)
        let watch = try await owner.addOwnerChangeHandler { change in if change.newOwner != nil { appeared.continuation.yield() } }
        defer { watch.cancel() }
        if owner.currentOwner == nil {
            // Wait for the name to appear, with a hang guard; no measurement depends on this.
            let guardTask = Task { try? await Task.sleep(for: .seconds(10)); appeared.continuation.finish() }
            defer { guardTask.cancel() }
            for await _ in appeared.stream { break }
            guard owner.currentOwner != nil else { throw ValidationError("lifecycled did not take its name within 10 s") }
        }
        _ = try await app.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Method.registerApp, arguments: [.string(appID)])
        return DaemonRig(bus: bus, daemon: daemon, loop: loop, app: app)
    }

    /// Reports a notification as the app, so lifecycled rebroadcasts it as `Notification`.
    func report(sequence: Int) async throws {
        _ = try await app.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Method.reportNotification,
            arguments: [.string(Self.appID), .string("BenchNotification"), UserInfoBusCodec.encode(UserInfo(["seq": .int(Int64(sequence))]))])
    }

    func stop() {
        app.close()
        loop.shutdown()
        daemon.terminateAndWait()
        bus.stop()
    }
}

/// Subscriber worker processes and their receipt stamps.
struct Workers {
    let processes: [ChildProcess]

    static func start(count: Int, mode: String, address: String) throws -> Workers {
        let processes = try (0..<count).map { _ in
            try ChildProcess.spawn(ownExecutable(), ["fanout-worker", "--address", address, "--mode", mode], stdout: .pipe)
        }
        for process in processes {
            guard process.readLine() == "ready" else { throw ValidationError("a subscriber worker did not start") }
        }
        return Workers(processes: processes)
    }

    /// The next stamp line of every worker: (sequence, receipt ns).
    func nextStamps() -> [(sequence: Int, at: UInt64)] {
        processes.compactMap { process in
            guard let line = process.readLine() else { return nil }
            let fields = line.split(separator: " ")
            guard fields.count == 2, let sequence = Int(fields[0]), let at = UInt64(fields[1]) else { return nil }
            return (sequence, at)
        }
    }

    func stop() { processes.forEach { $0.terminateAndWait() } }
}

/// `lifecycle-bench fanout`: one notification to N subscriber processes through lifecycled,
/// against a raw D-Bus broadcast to N raw subscribers, on the same private bus.
struct FanoutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout", abstract: "Notification delivery latency to 1, 10 and 50 subscriber processes against a raw broadcast.")

    @Option(help: "Subscriber counts.") var subscribers: [Int] = [1, 10, 50]
    @Option(help: "Notifications per measurement.") var notifications = 200
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        var lostAny = false
        if !json { print("subscribers   ours p50/p99 µs        raw p50/p99 µs     ratio p50") }
        for count in subscribers {
            let ours = try await measure(rig: rig, count: count, mode: "ours") { sequence in try await rig.report(sequence: sequence) }
            let raw = try await measure(rig: rig, count: count, mode: "raw") { sequence in
                try rig.app.emitSignal(path: "/org/example/Bench", interface: "org.example.Bench", member: "Tick", arguments: [.int64(Int64(sequence))])
            }
            let ratio = ours.p50 / raw.p50
            if json {
                print(Measurement.jsonLine([
                    "benchmark": "fanout", "subscribers": count, "ours_p50_us": ours.p50, "ours_p99_us": ours.p99,
                    "reference_p50_us": raw.p50, "reference_p99_us": raw.p99, "ratio_p50": ratio,
                    "ours_lost": ours.lost, "reference_lost": raw.lost,
                ]))
            } else {
                let lost = ours.lost + raw.lost > 0 ? "   lost: ours \(ours.lost), raw \(raw.lost)" : ""
                print("\(String(format: "%11d", count))   \(String(format: "%8.1f / %-8.1f", ours.p50, ours.p99))   \(String(format: "%8.1f / %-8.1f", raw.p50, raw.p99))   \(String(format: "%5.2f", ratio))\(lost)")
            }
            lostAny = lostAny || ours.lost > 0
        }
        if lostAny { throw ExitCode(1) }
    }

    /// Per notification, the latency to each subscriber, over all notifications, and how many
    /// (notification, subscriber) receipts never came.
    func measure(rig: DaemonRig, count: Int, mode: String, send: (Int) async throws -> Void) async throws -> (p50: Double, p99: Double, lost: Int) {
        let workers = try Workers.start(count: count, mode: mode, address: rig.bus.address)
        defer { workers.stop() }
        var latencies: [Double] = []
        for sequence in 0..<notifications {
            let start = monotonicNanoseconds()
            try await send(sequence)
            for stamp in workers.nextStamps() where stamp.sequence == sequence {
                latencies.append(Double(stamp.at &- start) / 1000)
            }
        }
        return (Measurement.percentile(latencies, 50), Measurement.percentile(latencies, 99), notifications * count - latencies.count)
    }
}

/// `lifecycle-bench throughput`: sustained notifications per second to 10 subscriber processes,
/// checking that every subscriber received every notification.
struct ThroughputBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput", abstract: "Sustained notifications per second to 10 subscribers, with nothing lost.")

    @Option(help: "Subscriber processes.") var subscribers = 10
    @Option(help: "Notifications to send.") var notifications = 5000
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        let workers = try Workers.start(count: subscribers, mode: "ours", address: rig.bus.address)
        defer { workers.stop() }
        let start = monotonicNanoseconds()
        for sequence in 0..<notifications { try await rig.report(sequence: sequence) }
        var last: UInt64 = start
        var lost = 0
        for process in workers.processes {
            var expected = 0
            while expected < notifications, let line = process.readLine() {
                let fields = line.split(separator: " ")
                guard fields.count == 2, let sequence = Int(fields[0]), let at = UInt64(fields[1]) else { continue }
                lost += sequence - expected
                expected = sequence + 1
                last = max(last, at)
            }
            lost += notifications - expected
        }
        let seconds = Double(last - start) / 1e9
        let rate = Double(notifications) / seconds
        if json {
            print(Measurement.jsonLine(["benchmark": "throughput", "subscribers": subscribers, "notifications": notifications,
                                        "per_second": rate, "lost": lost]))
        } else {
            print("\(notifications) notifications to \(subscribers) subscribers in \(Measurement.format(seconds, 3)) s: \(Measurement.format(rate, 0))/s, lost \(lost)")
        }
        if lost > 0 { throw ExitCode(1) }
    }
}

/// `lifecycle-bench idle`: lifecycled's CPU time, wake-ups and RSS while nothing happens.
struct IdleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle", abstract: "lifecycled's CPU time and context switches over an idle period, and its RSS (target < 16 MiB).")

    @Option(help: "Idle seconds to measure.") var seconds = 60
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        try await Task.sleep(for: .seconds(1))  // let start-up settle before the idle window
        let before = try ProcessSample(pid: rig.daemon.pid)
        try await Task.sleep(for: .seconds(seconds))
        let after = try ProcessSample(pid: rig.daemon.pid)
        let cpu = Double(after.cpuTicks - before.cpuTicks) / Double(sysconf(Int32(_SC_CLK_TCK))) * 1000
        let wakeups = after.contextSwitches - before.contextSwitches
        let rssMiB = Double(after.rssKiB) / 1024
        let (privateMiB, pssMiB) = Self.rollup(pid: rig.daemon.pid)
        if json {
            print(Measurement.jsonLine(["benchmark": "idle", "seconds": seconds, "cpu_ms": cpu, "context_switches": wakeups,
                                        "rss_mib": rssMiB, "private_mib": privateMiB, "pss_mib": pssMiB, "target_rss_mib": 16]))
        } else {
            print("lifecycled idle for \(seconds) s: CPU \(Measurement.format(cpu, 1)) ms, \(wakeups) context switches")
            print("  RSS \(Measurement.format(rssMiB, 1)) MiB (target < 16 MiB), of which private \(Measurement.format(privateMiB, 1)) MiB; PSS \(Measurement.format(pssMiB, 1)) MiB")
        }
    }

    /// Private (unshared) memory and PSS in MiB, from /proc/PID/smaps_rollup.
    static func rollup(pid: pid_t) -> (privateMiB: Double, pssMiB: Double) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return (.nan, .nan) }
        func kib(_ field: String) -> Double {
            text.split(separator: "\n").first { $0.hasPrefix(field) }
                .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        }
        return ((kib("Private_Clean:") + kib("Private_Dirty:")) / 1024, kib("Pss:") / 1024)
    }

    /// CPU ticks, context switches and RSS of a process, from /proc.
    struct ProcessSample {
        let cpuTicks: UInt64
        let contextSwitches: Int
        let rssKiB: Int

        init(pid: pid_t) throws {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            guard let close = stat.lastIndex(of: ")") else { throw ValidationError("unreadable /proc/\(pid)/stat") }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // After the command: state(0) … utime(11) stime(12).
            cpuTicks = (UInt64(fields[11]) ?? 0) + (UInt64(fields[12]) ?? 0)
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            func field(_ name: String) -> Int {
                status.split(separator: "\n").first { $0.hasPrefix(name) }
                    .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first?.trimmingCharacters(in: .letters.union(.whitespaces)) ?? "") } ?? 0
            }
            contextSwitches = field("voluntary_ctxt_switches:") + field("nonvoluntary_ctxt_switches:")
            rssKiB = field("VmRSS:")
        }
    }
}

/// `lifecycle-bench fanout-worker`: a subscriber process; prints `ready`, then `<sequence> <monotonic ns>` per notification.
///
/// It exits by itself after `--idle-exit` seconds without a notification, closing its output:
/// the parent reads each worker's lines blockingly, and a lost notification must end in a
/// count of the loss, not a benchmark that waits forever.
struct FanoutWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "fanout-worker", shouldDisplay: false)

    @Option var address: String
    @Option var mode: String
    @Option var idleExit = 10

    func run() async throws {
        let idleLimit = UInt64(idleExit) * 1_000_000_000
        @Sendable func writeStamp(_ sequence: Int64) {
            let now = monotonicNanoseconds()
            workerLastActivity.store(now, ordering: .relaxed)
            writeLine("\(sequence) \(now)")
        }
        // Called once the worker is ready: the quiet period counts from then.
        func idleUntilQuiet() async throws -> Never {
            workerLastActivity.store(monotonicNanoseconds(), ordering: .relaxed)
            while true {
                try await Task.sleep(for: .seconds(1))
                if monotonicNanoseconds() &- workerLastActivity.load(ordering: .relaxed) > idleLimit { Glibc.exit(0) }
            }
        }
        if mode == "raw" {
            let loop = try EventLoop(name: "worker")
            let connection = try BusConnection(.address(address), loop: loop, description: "raw-worker")
            _ = try await connection.addMatch("type='signal',interface='org.example.Bench',member='Tick'") { signal in
                writeStamp(signal.arguments.first?.int64Value ?? -1)
            }
            writeLine("ready")
            try await idleUntilQuiet()
        } else {
            let subscriber = try await LifecycleSubscriber.connect(to: .address(address), appID: DaemonRig.appID)
            let registration = subscriber.addHandler { event in
                if case .notification(_, let name, let userInfo) = event, name == "BenchNotification" {
                    writeStamp(userInfo["seq"]?.intValue ?? -1)
                }
            }
            writeLine("ready")
            defer { withExtendedLifetime(registration) {} }
            try await idleUntilQuiet()
        }
    }
}

/// When the worker last printed (monotonic ns), for its idle exit.
private let workerLastActivity = Atomic<UInt64>(0)

/// Writes one line to standard output at once (no buffering), so the parent sees it immediately.
func writeLine(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBufferPointer { _ = write(1, $0.baseAddress, $0.count) }
}
