import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import ArgumentParser
import Foundation
import Glibc
import LifecycledClient
import LifecycledProtocol
import Logging
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

    /// Starts lifecycled on a private bus and connects to it.
    ///
    /// - Parameters:
    ///   - executable: The lifecycled to run; `nil` for the one built next to lifecycle-bench.
    ///   - prepare: Writes what lifecycled reads at start, given its apps and state directories.
    static func start(
        executable: String? = nil,
        prepare: (_ appsDirectory: String, _ stateDirectory: String) throws -> Void = { _, _ in }
    ) async throws -> DaemonRig {
        guard let lifecycled = executable ?? lifecycledPath() else {
            throw ValidationError("lifecycled is not built next to lifecycle-bench (make bench builds both)")
        }
        let bus = try PrivateBus()
        let appsDirectory = bus.directory.appendingPathComponent("apps").path
        try FileManager.default.createDirectory(atPath: appsDirectory, withIntermediateDirectories: true)
        let stateDirectory = bus.directory.appendingPathComponent("state").path
        do {
            try prepare(appsDirectory, stateDirectory)
        } catch {
            bus.stop()
            throw error
        }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let daemon = try ChildProcess.spawn(
            lifecycled,
            [
                "--address", bus.address, "--no-host-sources", "--apps-directory", appsDirectory,
                "--state-directory", stateDirectory,
            ],
            environment: environment, stdout: .null)
        let loop = try EventLoop(name: "bench-app")
        let app = try await BusConnection(
            .address(bus.address), loop: loop, description: "bench-app", timeout: .seconds(10))
        try await waitForName(on: app)
        _ = try await app.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Method.registerApp.name, arguments: [.string(appID)])
        return DaemonRig(bus: bus, daemon: daemon, loop: loop, app: app)
    }

    /// Waits until lifecycled owns its name on `connection`'s bus (a hang guard of 10 s; no
    /// measurement depends on this).
    static func waitForName(on connection: BusConnection) async throws {
        let owner = try await connection.trackNameOwner(LifecycledProtocol.busName)
        let appeared = AsyncStream.makeStream(of: Void.self)
        let watch = try await owner.addOwnerChangeHandler { change in
            if change.newOwner != nil { appeared.continuation.yield() }
        }
        defer { watch.cancel() }
        if owner.currentOwner == nil {
            // Wait for the name to appear, with a hang guard; no measurement depends on this.
            let guardTask = Task {
                try? await Task.sleep(for: .seconds(10))
                appeared.continuation.finish()
            }
            defer { guardTask.cancel() }
            for await _ in appeared.stream { break }
            guard owner.currentOwner != nil else {
                throw ValidationError("lifecycled did not take its name within 10 s")
            }
        }
    }

    /// Reports a notification as the app, so lifecycled rebroadcasts it as `Notification`.
    func report(sequence: Int) async throws {
        _ = try await app.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Method.reportNotification.name,
            arguments: [
                .string(Self.appID), .string("BenchNotification"),
                UserInfoBusCodec.encode(UserInfo(["seq": .int(Int64(sequence))])),
            ])
    }

    /// The reference: a raw broadcast signal to the raw subscriber workers, with no daemon between.
    func broadcastTick(sequence: Int) throws {
        try app.emitSignal(
            path: "/org/example/Bench", interface: "org.example.Bench", member: "Tick",
            arguments: [.int64(Int64(sequence))])
    }

    /// Reports a notification as the app without waiting for the reply (pipelined, as `LifecycledHost` sends).
    func sendReport(sequence: Int) -> BusPendingReply {
        app.send(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Method.reportNotification.name,
            arguments: [
                .string(Self.appID), .string("BenchNotification"),
                UserInfoBusCodec.encode(UserInfo(["seq": .int(Int64(sequence))])),
            ])
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
            try ChildProcess.spawn(
                ownExecutable(), ["fanout-worker", "--address", address, "--mode", mode], stdout: .pipe)
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
        commandName: "fanout",
        abstract: "Notification delivery latency to 1, 10 and 50 subscriber processes against a raw broadcast.")

    @Option(help: "Subscriber counts.") var subscribers: [Int] = [1, 10, 50]
    @Option(help: "Notifications per measurement.") var notifications = 200
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        var lostAny = false
        if !json { print("subscribers   ours p50/p99 µs        raw p50/p99 µs     ratio p50") }
        for count in subscribers {
            let ours = try await measure(rig: rig, count: count, mode: "ours") { sequence in
                try await rig.report(sequence: sequence)
            }
            let raw = try await measure(rig: rig, count: count, mode: "raw") { sequence in
                try rig.broadcastTick(sequence: sequence)
            }
            let ratio = ours.p50 / raw.p50
            if json {
                print(
                    Measurement.jsonLine([
                        "benchmark": "fanout", "subscribers": count, "ours_p50_us": ours.p50, "ours_p99_us": ours.p99,
                        "reference_p50_us": raw.p50, "reference_p99_us": raw.p99, "ratio_p50": ratio,
                        "ours_lost": ours.lost, "reference_lost": raw.lost,
                    ]))
            } else {
                let lost = ours.lost + raw.lost > 0 ? "   lost: ours \(ours.lost), raw \(raw.lost)" : ""
                print(
                    "\(String(format: "%11d", count))   \(String(format: "%8.1f / %-8.1f", ours.p50, ours.p99))   \(String(format: "%8.1f / %-8.1f", raw.p50, raw.p99))   \(String(format: "%5.2f", ratio))\(lost)"
                )
            }
            lostAny = lostAny || ours.lost > 0
        }
        if lostAny { throw ExitCode(1) }
    }

    /// Per notification, the latency to each subscriber, over all notifications, and how many
    /// (notification, subscriber) receipts never came.
    func measure(rig: DaemonRig, count: Int, mode: String, send: (Int) async throws -> Void) async throws -> (
        p50: Double, p99: Double, lost: Int
    ) {
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
        return (
            Measurement.percentile(latencies, 50), Measurement.percentile(latencies, 99),
            notifications * count - latencies.count
        )
    }
}

/// `lifecycle-bench throughput`: sustained notifications per second to 10 subscriber processes,
/// checking that every subscriber received every notification, against a raw broadcast of the same
/// number of signals to as many raw subscribers on the same bus.
///
/// The app side pipelines its reports as `LifecycledHost` does (at most 32 on their way), so the
/// rate is the daemon's and the bus's, not one round trip per notification.
struct ThroughputBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "throughput",
        abstract: "Sustained notifications per second to 10 subscribers, with nothing lost, against a raw broadcast.")

    @Option(help: "Subscriber processes.") var subscribers = 10
    @Option(help: "Notifications to send.") var notifications = 5000
    @Option(help: "Reports on their way at once (LifecycledHost sends 32).") var inFlight = 32
    @Flag(help: "One JSON object per line.") var json = false

    func run() async throws {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        let ours = try await measure(rig: rig, mode: "ours") { sequence, pending in
            pending.append(rig.sendReport(sequence: sequence))
            if pending.count >= inFlight { _ = try await pending.removeFirst().value() }
        }
        let raw = try await measure(rig: rig, mode: "raw") { sequence, _ in
            try rig.broadcastTick(sequence: sequence)
        }
        let ratio = raw.rate / ours.rate
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "throughput", "subscribers": subscribers, "notifications": notifications,
                    "per_second": ours.rate, "lost": ours.lost, "reference_per_second": raw.rate,
                    "reference_lost": raw.lost, "ratio": ratio,
                ]))
        } else {
            print("\(notifications) notifications to \(subscribers) subscribers:")
            print(
                "  through lifecycled: \(Measurement.format(ours.seconds, 3)) s, \(Measurement.format(ours.rate, 0))/s, lost \(ours.lost)"
            )
            print(
                "  raw broadcast:      \(Measurement.format(raw.seconds, 3)) s, \(Measurement.format(raw.rate, 0))/s, lost \(raw.lost)"
            )
            print("  raw / ours:         \(Measurement.format(ratio, 2))  (target ≤ 2)")
        }
        if ours.lost > 0 { throw ExitCode(1) }
    }

    /// Sends every notification with `send` while reader tasks take each worker's receipts, and
    /// returns the rate from the first send to the last receipt, and the receipts that never came.
    func measure(
        rig: DaemonRig, mode: String, send: (Int, inout [BusPendingReply]) async throws -> Void
    ) async throws -> (seconds: Double, rate: Double, lost: Int) {
        let workers = try Workers.start(count: subscribers, mode: mode, address: rig.bus.address)
        defer { workers.stop() }
        let expectedCount = notifications
        // Each reader blocks in read(2), so each gets a thread of its own: on the concurrency pool
        // (as wide as the cores) they would starve the sender's continuations.
        let readers = workers.processes.map { process in
            onOwnThread { () -> (lost: Int, last: UInt64) in
                var expected = 0
                var lost = 0
                var last: UInt64 = 0
                while expected < expectedCount, let line = process.readLine() {
                    let fields = line.split(separator: " ")
                    guard fields.count == 2, let sequence = Int(fields[0]), let at = UInt64(fields[1]) else { continue }
                    lost += sequence - expected
                    expected = sequence + 1
                    last = max(last, at)
                }
                return (lost + expectedCount - expected, last)
            }
        }
        let start = monotonicNanoseconds()
        var pending: [BusPendingReply] = []
        for sequence in 0..<notifications { try await send(sequence, &pending) }
        for reply in pending { _ = try await reply.value() }
        var last = start
        var lost = 0
        for reader in readers {
            let result = await reader.value()
            lost += result.lost
            last = max(last, result.last)
        }
        let seconds = Double(last - start) / 1e9
        return (seconds, Double(notifications) / seconds, lost)
    }
}

/// Runs blocking work on a thread of its own; ``ThreadResult/value()`` awaits its result.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> ThreadResult<T> {
    let result = ThreadResult<T>()
    Thread { result.complete(body()) }.start()
    return result
}

/// The result of ``onOwnThread(_:)``.
final class ThreadResult<T: Sendable>: Sendable {
    private let state = Mutex<(value: T?, waiter: CheckedContinuation<T, Never>?)>((nil, nil))

    func complete(_ value: T) {
        let waiter = state.withLock { state -> CheckedContinuation<T, Never>? in
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }

    func value() async -> T {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> T? in
                if let value = state.value { return value }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

/// `lifecycle-bench idle`: lifecycled's CPU time, wake-ups and RSS while nothing happens, beside a
/// bare Swift process measured over the same window, and where each one's resident memory is.
struct IdleBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle",
        abstract: "lifecycled's CPU time and context switches over an idle period, and its RSS (target < 12 MiB).")

    /// The RSS the shipped lifecycled must stay under (issue 17).
    static let targetRSSMiB = 12.0

    @Option(help: "Idle seconds to measure.") var seconds = 60
    @Flag(help: "One JSON object per line.") var json = false
    @Option(
        help:
            "The lifecycled to measure (default: the one next to lifecycle-bench; make bench passes the shipped build)."
    )
    var lifecycled: String?
    @Option(help: "The reference process, built with the same flags (default: bare-swift-process next to lifecycled).")
    var bare: String?
    @Option(help: "How many of the largest mappings to list (per file and permissions).") var mappings = 12

    func run() async throws {
        // The reference: a Swift process with FoundationEssentials alone, measured in the same run.
        let barePath =
            bare
            ?? URL(fileURLWithPath: lifecycled ?? DaemonRig.lifecycledPath() ?? ownExecutable())
            .deletingLastPathComponent().appendingPathComponent("bare-swift-process").path
        guard FileManager.default.isExecutableFile(atPath: barePath) else {
            throw ValidationError("\(barePath) is not built (make bench builds it)")
        }
        // Both start from disk, as after a boot: how much of an executable a process maps depends on
        // how its pages sit in the page cache (a binary the linker just wrote measured 1 MiB more).
        for executable in [lifecycled ?? DaemonRig.lifecycledPath(), barePath].compactMap({ $0 }) {
            Self.evictFromPageCache(executable)
        }
        let rig = try await DaemonRig.start(executable: lifecycled)
        defer { rig.stop() }
        let reference = try ChildProcess.spawn(barePath, [], stdout: .pipe)
        defer { reference.terminateAndWait() }
        guard reference.readLine()?.hasPrefix("ready") == true else {
            throw ValidationError("bare-swift-process did not start")
        }
        try await Task.sleep(for: .seconds(1))  // let start-up settle before the idle window
        let before = try ProcessSample(pid: rig.daemon.pid)
        let bareBefore = try ProcessSample(pid: reference.pid)
        try await Task.sleep(for: .seconds(seconds))
        let after = try ProcessSample(pid: rig.daemon.pid)
        let bareAfter = try ProcessSample(pid: reference.pid)
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu = Double(after.cpuTicks - before.cpuTicks) / ticksPerSecond * 1000
        let wakeups = after.contextSwitches - before.contextSwitches
        let bareCPU = Double(bareAfter.cpuTicks - bareBefore.cpuTicks) / ticksPerSecond * 1000
        let bareWakeups = bareAfter.contextSwitches - bareBefore.contextSwitches
        let rssMiB = Double(after.rssKiB) / 1024
        let (privateMiB, pssMiB) = Self.rollup(pid: rig.daemon.pid)
        let bareRSSMiB = Double(bareAfter.rssKiB) / 1024
        let (_, barePSSMiB) = Self.rollup(pid: reference.pid)
        let breakdown = try ResidentMemoryBreakdown(pid: rig.daemon.pid)
        let bareBreakdown = try ResidentMemoryBreakdown(pid: reference.pid)
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "idle", "seconds": seconds, "cpu_ms": cpu, "context_switches": wakeups,
                    "rss_mib": rssMiB, "private_mib": privateMiB, "pss_mib": pssMiB,
                    "target_rss_mib": Self.targetRSSMiB,
                    "bare_cpu_ms": bareCPU, "bare_context_switches": bareWakeups,
                    "bare_rss_mib": bareRSSMiB, "bare_pss_mib": barePSSMiB, "rss_ratio": rssMiB / bareRSSMiB,
                    "pss_ratio": pssMiB / barePSSMiB,
                    "rss_kib_by_mapping": Dictionary(
                        breakdown.groups.prefix(mappings).map { ($0.name, $0.rssKiB) }, uniquingKeysWith: +),
                    "rss_kib_by_file": breakdown.rssKiBByFile, "bare_rss_kib_by_file": bareBreakdown.rssKiBByFile,
                ]))
        } else {
            print(
                "lifecycled idle for \(seconds) s: CPU \(Measurement.format(cpu, 1)) ms, \(wakeups) context switches "
                    + "(bare Swift process: \(Measurement.format(bareCPU, 1)) ms, \(bareWakeups))")
            print(
                "  RSS \(Measurement.format(rssMiB, 1)) MiB (target < \(Measurement.format(Self.targetRSSMiB, 0)) MiB), of which private \(Measurement.format(privateMiB, 1)) MiB; PSS \(Measurement.format(pssMiB, 1)) MiB"
            )
            print(
                "  a bare Swift process (FoundationEssentials, same build flags): RSS \(Measurement.format(bareRSSMiB, 1)) MiB, PSS \(Measurement.format(barePSSMiB, 1)) MiB; lifecycled/bare RSS \(Measurement.format(rssMiB / bareRSSMiB, 2)), PSS \(Measurement.format(pssMiB / barePSSMiB, 2))"
            )
            let bareByFile = bareBreakdown.rssKiBByFile
            let bareExecutable = URL(fileURLWithPath: barePath).lastPathComponent
            print(
                "  lifecycled's largest mappings, RSS / PSS KiB (the bare process's RSS in the same file; "
                    + "its own executable: \(bareByFile[bareExecutable] ?? 0)):")
            for group in breakdown.groups.prefix(mappings) {
                let file = String(group.name.split(separator: " ").first ?? "")
                let bareNote = bareByFile[file].map { " (bare: \($0))" } ?? ""
                print(
                    "    \(group.name.padding(toLength: 34, withPad: " ", startingAt: 0)) \(group.rssKiB) / \(group.pssKiB)\(bareNote)"
                )
            }
        }
    }

    /// Writes a file's dirty pages and drops it from the page cache (`POSIX_FADV_DONTNEED`).
    static func evictFromPageCache(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        _ = fsync(fd)
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)
    }

    /// Private (unshared) memory and PSS in MiB, from /proc/PID/smaps_rollup.
    static func rollup(pid: pid_t) -> (privateMiB: Double, pssMiB: Double) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else {
            return (.nan, .nan)
        }
        func kib(_ field: String) -> Double {
            text.split(separator: "\n").first { $0.hasPrefix(field) }
                .flatMap { Double($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") }
                ?? 0
        }
        return ((kib("Private_Clean:") + kib("Private_Dirty:")) / 1024, kib("Pss:") / 1024)
    }

    /// CPU ticks, context switches and RSS of a process, from /proc.
    struct ProcessSample {
        let cpuTicks: UInt64
        let contextSwitches: Int
        let rssKiB: Int

        init(pid: pid_t) throws {
            guard let stat = ProcessStat(pid: pid) else { throw ValidationError("unreadable /proc/\(pid)/stat") }
            cpuTicks = stat.cpuTicks
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            func field(_ name: String) -> Int {
                status.split(separator: "\n").first { $0.hasPrefix(name) }
                    .flatMap {
                        Int(
                            $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first?
                                .trimmingCharacters(in: .letters.union(.whitespaces)) ?? "")
                    } ?? 0
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
                // The stamp is read before the clock: a receipt on the loop thread in between must
                // not make the difference negative (it wrapped, and a busy worker quit at once).
                let lastActivity = workerLastActivity.load(ordering: .relaxed)
                let now = monotonicNanoseconds()
                if now > lastActivity && now - lastActivity > idleLimit { Glibc.exit(0) }
            }
        }
        if mode == "raw" {
            let loop = try EventLoop(name: "worker")
            let connection = try await BusConnection(
                .address(address), loop: loop, description: "raw-worker", timeout: .seconds(10))
            _ = try await connection.addMatch("type='signal',interface='org.example.Bench',member='Tick'") { signal in
                writeStamp(signal.arguments.first?.int64Value ?? -1)
            }
            writeLine("ready")
            try await idleUntilQuiet()
        } else {
            let subscriber = try await LifecycleSubscriber.connect(
                to: .address(address), appID: DaemonRig.appID, logger: Logger(label: "lifecycle-bench"))
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
