import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import ArgumentParser
import Foundation
import InProcessHost
import Synchronization
import SystemdBus
import SystemdBusTesting

/// The delegate the bridge benchmarks drive: it stamps each transition callback and hands the
/// instant to whoever waits for it.
@MainActor
final class StampingDelegate: ApplicationDelegate {
    private var waiting: (name: String, continuation: CheckedContinuation<ContinuousClock.Instant, Never>)?
    private var early: [String: ContinuousClock.Instant] = [:]

    func next(_ name: String) async -> ContinuousClock.Instant {
        if let instant = early.removeValue(forKey: name) { return instant }
        return await withCheckedContinuation { waiting = (name, $0) }
    }

    private func stamp(_ name: String) {
        let now = ContinuousClock.now
        if let waiting, waiting.name == name {
            self.waiting = nil
            waiting.continuation.resume(returning: now)
        } else {
            early[name] = now
        }
    }

    func applicationDidBecomeActive(_ application: Application) { stamp("active") }
    func applicationWillResignActive(_ application: Application) { stamp("resign") }
    func applicationDidEnterBackground(_ application: Application) { stamp("background") }
}

/// A private bus with the fake logind, a raw sd-bus subscriber, and an app on the real host bridge.
@MainActor
struct BridgeRig {
    let bus: PrivateBus
    let loop: EventLoop
    let fake: FakeLogind
    let raw: BusConnection
    let rawReceipts: RawReceipts
    let host: SystemdHost
    let app: Application
    let delegate: StampingDelegate
    let running: Task<Void, Never>

    /// Receipt instants of the raw subscriber, per member, in order.
    final class RawReceipts: Sendable {
        let entries = Mutex<[String: [ContinuousClock.Instant]]>([:])
        func add(_ member: String) { entries.withLock { $0[member, default: []].append(.now) } }
        func instants(_ member: String) -> [ContinuousClock.Instant] { entries.withLock { $0[member] ?? [] } }
    }

    static func start() async throws -> BridgeRig {
        let bus = try PrivateBus()
        let loop = try EventLoop(name: "bench-peers")
        let fake = try await FakeLogind(address: bus.address, loop: loop)
        let raw = try await BusConnection(
            .address(bus.address), loop: loop, description: "raw-subscriber", timeout: .seconds(10))
        let receipts = RawReceipts()
        _ = try await raw.addMatch("type='signal',interface='org.freedesktop.login1.Session'") { signal in
            receipts.add(signal.member)
        }
        _ = try await raw.addMatch("type='signal',interface='org.freedesktop.login1.Manager',member='PrepareForSleep'")
        { signal in
            receipts.add("PrepareForSleep:\(signal.arguments.first?.boolValue == true)")
        }
        let host = SystemdHost(
            configuration: .init(
                sources: [.logind], systemBus: .address(bus.address), environment: ["XDG_SESSION_ID": "bench"],
                inhibitorWho: "lifecycle-bench"))
        let delegate = StampingDelegate()
        let app = Application(
            delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
            configuration: .init(applicationIdentifier: "org.example.Bench", isStateRestorationEnabled: false))
        let running = Task { @MainActor in await app.run() }
        _ = await delegate.next("active")
        return BridgeRig(
            bus: bus, loop: loop, fake: fake, raw: raw, rawReceipts: receipts, host: host, app: app, delegate: delegate,
            running: running)
    }

    func stop() async {
        app.handle(.terminate(.hostRequest))
        await running.value
        raw.close()
        fake.close()
        loop.shutdown()
        bus.stop()
    }
}

/// `lifecycle-bench latency`: signal-to-delegate latency against raw sd-bus receipt of the same signals.
struct LatencyBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "latency",
        abstract: "Signal-to-delegate latency over Lock/Unlock and PrepareForSleep toggles, against raw sd-bus receipt."
    )

    @Option(help: "Toggles of each kind (Lock/Unlock and PrepareForSleep).")
    var toggles = 1000

    @Flag(help: "One JSON object per line.")
    var json = false

    @MainActor
    func run() async throws {
        let rig = try await BridgeRig.start()
        var delegateLatencies: [Double] = []
        var rawLatencies: [Double] = []
        var lockIndex = 0
        var sleepIndex = 0
        for toggle in 0..<toggles {
            let locking = toggle % 2 == 0
            let start = try rig.fake.lock(locking)
            let end = await rig.delegate.next(locking ? "resign" : "active")
            delegateLatencies.append((end - start).nanoseconds / 1000)
            let member = locking ? "Lock" : "Unlock"
            let receipts = rig.rawReceipts.instants(member)
            if receipts.count > lockIndex / 2 {
                rawLatencies.append((receipts[lockIndex / 2] - start).nanoseconds / 1000)
            }
            lockIndex += 1
        }
        for toggle in 0..<toggles {
            let sleeping = toggle % 2 == 0
            let start = try rig.fake.prepareForSleep(sleeping)
            let end = await rig.delegate.next(sleeping ? "background" : "active")
            delegateLatencies.append((end - start).nanoseconds / 1000)
            let receipts = rig.rawReceipts.instants("PrepareForSleep:\(sleeping)")
            if receipts.count > sleepIndex / 2 {
                rawLatencies.append((receipts[sleepIndex / 2] - start).nanoseconds / 1000)
            }
            sleepIndex += 1
        }
        await rig.stop()
        let ours = (Measurement.percentile(delegateLatencies, 50), Measurement.percentile(delegateLatencies, 99))
        let reference = (Measurement.percentile(rawLatencies, 50), Measurement.percentile(rawLatencies, 99))
        let ratio = ours.0 / reference.0
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "latency", "toggles": toggles * 2, "ours_p50_us": ours.0, "ours_p99_us": ours.1,
                    "reference_p50_us": reference.0, "reference_p99_us": reference.1, "ratio_p50": ratio,
                ]))
        } else {
            print("signal → delegate over \(toggles * 2) toggles (Lock/Unlock, PrepareForSleep):")
            print("  delegate:    p50 \(Measurement.format(ours.0)) µs   p99 \(Measurement.format(ours.1)) µs")
            print(
                "  raw sd-bus:  p50 \(Measurement.format(reference.0)) µs   p99 \(Measurement.format(reference.1)) µs")
            print("  ratio p50:   \(Measurement.format(ratio, 2))  (target ≤ 1.5)")
        }
    }
}

/// `lifecycle-bench sleep-delay`: the suspend delay the bridge adds.
struct SleepDelayBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sleep-delay",
        abstract: "Time from PrepareForSleep(true) to the sleep inhibitor's release, with a delegate that does nothing."
    )

    @Option(help: "Sleep/wake cycles.")
    var cycles = 300

    @Flag(help: "One JSON object per line.")
    var json = false

    @MainActor
    func run() async throws {
        let rig = try await BridgeRig.start()
        var events = rig.fake.lockEvents.makeAsyncIterator()
        var delays: [Double] = []
        for _ in 0..<cycles {
            let start = try rig.fake.prepareForSleep(true)
            while let event = await events.next(), event != "release:sleep" {}
            guard let released = rig.fake.releaseInstants(of: "sleep").last else { break }
            delays.append((released - start).nanoseconds / 1_000_000)
            _ = try rig.fake.prepareForSleep(false)
            while let event = await events.next(), event != "take:sleep" {}
            _ = await rig.delegate.next("active")
        }
        await rig.stop()
        let p50 = Measurement.percentile(delays, 50)
        let p99 = Measurement.percentile(delays, 99)
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "sleep-delay", "cycles": delays.count, "p50_ms": p50, "p99_ms": p99,
                    "target_p99_ms": 5,
                ]))
        } else {
            print("PrepareForSleep(true) → sleep lock released, over \(delays.count) cycles:")
            print("  p50 \(Measurement.format(p50, 3)) ms   p99 \(Measurement.format(p99, 3)) ms  (target p99 < 5 ms)")
        }
    }
}
