import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import Glibc
import LocalNotificationEngine

/// The local-notification schedule file (`local-notifications.json`): the input is the file.
///
/// Through `LocalNotificationScheduleFile.load` (JSON, the version, every entry through
/// `ScheduledLocalNotification`), then, for a file that loads, the property that writing back
/// what loaded and loading it again keeps every notification, undelivered one and rejected entry,
/// and every notification's payload (as JSON keeps values: ``FuzzValues/sameAfterJSON(_:_:)``).
enum ScheduleFileFuzzing {
    static let target = FuzzTarget(name: "schedule-file", summary: "local-notification schedule file") { bytes in
        let path = ScratchDirectory.write(bytes, to: LocalNotificationScheduleFile.fileName)
        let loaded = LocalNotificationScheduleFile.load(from: URL(fileURLWithPath: path))
        guard loaded.writable else { return }
        schedule(loaded.notifications + loaded.undelivered)
        let contents = LocalNotificationScheduleFile.Contents(
            notifications: loaded.notifications, undelivered: loaded.undelivered, rejected: loaded.rejected)
        let encoded: Data
        do {
            encoded = try LocalNotificationScheduleFile.encode(contents)
        } catch {
            FuzzTarget.fail("a loaded schedule does not encode: \(error)")
        }
        let again = ScratchDirectory.write(Array(encoded), to: LocalNotificationScheduleFile.fileName)
        let reloaded = LocalNotificationScheduleFile.load(from: URL(fileURLWithPath: again))
        guard reloaded.writable, reloaded.notifications.count == loaded.notifications.count,
            reloaded.undelivered.count == loaded.undelivered.count,
            reloaded.rejected.count == loaded.rejected.count
        else {
            FuzzTarget.fail(
                "schedule changed on a round trip: \(loaded.notifications.count)/\(loaded.undelivered.count)/"
                    + "\(loaded.rejected.count) → \(reloaded.notifications.count)/\(reloaded.undelivered.count)/"
                    + "\(reloaded.rejected.count), problem \(reloaded.problem ?? "none")")
        }
        guard !FuzzValues.containsNaN(loaded.notifications.map(\.payload)) else { return }
        for (before, after) in zip(loaded.notifications, reloaded.notifications)
        where !FuzzValues.sameAfterJSON(.dictionary(before.payload), .dictionary(after.payload)) {
            FuzzTarget.fail("a notification's payload changed on a round trip: \(before.payload) → \(after.payload)")
        }
    }

    /// The daemon's clock for the schedule: 2026-01-01, in Europe/Berlin (glibc's rules, as
    /// `SystemLocalTime` reads them: daylight saving makes wall-clock times that occur twice or never).
    static let now = 1_767_225_600.0
    static let berlin: SystemLocalTime = {
        setenv("TZ", "Europe/Berlin", 1)
        return SystemLocalTime(environment: ["TZ": "Europe/Berlin"])
    }()

    /// What the daemon does with what it loaded: schedule it (the next occurrence of each), take
    /// what is due over the next year, and move everything to another zone.
    private static func schedule(_ notifications: [ScheduledLocalNotification]) {
        var schedule = LocalNotificationSchedule(timeZone: berlin)
        for notification in notifications { schedule.insert(notification, now: now) }
        _ = schedule.earliestInstant()
        _ = schedule.takeDue(now: now + 366 * 86_400)
        schedule.setTimeZone(FixedOffset(seconds: -36_000), now: now + 366 * 86_400)
        _ = schedule.takeDue(now: now + 2 * 366 * 86_400)
    }

    /// A zone without rules (UTC−10).
    private struct FixedOffset: UTCOffsetRules {
        var seconds: Int
        var identifier: String { "UTC-10" }
        func utcOffset(at instant: Int) -> Int { seconds }
    }
}
