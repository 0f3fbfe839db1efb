import AppLifecycle
import Foundation
import Logging
import SystemdBusTesting
import Testing

@testable import FetchScheduling

/// A simulated run of the scheduler: the clock jumps from wake-up to wake-up (no wall clock).
struct SimulatedFetchDay {
    var scheduler = FetchScheduler()
    var now: Double = 0
    /// Every wake-up that ran at least one fetch, and every fetch: app and when it was due.
    var wakeUps: [Double] = []
    var fetches: [(app: String, at: Double, due: Double)] = []

    /// Runs wake-ups until `end`, completing each fetch at once with `result(app)`.
    mutating func run(until end: Double, result: (String) -> BackgroundFetchResult = { _ in .newData }) {
        while let wake = scheduler.nextWakeUp(), wake <= end {
            now = max(now, wake)
            let dues = scheduler.apps.mapValues { $0.nextDue }
            let ran = scheduler.wakeUp(now: now).filter(\.runs)
            if !ran.isEmpty { wakeUps.append(now) }
            for decision in ran {
                fetches.append((decision.appID, now, dues[decision.appID].flatMap { $0 } ?? now))
                scheduler.completed(decision.appID, result: result(decision.appID), now: now)
            }
        }
        now = end
    }
}

@Suite("FetchScheduler: coalescing, the result rule, conditions, the file")
struct FetchSchedulerTests {
    static let interval = FetchScheduler.minimumInterval

    /// Twenty apps that asked at staggered times during the first quarter hour.
    static func twentyApps() -> SimulatedFetchDay {
        var day = SimulatedFetchDay()
        for index in 0..<20 {
            let id = "org.example.App\(index)"
            day.scheduler.setManifest(id, declaresFetch: true, allowsMeteredNetwork: false)
            day.scheduler.setInterval(id, seconds: Application.backgroundFetchIntervalMinimum, now: Double(index) * 45)
        }
        return day
    }

    @Test("twenty apps at 15 minutes share about four wake-ups an hour over a simulated day, none early or late")
    func coalescing() {
        var day = Self.twentyApps()
        day.run(until: 24 * 3600)
        let hours = 24.0
        // At most one wake-up per coalescing window of the interval: 4 an hour, plus the first hour's settling.
        let perHour = Double(day.wakeUps.count) / hours
        #expect(perHour <= 4.2, "\(day.wakeUps.count) wake-ups in a day")
        let lastHour = day.wakeUps.filter { $0 >= 23 * 3600 }.count
        #expect(lastHour <= 4, "\(lastHour) wake-ups in the last hour")
        // Every app fetched every interval or so: 20 × 96 fetches, each within [due, due + window].
        #expect(day.fetches.count >= 20 * 80, "\(day.fetches.count) fetches")
        let window = FetchScheduler.window(for: Self.interval)
        #expect(window == 300)
        for fetch in day.fetches {
            #expect(fetch.at >= fetch.due && fetch.at <= fetch.due + window + 1e-6, "\(fetch)")
        }
        // Never more often than the interval, per app.
        for index in 0..<20 {
            let times = day.fetches.filter { $0.app == "org.example.App\(index)" }.map(\.at)
            for (earlier, later) in zip(times, times.dropFirst()) { #expect(later - earlier >= Self.interval - 1e-6) }
        }
    }

    @Test("the result rule: newData one interval, noData 1.5 then 2 intervals, failed one interval plus a backoff")
    func resultRule() {
        var scheduler = FetchScheduler()
        let id = "org.example.News"
        scheduler.setManifest(id, declaresFetch: true, allowsMeteredNetwork: false)
        scheduler.setInterval(id, seconds: 1200, now: 0)
        #expect(scheduler.nextDue(id) == 1200)
        func fetch(_ result: BackgroundFetchResult, at now: Double) -> Double? {
            let decided = scheduler.wakeUp(now: now)
            #expect(decided.map(\.runs) == [true])
            scheduler.completed(id, result: result, now: now)
            return scheduler.nextDue(id).map { $0 - now }
        }
        #expect(fetch(.newData, at: 1200) == 1200)
        #expect(fetch(.noData, at: 2400) == 1800)
        #expect(fetch(.noData, at: 4200) == 2400)
        #expect(fetch(.noData, at: 6600) == 2400)
        #expect(fetch(.newData, at: 9000) == 1200)
        #expect(fetch(.failed, at: 10200) == 1230)
        #expect(fetch(.failed, at: 11430) == 1260)
        #expect(fetch(.failed, at: 12690) == 1320)
        #expect(fetch(.newData, at: 14010) == 1200)
        #expect(fetch(.failed, at: 15210) == 1230)
    }

    @Test("the interval: the floor, the same interval keeps its due time, never unschedules, no fetch mode no schedule")
    func interval() {
        var scheduler = FetchScheduler()
        scheduler.setManifest("org.example.A", declaresFetch: true, allowsMeteredNetwork: false)
        scheduler.setInterval("org.example.A", seconds: 60, now: 100)
        #expect(scheduler.nextDue("org.example.A") == 100 + FetchScheduler.minimumInterval)
        let changed = scheduler.setInterval("org.example.A", seconds: 0, now: 500)
        #expect(!changed)
        #expect(scheduler.nextDue("org.example.A") == 100 + FetchScheduler.minimumInterval)
        scheduler.setInterval("org.example.A", seconds: 3600, now: 500)
        #expect(scheduler.nextDue("org.example.A") == 4100)
        scheduler.setInterval("org.example.A", seconds: Application.backgroundFetchIntervalNever, now: 600)
        #expect(scheduler.nextDue("org.example.A") == nil)
        #expect(scheduler.nextWakeUp() == nil)
        scheduler.setManifest("org.example.B", declaresFetch: false, allowsMeteredNetwork: false)
        scheduler.setInterval("org.example.B", seconds: 900, now: 0)
        #expect(scheduler.nextWakeUp() == nil)
        let later = scheduler.wakeUp(now: 10_000)
        #expect(later.isEmpty)
    }

    @Test("conditions: metered, Low Power Mode, connectivity, the user's switch defer, in order, without wake-ups")
    func conditions() {
        var scheduler = FetchScheduler()
        for (id, metered) in [("org.example.Cell", true), ("org.example.Wifi", false)] {
            scheduler.setManifest(id, declaresFetch: true, allowsMeteredNetwork: metered)
            scheduler.setInterval(id, seconds: 900, now: 0)
        }
        func decide(at now: Double) -> [String] {
            let made = scheduler.wakeUp(now: now)
            return made.map { "\($0.appID.dropFirst(12)):\($0.deferral?.rawValue ?? "run")" }
        }
        scheduler.setConditions(FetchConditions(hasFullConnectivity: true, isMetered: true))
        #expect(decide(at: 900) == ["Cell:run", "Wifi:metered-network"])
        scheduler.completed("org.example.Cell", result: .newData, now: 900)
        // The deferred app waits without wake-ups of its own: only the other app's next one.
        #expect(scheduler.nextWakeUp() == 1800)
        #expect(decide(at: 1000).isEmpty, "a deferred app is decided once per reason")

        scheduler.setConditions(FetchConditions(isMetered: false, isLowPowerModeEnabled: true))
        #expect(scheduler.nextWakeUp() == 900, "a change of conditions looks at the deferred app again")
        #expect(decide(at: 1100) == ["Wifi:low-power-mode"])
        scheduler.setConditions(FetchConditions(hasFullConnectivity: false))
        #expect(decide(at: 1200) == ["Wifi:no-full-connectivity"])
        scheduler.setConditions(FetchConditions(isLowBattery: true))
        #expect(decide(at: 1300) == ["Wifi:low-battery"])
        scheduler.setConditions(FetchConditions(isThermalStateSeriousOrAbove: true))
        #expect(decide(at: 1400) == ["Wifi:thermal-state"])
        scheduler.setConditions(.unknown)
        #expect(decide(at: 1500) == ["Wifi:run"], "unknown conditions block nothing")
        scheduler.completed("org.example.Wifi", result: .newData, now: 1500)

        scheduler.setBackgroundRefresh("org.example.Wifi", enabled: false)
        // Joined to the other app's fetch after next (1800 + 900), within half an interval.
        #expect(scheduler.nextDue("org.example.Wifi") == 2700)
        #expect(decide(at: 2500) == ["Cell:run"])
        scheduler.completed("org.example.Cell", result: .newData, now: 2500)
        #expect(decide(at: 2700) == ["Wifi:background-refresh-denied"])
        scheduler.setConditions(FetchConditions(isMetered: false))
        #expect(decide(at: 2750).isEmpty, "conditions do not lift the user's switch")
        scheduler.setBackgroundRefresh("org.example.Wifi", enabled: true)
        #expect(decide(at: 2800) == ["Wifi:run"])
        #expect(
            scheduler.decisions.compactMap(\.deferral) == [
                .meteredNetwork, .lowPowerMode, .noFullConnectivity, .lowBattery, .thermalState,
                .backgroundRefreshDenied,
            ])
    }

    @Test("out of range from the bus or the file: a huge interval is never, huge counts and due times are bounded")
    func outOfRange() throws {
        var scheduler = FetchScheduler()
        scheduler.setManifest("org.example.A", declaresFetch: true, allowsMeteredNetwork: false)
        // An interval beyond ten years (a bad app) is never, not a due time the loop cannot hold.
        scheduler.setInterval("org.example.A", seconds: 1e13, now: 100)
        #expect(scheduler.nextDue("org.example.A") == nil)
        scheduler.setInterval("org.example.A", seconds: FetchScheduler.maximumInterval, now: 100)
        #expect(scheduler.nextDue("org.example.A") == 100 + FetchScheduler.maximumInterval)

        let now = 1_800_000_000.0
        let file = Data(
            """
            {"version": 1, "apps": {
              "org.example.Huge": {"interval": 1e300, "nextDue": 1e300, "noDataInARow": 0, "failuresInARow": 0},
              "org.example.Far": {"interval": 900, "nextDue": 1e300, "noDataInARow": 0, "failuresInARow": 0},
              "org.example.Many": {"interval": 900, "nextDue": \(now), "noDataInARow": \(Int.max),
                                   "failuresInARow": \(Int.max)}},
             "backgroundRefreshDenied": []}
            """.utf8)
        var loaded = try FetchScheduleFile.decode(file, now: now)
        #expect(loaded.apps["org.example.Huge"] == nil, "an interval beyond ten years is dropped")
        #expect(loaded.apps["org.example.Many"]?.failuresInARow == FetchScheduler.maximumCount)
        // A failure on top of the most counted: no overflow, and the backoff is bounded (5 h).
        for id in ["org.example.Far", "org.example.Many"] {
            loaded.setManifest(id, declaresFetch: true, allowsMeteredNetwork: true)
        }
        #expect(loaded.nextDue("org.example.Far") == now, "a due time beyond ten years is due now")
        let started = loaded.runNow("org.example.Many", now: now)
        #expect(started)
        let ended = loaded.completed("org.example.Many", result: .failed, now: now)
        #expect(ended)
        let next = try #require(loaded.nextDue("org.example.Many"))
        #expect(next <= now + 900 * 2 + 5 * 3600)
        #expect(loaded.apps["org.example.Many"]?.failuresInARow == FetchScheduler.maximumCount)
    }

    @Test("the file: a round trip keeps the schedule; a running fetch is due at once; a corrupt file is set aside")
    func file() throws {
        var scheduler = FetchScheduler()
        scheduler.setManifest("org.example.A", declaresFetch: true, allowsMeteredNetwork: true)
        scheduler.setManifest("org.example.B", declaresFetch: true, allowsMeteredNetwork: false)
        scheduler.setInterval("org.example.A", seconds: 1800, now: 1000)
        scheduler.setInterval("org.example.B", seconds: 900, now: 1000)
        _ = scheduler.wakeUp(now: 1900)
        scheduler.completed("org.example.B", result: .noData, now: 1900)
        _ = scheduler.runNow("org.example.A", now: 2000)
        scheduler.setBackgroundRefresh("org.example.B", enabled: false)
        let read = try FetchScheduleFile.decode(FetchScheduleFile.encode(scheduler), now: 5000)
        #expect(read.apps["org.example.B"]?.interval == 900)
        #expect(
            read.apps["org.example.B"]?.nextDue == 3250,
            "\(String(describing: read.apps["org.example.B"]?.nextDue?.bitPattern))")
        #expect(read.apps["org.example.B"]?.noDataInARow == 1)
        #expect(read.apps["org.example.A"]?.nextDue == 2000, "the running fetch is due again")
        #expect(read.backgroundRefreshDenied == ["org.example.B"])
        #expect(read.apps["org.example.A"]?.declaresFetch == false, "the manifest says it again at start")

        let directory = try TemporaryDirectory(prefix: "fetch-schedule")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path + "/" + FetchScheduleFile.name)
        try Data("{\"version\": 1, \"apps\": [".utf8).write(to: url)
        let loaded = FetchScheduleFile.load(from: url, now: 0, logger: Logger(label: "test"))
        #expect(loaded.apps.isEmpty)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!names.contains(FetchScheduleFile.name))
        #expect(names.contains { $0.hasPrefix(FetchScheduleFile.name + ".corrupt-") }, "\(names)")

        // Entries a hand or a bug wrote wrong are dropped, the rest kept.
        let bad =
            #"{"version":1,"apps":{"not an id":{"interval":900,"nextDue":1,"noDataInARow":0,"failuresInARow":0},"org.example.C":{"interval":-5,"nextDue":1,"noDataInARow":0,"failuresInARow":0},"org.example.D":{"interval":60,"nextDue":7,"noDataInARow":0,"failuresInARow":0}},"backgroundRefreshDenied":["bad id"]}"#
        let partial = try FetchScheduleFile.decode(Data(bad.utf8), now: 0)
        #expect(Set(partial.apps.keys) == ["org.example.D"])
        #expect(partial.apps["org.example.D"]?.interval == FetchScheduler.minimumInterval)
        #expect(partial.backgroundRefreshDenied.isEmpty)
    }
}
