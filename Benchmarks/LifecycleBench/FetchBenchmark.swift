import AppLifecycle
import ArgumentParser
import FetchScheduling
import Foundation
import Glibc
import LifecycleDaemon
import SystemdBusTesting

/// `lifecycle-bench fetch`: lifecycled's fetch scheduler over a simulated day, against a timer per
/// app measured in the same run.
///
/// Twenty apps (by default) ask for `backgroundFetchIntervalMinimum` (15 minutes) at staggered
/// times during the first quarter hour. A virtual clock jumps from wake-up to wake-up (no wall
/// clock, no sleeps): ours is ``FetchScheduler`` (coalescing windows and joining); the reference
/// is what an app-per-timer host does, one wake-up whenever any app is due. Reported: wake-ups per
/// hour over the day and in its last hour (the goal: at most one per coalescing window, four an
/// hour), the ratio to the reference, how late fetches ran after their due time (simulated
/// seconds), the fetch start latency from a wake-up (the wall-clock time the scheduler takes to
/// decide it, per wake-up), and wake-ups that started no fetch (idle work: 0). Two result mixes:
/// every fetch `newData`, and a seeded mix (70 % newData, 20 % noData, 10 % failed).
///
/// Then the idle CPU between fetches (goal: 0), measured on the real lifecycled binary
/// (``FetchIdleMeasurement``): the apps scheduled in its `fetch-schedule.json`, none due in the
/// window, against lifecycled with no apps over the same window.
struct FetchBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract: "Fetch wake-ups per hour of twenty 15-minute apps over a simulated day, against a timer per app.")

    @Option(help: "Apps fetching.") var apps = 20
    @Option(help: "Simulated hours.") var hours = 24
    @Flag(help: "One JSON object per line.") var json = false
    @Option(help: "Seconds of the idle window between fetches (0: skip that part).") var idleSeconds = 10
    @Option(help: "The lifecycled to measure idle (default: the one next to lifecycle-bench).")
    var lifecycled: String?

    /// What one simulated day gave.
    struct Outcome {
        var wakeUps: [Double] = []
        var idleWakeUps = 0
        var fetches = 0
        var lateness: [Double] = []
        var decisionNanoseconds: [Double] = []
    }

    func validate() throws {
        guard idleSeconds >= 0 else { throw ValidationError("--idle-seconds must be 0 or more") }
    }

    func run() async throws {
        let end = Double(hours) * 3600
        for mix in ["newData", "mixed"] {
            let ours = simulate(until: end, mix: mix)
            let reference = simulateTimerPerApp(until: end, mix: mix)
            report(mix: mix, ours: ours, reference: reference, end: end)
        }
        guard idleSeconds > 0 else { return }
        let idle = FetchIdleMeasurement(apps: apps, seconds: idleSeconds, lifecycled: lifecycled)
        let (ours, reference) = try await idle.run()
        reportIdle(ours: ours, reference: reference)
    }

    private func reportIdle(ours: FetchIdleMeasurement.Figures, reference: FetchIdleMeasurement.Figures) {
        let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let cpu = Double(ours.cpuTicks) / ticksPerSecond * 1000
        let referenceCPU = Double(reference.cpuTicks) / ticksPerSecond * 1000
        // Ours over the reference; 1 when both are 0 (nothing to tell them apart), none when only ours is not.
        func ratio(_ ours: Double, _ reference: Double) -> Double? {
            reference > 0 ? ours / reference : ours == 0 ? 1 : nil
        }
        let cpuRatio = ratio(cpu, referenceCPU)
        let switchRatio = ratio(Double(ours.contextSwitches), Double(reference.contextSwitches))
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "fetch-idle", "apps": apps, "scheduledApps": ours.scheduledApps,
                    "seconds": idleSeconds, "cpuMilliseconds": cpu, "referenceCpuMilliseconds": referenceCPU,
                    "cpuRatio": cpuRatio ?? NSNull(), "contextSwitches": ours.contextSwitches,
                    "referenceContextSwitches": reference.contextSwitches,
                    "contextSwitchRatio": switchRatio ?? NSNull(),
                    "threadsEnded": ours.threadsEnded, "referenceThreadsEnded": reference.threadsEnded,
                    "armedTimers": ours.armedTimers.count, "referenceArmedTimers": reference.armedTimers.count,
                    "armedTimersByClock": ours.armedTimers.map { ["clock": $0.clockName, "seconds": $0.seconds] },
                    "referenceArmedTimersByClock": reference.armedTimers.map {
                        ["clock": $0.clockName, "seconds": $0.seconds]
                    },
                ]))
            return
        }
        print(
            "fetch idle: lifecycled with \(ours.scheduledApps) apps scheduled (none due in the window) vs lifecycled with none, the same \(idleSeconds) s"
        )
        print(
            "  CPU (utime+stime, every thread): ours \(Measurement.format(cpu, 0)) ms, reference \(Measurement.format(referenceCPU, 0)) ms (ratio \(cpuRatio.map { Measurement.format($0, 2) } ?? "-")); goal 0"
        )
        print(
            "  context switches (every thread): ours \(ours.contextSwitches), reference \(reference.contextSwitches) (ratio \(switchRatio.map { Measurement.format($0, 2) } ?? "-")); threads that ended: ours \(ours.threadsEnded), reference \(reference.threadsEnded)"
        )
        func list(_ timers: [FetchIdleMeasurement.ArmedTimer]) -> String {
            timers.isEmpty ? "none" : timers.map(\.description).joined(separator: ", ")
        }
        print(
            "  armed timerfds: ours \(ours.armedTimers.count) (\(list(ours.armedTimers))); reference \(reference.armedTimers.count) (\(list(reference.armedTimers)))"
        )
    }

    private func ids() -> [String] { (0..<apps).map { "org.example.Bench\($0)" } }

    private func result(_ mix: String, _ generator: inout SeededGenerator) -> BackgroundFetchResult {
        guard mix == "mixed" else { return .newData }
        let draw = Double.random(in: 0..<1, using: &generator)
        return draw < 0.7 ? .newData : draw < 0.9 ? .noData : .failed
    }

    /// Ours: the scheduler decides each wake-up; every fetch completes at once.
    private func simulate(until end: Double, mix: String) -> Outcome {
        var scheduler = FetchScheduler()
        var generator = SeededGenerator(state: 19)
        let spacing = FetchScheduler.minimumInterval / Double(max(apps, 1))
        for (index, id) in ids().enumerated() {
            scheduler.setManifest(id, declaresFetch: true, allowsMeteredNetwork: false)
            scheduler.setInterval(
                id, seconds: Application.backgroundFetchIntervalMinimum, now: Double(index) * spacing)
        }
        var outcome = Outcome()
        var now = 0.0
        while let wake = scheduler.nextWakeUp(), wake <= end {
            now = max(now, wake)
            let dues = scheduler.apps.mapValues(\.nextDue)
            let start = ContinuousClock.now
            let decisions = scheduler.wakeUp(now: now)
            outcome.decisionNanoseconds.append((ContinuousClock.now - start).nanoseconds)
            let ran = decisions.filter(\.runs)
            outcome.wakeUps.append(now)
            if ran.isEmpty { outcome.idleWakeUps += 1 }
            for decision in ran {
                outcome.fetches += 1
                if let due = dues[decision.appID] ?? nil { outcome.lateness.append(now - due) }
                scheduler.completed(decision.appID, result: result(mix, &generator), now: now)
            }
        }
        return outcome
    }

    /// The reference: a timer per app at its due time (the same result rule, no coalescing).
    private func simulateTimerPerApp(until end: Double, mix: String) -> Outcome {
        var generator = SeededGenerator(state: 19)
        let interval = FetchScheduler.minimumInterval
        let spacing = interval / Double(max(apps, 1))
        var due = Dictionary(uniqueKeysWithValues: ids().enumerated().map { ($1, Double($0) * spacing + interval) })
        var noData: [String: Int] = [:]
        var failures: [String: Int] = [:]
        var outcome = Outcome()
        while let (id, time) = due.min(by: { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) }),
            time <= end
        {
            if outcome.wakeUps.last != time { outcome.wakeUps.append(time) }
            outcome.fetches += 1
            outcome.lateness.append(0)
            var app = FetchScheduler.App()
            app.interval = interval
            switch result(mix, &generator) {
            case .newData:
                noData[id] = 0
                failures[id] = 0
                due[id] = time + interval
            case .noData:
                noData[id, default: 0] += 1
                app.noDataInARow = noData[id] ?? 1
                due[id] = time + FetchScheduler.delay(after: .noData, of: app, interval: interval)
            case .failed:
                failures[id, default: 0] += 1
                app.failuresInARow = failures[id] ?? 1
                due[id] = time + FetchScheduler.delay(after: .failed, of: app, interval: interval)
            }
        }
        return outcome
    }

    private func report(mix: String, ours: Outcome, reference: Outcome, end: Double) {
        let hours = end / 3600
        let perHour = Double(ours.wakeUps.count) / hours
        let referencePerHour = Double(reference.wakeUps.count) / hours
        let lastHour = ours.wakeUps.filter { $0 > end - 3600 }.count
        let referenceLastHour = reference.wakeUps.filter { $0 > end - 3600 }.count
        let windowsPerHour = 3600 / FetchScheduler.minimumInterval
        let latenessMean = ours.lateness.reduce(0, +) / Double(max(ours.lateness.count, 1))
        let latenessMax = ours.lateness.max() ?? 0
        let decision = Measurement.median(ours.decisionNanoseconds)
        let decisionP99 = Measurement.percentile(ours.decisionNanoseconds, 99)
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "fetch", "results": mix, "apps": apps, "hours": hours,
                    "wakeUpsPerHour": perHour, "referenceWakeUpsPerHour": referencePerHour,
                    "ratio": perHour / referencePerHour, "lastHourWakeUps": lastHour,
                    "referenceLastHourWakeUps": referenceLastHour, "goalPerHour": windowsPerHour,
                    "fetches": ours.fetches, "referenceFetches": reference.fetches,
                    "idleWakeUps": ours.idleWakeUps, "latenessMeanSeconds": latenessMean,
                    "latenessMaxSeconds": latenessMax, "startLatencyMedianNanoseconds": decision,
                    "startLatencyP99Nanoseconds": decisionP99,
                ]))
            return
        }
        print("fetch (\(apps) apps, 15-minute interval, \(Int(hours)) simulated hours, results: \(mix))")
        print(
            "  wake-ups/hour: ours \(Measurement.format(perHour, 2)), timer per app \(Measurement.format(referencePerHour, 2)) (ratio \(Measurement.format(perHour / referencePerHour, 3))); goal ≤ \(Measurement.format(windowsPerHour, 0))"
        )
        print("  last hour: ours \(lastHour) wake-ups, timer per app \(referenceLastHour)")
        print(
            "  fetches: ours \(ours.fetches), timer per app \(reference.fetches); wake-ups without a fetch: \(ours.idleWakeUps)"
        )
        print(
            "  lateness after due: mean \(Measurement.format(latenessMean)) s, max \(Measurement.format(latenessMax)) s (simulated)"
        )
        print(
            "  fetch start latency from the wake-up (the scheduler's decision): median \(Measurement.format(decision / 1000, 2)) µs, p99 \(Measurement.format(decisionP99 / 1000, 2)) µs"
        )
    }
}
