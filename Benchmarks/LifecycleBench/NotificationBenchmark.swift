import AppLifecycle
import AppLifecycleSystemd
import ArgumentParser
import Foundation
import LifecycledClient
import LifecycledProtocol
import LocalNotificationEngine
import Synchronization
import SystemdBus

/// `CLOCK_REALTIME` now, in seconds.
private func realtimeSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Resident set size of this process, in bytes (`/proc/self/statm`).
private func residentBytes() -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return .nan }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Double(fields[1]) ?? .nan) * Double(sysconf(Int32(_SC_PAGESIZE))) : .nan
}

/// A fixed-offset zone, so the time-zone re-computation is measured without glibc's lookups.
private struct OffsetZone: UTCOffsetRules {
    var identifier: String
    var offset: Int
    func utcOffset(at instant: Int) -> Int { offset }
}

/// `lifecycle-bench notifications`: how late local notifications fire through the real lifecycled,
/// and what keeping 100,000 scheduled costs.
struct NotificationBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications",
        abstract: "Fire-time accuracy of local notifications through lifecycled, and the cost of 100,000 scheduled.",
        discussion: """
            Accuracy: N notifications scheduled through lifecycled's ScheduleNotification across the next \
            SPAN seconds for an active app; each one's lateness is the arrival of its Command minus its fire \
            date. Reference, in the same run: a thread sleeping with clock_nanosleep(TIMER_ABSTIME) to the same \
            instants (the kernel's own wake-up lateness). Scale: the schedule lifecycled uses, filled with \
            100,000 notifications (half floating), its RSS, the re-arm after a clock change (next instant and \
            timerfd_settime) against a bare timerfd_settime, and the re-computation after a time-zone change.
            """)

    @Option(help: "Notifications for the accuracy run.")
    var count = 1000

    @Option(help: "Seconds the accuracy run's fire dates spread over.")
    var span = 60.0

    @Option(help: "Notifications for the scale run.")
    var scale = 100_000

    @Flag(help: "One JSON object per line.")
    var json = false

    func run() async throws {
        let accuracy = try await measureAccuracy()
        let cost = try measureScale()
        if json {
            print(Measurement.jsonLine(accuracy.merging(cost) { a, _ in a }))
            return
        }
        func ms(_ key: String) -> String { Measurement.format(accuracy[key] as? Double ?? .nan, 2) }
        print(
            "local notifications through lifecycled: \(count) over \(Measurement.format(span, 0)) s, fired to an active app"
        )
        print(
            "  late:        p50 \(ms("late_p50_ms")) ms   p99 \(ms("late_p99_ms")) ms   max \(ms("late_max_ms")) ms   (target p99 < 20 ms)"
        )
        print(
            "  reference:   p50 \(ms("reference_p50_ms")) ms   p99 \(ms("reference_p99_ms")) ms   (clock_nanosleep to the same instants)"
        )
        print("  ratio p99:   \(Measurement.format(accuracy["ratio_p99"] as? Double ?? .nan, 2))")
        print(
            "  scheduling:  \(ms("schedule_call_ms")) ms per ScheduleNotification, pipelined (each persisted before its reply)"
        )
        func value(_ key: String, _ digits: Int = 1) -> String {
            Measurement.format(cost[key] as? Double ?? .nan, digits)
        }
        print("\(scale) scheduled (half floating, half absolute):")
        print("  RSS:         +\(value("rss_mib")) MiB (\(value("bytes_per_notification", 0)) bytes each)")
        print(
            "  re-arm after a clock change: \(value("rearm_us", 2)) µs   bare timerfd_settime \(value("reference_settime_us", 2)) µs   ratio \(value("ratio_rearm", 2))   (target < 10 ms)"
        )
        print("  time-zone change (recompute all, re-arm): \(value("timezone_ms")) ms")
    }

    /// Schedules `count` notifications through a real lifecycled and times their Commands.
    func measureAccuracy() async throws -> [String: Any] {
        let rig = try await DaemonRig.start()
        defer { rig.stop() }
        let app = DaemonRig.appID
        for state in ["inactive", "active"] {
            _ = try await rig.app.call(
                destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.reportState.name,
                arguments: [.string(app), .string(state)])
        }
        let arrivals = Mutex<[String: Double]>([:])
        let subscription = try await rig.app.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Signal.command.name,
            signature: "ssa{sv}",
            arg0: app
        ) { signal in
            let now = realtimeSeconds()
            guard signal.arguments[1].stringValue == "local-notification",
                let info = try? UserInfoBusCodec.decodeUserInfo(signal.arguments[2]),
                let id = info["notification"]?.dictionaryValue?["identifier"]?.stringValue
            else { return }
            arrivals.withLock { $0[id] = now }
        }
        defer { subscription.cancel() }

        let start = realtimeSeconds() + 3
        let instants = (0..<count).map { start + span * Double($0) / Double(max(count - 1, 1)) }
        // The reference sleeps to the same instants on a thread of its own, meanwhile.
        let reference = onOwnThread { () -> [Double] in
            instants.map { instant in
                var target = timespec(tv_sec: Int(instant), tv_nsec: Int((instant - instant.rounded(.down)) * 1e9))
                while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
                return (realtimeSeconds() - instant) * 1000
            }
        }
        // Pipelined, as LifecycledHost sends an app's calls: up to 64 on their way at once.
        let scheduling = ContinuousClock.now
        var inFlight: [BusPendingReply] = []
        for (index, instant) in instants.enumerated() {
            let info: UserInfo = [
                "identifier": .string("n\(index)"), "alertBody": .string("benchmark \(index)"),
                "fireDate": .date(Date(timeIntervalSince1970: instant)),
            ]
            inFlight.append(
                rig.app.send(
                    destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                    interface: LifecycledProtocol.interface,
                    member: LifecycledProtocol.Method.scheduleNotification.name,
                    arguments: [.string(app), UserInfoBusCodec.encode(info)]))
            if inFlight.count >= 64 { _ = try await inFlight.removeFirst().value() }
        }
        for reply in inFlight { _ = try await reply.value() }
        let perCall = (ContinuousClock.now - scheduling).nanoseconds / 1e6 / Double(count)
        if realtimeSeconds() > start {
            FileHandle.standardError.write(
                Data("warning: scheduling outlasted the 3 s lead; early fire dates were late\n".utf8))
        }
        let deadline = ContinuousClock.now + .seconds(span + 15)
        while arrivals.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let received = arrivals.withLock { $0 }
        let late = instants.enumerated().compactMap { index, instant in
            received["n\(index)"].map { ($0 - instant) * 1000 }
        }
        let referenceLate = await reference.value()
        let ours = (Measurement.percentile(late, 50), Measurement.percentile(late, 99))
        let bare = (Measurement.percentile(referenceLate, 50), Measurement.percentile(referenceLate, 99))
        return [
            "benchmark": "notifications", "count": count, "received": late.count, "span_s": span,
            "late_p50_ms": ours.0, "late_p99_ms": ours.1, "late_max_ms": late.max() ?? .nan,
            "early": late.filter { $0 < 0 }.count, "reference_p50_ms": bare.0, "reference_p99_ms": bare.1,
            "ratio_p99": ours.1 / max(bare.1, 0.001), "schedule_call_ms": perCall,
        ]
    }

    /// Fills the schedule lifecycled uses and times what a clock or zone change costs.
    func measureScale() throws -> [String: Any] {
        let zone = OffsetZone(identifier: "Etc/GMT-1", offset: 3_600)
        let now = realtimeSeconds()
        let before = residentBytes()
        var schedule = LocalNotificationSchedule(timeZone: zone)
        for index in 0..<scale {
            let instant = now + 3_600 + Double(index)
            var payload: [String: UserInfoValue] = [
                "identifier": .string("n\(index)"), "alertBody": .string("Reminder \(index)"),
            ]
            if index % 2 == 0 {
                payload["wallClock"] = .string(
                    WallClockDateTime(instant: Int(instant), utcOffset: zone.offset).description)
            } else {
                payload["fireDate"] = .date(Date(timeIntervalSince1970: instant))
            }
            let notification = try ScheduledLocalNotification(
                appID: "org.example.App\(index % 50)", payload: payload, buttons: [], scheduledAt: Date())
            schedule.insert(notification, now: now)
        }
        let grown = residentBytes() - before
        let alarm = try RealtimeAlarm()
        defer { alarm.close() }
        let rearm = Measurement.nanosecondsPerOperation(iterations: 1000) { n in
            for _ in 0..<n { try? alarm.arm(at: schedule.earliestInstant()) }
        }
        let settime = Measurement.nanosecondsPerOperation(iterations: 1000) { n in
            for _ in 0..<n { try? alarm.arm(at: now + 3_600) }
        }
        let zoneChange = ContinuousClock.now
        schedule.setTimeZone(OffsetZone(identifier: "Etc/GMT-2", offset: 7_200), now: now)
        try alarm.arm(at: schedule.earliestInstant())
        let zoneMs = (ContinuousClock.now - zoneChange).nanoseconds / 1e6
        return [
            "scale": scale, "rss_mib": grown / 1_048_576, "bytes_per_notification": grown / Double(scale),
            "rearm_us": rearm / 1000, "reference_settime_us": settime / 1000, "ratio_rearm": rearm / settime,
            "timezone_ms": zoneMs, "scheduled": schedule.count,
        ]
    }
}
