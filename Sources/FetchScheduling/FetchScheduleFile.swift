import AppLifecycle
import FoundationEssentials
import LifecycledProtocol
import Logging

/// The fetch schedule on disk: `fetch-schedule.json` in lifecycled's state directory (or, for
/// `SystemdHost`'s one app, in the app's), written through the host's one `GroupCommitFile`
/// writer for it.
///
/// ```json
/// {"version": 1,
///  "apps": {"org.example.News": {"interval": 900, "nextDue": 1764170000.5, "noDataInARow": 0, "failuresInARow": 0}},
///  "backgroundRefreshDenied": ["org.example.Mail"]}
/// ```
///
/// Times are Unix seconds on the fetch clock. What a manifest says (`fetch`,
/// `allowsMeteredNetwork`) is not kept: the manifests say it at each start. A fetch that was
/// running when the daemon stopped is due again at once after the restart. (`SystemdHost` saves a
/// running fetch as failed instead, since its app's overrun ends the process that runs the
/// scheduler.)
package enum FetchScheduleFile {
    /// The file's name in the state directory.
    package static let name = "fetch-schedule.json"
    /// The largest file read (a bound on what a corrupt or hostile file costs).
    package static let readLimit = 4 << 20

    private struct Contents: Codable {
        var version = 1
        var apps: [String: FetchScheduler.App]
        var backgroundRefreshDenied: [String]
    }

    /// The bytes of a schedule.
    package static func encode(_ scheduler: FetchScheduler) -> Data {
        var apps: [String: FetchScheduler.App] = [:]
        for (id, app) in scheduler.apps where app.interval != nil {
            var saved = app
            // A running fetch is due again at once if the daemon restarts before it ends.
            if let since = app.runningSince { saved.nextDue = since }
            apps[id] = saved
        }
        let contents = Contents(apps: apps, backgroundRefreshDenied: scheduler.backgroundRefreshDenied.sorted())
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(contents)) ?? Data(#"{"version":1,"apps":{},"backgroundRefreshDenied":[]}"#.utf8)
    }

    /// A schedule from its bytes; entries with an invalid app id, or times and counts that are
    /// not finite and non-negative, are dropped.
    ///
    /// - Parameters:
    ///   - now: The fetch clock now: an app with an interval and no due time is due now.
    /// - Throws: `DecodingError` when the bytes are not a schedule.
    package static func decode(_ data: Data, now: Double) throws -> FetchScheduler {
        let contents = try JSONDecoder().decode(Contents.self, from: data)
        var apps: [String: FetchScheduler.App] = [:]
        for (id, var app) in contents.apps where LifecycledProtocol.isValidAppID(id) {
            guard let interval = app.interval, interval.isFinite, interval > 0,
                interval <= FetchScheduler.maximumInterval, app.noDataInARow >= 0, app.failuresInARow >= 0
            else { continue }
            app.interval = max(interval, FetchScheduler.minimumInterval)
            app.noDataInARow = min(app.noDataInARow, FetchScheduler.maximumCount)
            app.failuresInARow = min(app.failuresInARow, FetchScheduler.maximumCount)
            // A due time not finite, or further than the longest interval ahead: due now.
            if let due = app.nextDue, !due.isFinite || due > now + FetchScheduler.maximumInterval { app.nextDue = nil }
            if app.nextDue == nil { app.nextDue = now }
            apps[id] = app
        }
        let denied = Set(contents.backgroundRefreshDenied.filter(LifecycledProtocol.isValidAppID))
        return FetchScheduler(apps: apps, backgroundRefreshDenied: denied)
    }

    /// Reads the schedule at start: none when there is no file; a file that cannot be read or
    /// decoded is set aside (`fetch-schedule.json.corrupt-<time>`, logged) and the schedule starts empty.
    package static func load(from url: URL, now: Double, logger: Logger) -> FetchScheduler {
        let data: Data
        do {
            data = try AtomicFile.read(from: url, limit: readLimit)
        } catch {
            if error.code != .notFound { logger.error("cannot read \(url.path): \(error); fetches start unscheduled") }
            return FetchScheduler()
        }
        do {
            return try decode(data, now: now)
        } catch {
            let kept = AtomicFile.setAside(url)
            logger.error(
                "\(url.path) is not a fetch schedule (\(error)); set aside as \(kept ?? "nothing: it could not be renamed"); fetches start unscheduled"
            )
            return FetchScheduler()
        }
    }
}
