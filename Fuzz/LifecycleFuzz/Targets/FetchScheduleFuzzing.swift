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
