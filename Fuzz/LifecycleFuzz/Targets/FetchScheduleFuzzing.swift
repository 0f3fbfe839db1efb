import AppLifecycle
import FetchScheduling
import FoundationEssentials

@testable import LifecycleDaemon

/// lifecycled's background-fetch schedule (`fetch-schedule.json`): the input is the file.
///
/// Through `FetchScheduleFile.decode` (the JSON decoder and the checks of every entry), then, for a
/// schedule that loads, the property that it saves and loads back as the same schedule.
enum FetchScheduleFuzzing {
    static let target = FuzzTarget(name: "fetch-schedule", summary: "background-fetch schedule file") { bytes in
        guard let scheduler = try? FetchScheduleFile.decode(Data(bytes), now: 1_800_000_000) else { return }
        // What the daemon does with a loaded schedule at start: its next wake-up, each app run and
        // ended (every result), the loop's deadline: none of it may trap on the file's values.
        var running = scheduler
        if let wake = running.nextWakeUp() { _ = FetchClock().loopDeadlineMicroseconds(for: wake) }
        for (index, id) in running.apps.keys.sorted().enumerated() {
            running.setManifest(id, declaresFetch: true, allowsMeteredNetwork: true)
            if running.runNow(id, now: 1_800_000_000) {
                let results: [BackgroundFetchResult] = [.newData, .noData, .failed]
                running.completed(id, result: results[index % 3], now: 1_800_000_100)
            }
        }
        if let wake = running.nextWakeUp() { _ = FetchClock().loopDeadlineMicroseconds(for: wake) }
        let encoded = FetchScheduleFile.encode(scheduler)
        do {
            let again = try FetchScheduleFile.decode(encoded, now: 1_800_000_000)
            guard again.apps == scheduler.apps, again.backgroundRefreshDenied == scheduler.backgroundRefreshDenied
            else {
                FuzzTarget.fail("fetch schedule changed on a round trip: \(scheduler.apps) → \(again.apps)")
            }
        } catch {
            FuzzTarget.fail("a loaded fetch schedule, written back, does not load: \(error)")
        }
    }
}
