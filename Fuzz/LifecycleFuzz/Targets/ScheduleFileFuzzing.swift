import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials

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
}
