import AppLifecycle
import ArgumentParser
import FetchScheduling
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus

/// `lifecycle-bench fetch`'s idle part: the real lifecycled between fetches, against lifecycled
/// with no apps, both idle on private buses over the same window.
///
/// Ours has twenty (by default) app manifests that declare `fetch` and a `fetch-schedule.json`,
/// written by ``FetchScheduleFile``'s own encoder, in which every app is due 15 to 30 minutes from
/// now: nothing is due during the window, so whatever lifecycled does in it is the schedule's idle
/// cost. Read from /proc for each process: CPU time (`utime` + `stime` from `/proc/PID/stat`, every
/// thread's, in clock ticks), context switches (each thread's, from `/proc/PID/task/*/status`,
/// counted per thread id between the samples: each is a wake-up or a preemption; a thread that
/// ended meanwhile is counted apart, its switches lost with it), and the kernel timers it has armed (its `timerfd`s in
/// `/proc/PID/fdinfo`, with their clock and when they next expire: sd-event keeps one per clock,
/// armed at that clock's earliest timer, so the count is of clocks with a timer pending, not of
/// lifecycled's timers).
struct FetchIdleMeasurement {
    /// One idle process's figures over the window.
    struct Figures {
        var cpuTicks: UInt64
        /// Context switches by thread id (after ``subtract(_:)``: those in the window).
        var switchesByThread: [Int: Int]
        /// Threads that ended in the window (their switches in it are not counted; ending is work).
        var threadsEnded = 0
        /// Context switches of every thread.
        var contextSwitches: Int { switchesByThread.values.reduce(0, +) }
        var armedTimers: [ArmedTimer]
        var scheduledApps: Int
    }

    /// A timerfd the process has armed.
    struct ArmedTimer: CustomStringConvertible {
        /// `CLOCK_REALTIME` (0), `CLOCK_MONOTONIC` (1), `CLOCK_BOOTTIME` (7), …
        var clock: Int
        /// Seconds until it expires.
        var seconds: Double

        var clockName: String {
            switch clock {
            case 0: "realtime"
            case 1: "monotonic"
            case 7: "boottime"
            case 8: "realtime-alarm"
            case 9: "boottime-alarm"
            default: "clock \(clock)"
            }
        }

        var description: String { "\(clockName) in \(Measurement.format(seconds, 1)) s" }
    }

    let apps: Int
    let seconds: Int
    let lifecycled: String?

    /// Runs both daemons, idle, over the same window; returns ours and the reference.
    func run() async throws -> (ours: Figures, reference: Figures) {
        let now = Date().timeIntervalSince1970
        let ids = (0..<apps).map { "org.example.Fetch\($0)" }
        let ours = try await DaemonRig.start(executable: lifecycled) { appsDirectory, stateDirectory in
            var scheduler = FetchScheduler()
            for (index, id) in ids.enumerated() {
                let manifest: [String: Any] = ["id": id, "executable": "/usr/bin/true", "backgroundModes": ["fetch"]]
                try JSONSerialization.data(withJSONObject: manifest).write(
                    to: URL(fileURLWithPath: "\(appsDirectory)/\(id).json"))
                scheduler.setManifest(id, declaresFetch: true, allowsMeteredNetwork: false)
                // Due 15 minutes after a time spread over the next quarter hour: none during the window.
                let spacing = FetchScheduler.minimumInterval / Double(max(apps, 1))
                scheduler.setInterval(
                    id, seconds: Application.backgroundFetchIntervalMinimum, now: now + Double(index) * spacing)
            }
            try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
            try FetchScheduleFile.encode(scheduler).write(
                to: URL(fileURLWithPath: "\(stateDirectory)/\(FetchScheduleFile.name)"))
        }
        defer { ours.stop() }
        let reference = try await DaemonRig.start(executable: lifecycled)
        defer { reference.stop() }
        let scheduled = try await Self.scheduledApps(ours)
        guard scheduled == apps else {
            throw ValidationError("lifecycled scheduled \(scheduled) of the \(apps) apps' fetches")
        }
        try await Task.sleep(for: .seconds(1))  // let start-up settle before the idle window
        let before = try Self.sample(ours.daemon.pid)
        let referenceBefore = try Self.sample(reference.daemon.pid)
        try await Task.sleep(for: .seconds(seconds))
        var after = try Self.sample(ours.daemon.pid)
        var referenceAfter = try Self.sample(reference.daemon.pid)
        after.subtract(before)
        referenceAfter.subtract(referenceBefore)
        after.scheduledApps = scheduled
        referenceAfter.scheduledApps = try await Self.scheduledApps(reference)
        return (after, referenceAfter)
    }

    /// How many apps `DescribeApps` gives a next fetch.
    static func scheduledApps(_ rig: DaemonRig) async throws -> Int {
        let reply = try await rig.app.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.describeApps.name)
        let entries = try (reply.first?.arrayValue ?? []).map { try UserInfoBusCodec.decodeUserInfo($0) }
        return entries.filter { $0["next-fetch"] != nil }.count
    }

    /// The process's figures now (totals since it started; the armed timers as they are now).
    static func sample(_ pid: pid_t) throws -> Figures {
        let process = try IdleBenchmark.ProcessSample(pid: pid)
        // Each thread's: /proc/PID/status counts the main thread's alone.
        var switches: [Int: Int] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let id = Int(task),
                let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
            else { continue }
            for line in status.split(separator: "\n")
            where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                switches[id, default: 0] +=
                    Int(line.split(separator: "\t").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return Figures(
            cpuTicks: process.cpuTicks, switchesByThread: switches, armedTimers: armedTimers(pid), scheduledApps: 0)
    }

    /// The timerfds of a process that are armed (`it_value` not zero in their fdinfo).
    static func armedTimers(_ pid: pid_t) -> [ArmedTimer] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return fds.sorted().compactMap { fd -> ArmedTimer? in
            guard
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"))
                    == "anon_inode:[timerfd]",
                let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8)
            else { return nil }
            var clock = -1
            var value: (seconds: Double, nanoseconds: Double) = (0, 0)
            for line in info.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2 else { continue }
                if parts[0] == "clockid" { clock = Int(parts[1]) ?? -1 }
                if parts[0] == "it_value" {
                    // "(seconds, nanoseconds)"
                    let numbers = parts[1].split { !$0.isNumber }.compactMap { Double($0) }
                    if numbers.count == 2 { value = (numbers[0], numbers[1]) }
                }
            }
            guard value.seconds != 0 || value.nanoseconds != 0 else { return nil }
            return ArmedTimer(clock: clock, seconds: value.seconds + value.nanoseconds / 1e9)
        }
    }
}

extension FetchIdleMeasurement.Figures {
    /// What happened between `earlier` and this sample (the armed timers stay this sample's).
    mutating func subtract(_ earlier: FetchIdleMeasurement.Figures) {
        cpuTicks -= min(cpuTicks, earlier.cpuTicks)
        for (thread, count) in switchesByThread {
            switchesByThread[thread] = count - (earlier.switchesByThread[thread] ?? 0)
        }
        threadsEnded = earlier.switchesByThread.keys.filter { switchesByThread[$0] == nil }.count
    }
}
