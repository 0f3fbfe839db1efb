import AppLifecycle
import SystemdBus

/// lifecycled's background-fetch schedule: pure logic over a clock it is told, never one it reads.
///
/// Each app whose manifest declares the `fetch` background mode and that asked for an interval
/// (`setMinimumBackgroundFetchInterval(_:)`) has a next due time. Times are seconds on the fetch
/// clock (Unix time in the daemon, so a schedule survives a restart and a reboot; any origin in tests).
///
/// **Floor.** An interval below ``minimumInterval`` (15 minutes, iOS's practice; UIKit's
/// `backgroundFetchIntervalMinimum`, 0, means "as often as allowed") is raised to it; a fetch never
/// runs before its due time, so an app is never fetched more often than it asked.
///
/// **Coalescing.** Two rules, so that twenty apps with a 15-minute interval cost about four
/// wake-ups an hour, not eighty (`lifecycle-bench fetch` measures it):
/// - *Windows.* An app due at `d` may wait up to its window, `w = min(interval / 3, 5 min)`: it
///   runs at the first shared wake-up in `[d, d + w]`. The scheduler wakes for the batch of the
///   earliest due apps whose windows all overlap (sorted by due time, as long as the next one is
///   due before every window so far has closed), at the last due time in it, and runs every app
///   due by then (AlarmManager's batching of inexact alarms).
/// - *Joining.* When a fetch ends, the app's next due time (the result rule's) is put off, by at
///   most half its interval (a whole interval after a failure, which is backed off anyway), to the
///   nearest fetch already planned for another app at or after it (that app's next due time, or
///   the one after: its due time plus its interval). Apps that ran
///   together are next due together; staggered apps join one another within a few intervals
///   and then keep one wake-up per interval.
///
/// **Result rule** (the next due time, from when the fetch ended):
/// - `newData`: after one interval; the no-data and failure counts reset.
/// - `noData`: later, as iOS learns an app's rhythm: 1.5 intervals after the first no-data in a
///   row, 2 after the second and after (capped at twice the interval).
/// - `failed` (or not completed in time: the app was ended): one interval plus the next delay of
///   a ``Backoff`` from 30 s doubling up to 5 h (WorkManager's exponential backoff): never sooner
///   than the interval the app asked for, later with each failure in a row.
///
/// **Conditions.** At a wake-up, a due app runs unless the user denied it background refresh or
/// ``FetchConditions/deferral(allowsMeteredNetwork:)`` says why not; a deferred app keeps its due
/// time and waits, without wake-ups of its own, until the conditions or the switch change, then
/// runs at once. Every decision is kept (``decisions``) for tests and `lifecyclectl apps`.
package struct FetchScheduler: Sendable {
    /// The shortest interval between two fetches of an app: 15 minutes.
    package static let minimumInterval: Double = 15 * 60
    /// The longest interval, and the furthest a due time may lie ahead: ten years. A longer one
    /// is never (an app's `Double.greatestFiniteMagnitude` or any huge value, from the bus or the
    /// file), so every time the scheduler hands out converts to the loop's microseconds.
    package static let maximumInterval: Double = 10 * 365 * 24 * 3600
    /// The most results in a row that still change the delay (the noData rule caps at 2, the
    /// failure backoff at 5 h long before this); counts are kept no higher.
    package static let maximumCount = 64
    /// The longest coalescing window: 5 minutes.
    package static let maximumWindow: Double = 5 * 60
    /// The failure backoff's first and longest delays.
    package static let failureBackoff = Backoff(initial: .seconds(30), maximum: .seconds(5 * 3600))
    /// How many decisions ``decisions`` keeps (the oldest go first).
    package static let keptDecisions = 4096

    /// One app's schedule.
    package struct App: Sendable, Hashable, Codable {
        /// Seconds between fetches at least (already raised to ``minimumInterval``); `nil`: never.
        package var interval: Double?
        /// When the next fetch is due, or `nil` (never, or a fetch is running).
        package var nextDue: Double?
        /// No-data results in a row.
        package var noDataInARow = 0
        /// Failures in a row.
        package var failuresInARow = 0
        /// Whether its manifest declares `fetch` (not kept on disk: the manifest says it at each start).
        package var declaresFetch = false
        /// Whether its manifest accepts a metered network (not kept on disk either).
        package var allowsMeteredNetwork = false
        /// When the running fetch started, while one runs.
        package var runningSince: Double?
        /// Why its due fetch waits, while it waits for the conditions or the user.
        package var deferral: FetchDeferral?

        /// An app with no schedule yet.
        package init() {}

        enum CodingKeys: String, CodingKey {
            case interval, nextDue, noDataInARow, failuresInARow
        }
    }

    /// Every app with a schedule or a manifest entry, by id.
    package private(set) var apps: [String: App] = [:]
    /// The apps whose background refresh the user turned off.
    package private(set) var backgroundRefreshDenied: Set<String> = []
    /// The conditions as last told.
    package private(set) var conditions = FetchConditions.unknown
    /// The decisions made, oldest first (at most ``keptDecisions``).
    package private(set) var decisions: [FetchDecision] = []

    /// An empty schedule.
    package init() {}

    /// A schedule as it was saved (``FetchScheduleFile``).
    package init(apps: [String: App], backgroundRefreshDenied: Set<String>) {
        self.apps = apps
        self.backgroundRefreshDenied = backgroundRefreshDenied
    }

    /// The coalescing window of an interval: a third of it, at most ``maximumWindow``.
    package static func window(for interval: Double) -> Double { min(interval / 3, maximumWindow) }

    // MARK: What the daemon tells it

    /// What an app's manifest says: whether it declares `fetch`, and whether a metered network will do.
    package mutating func setManifest(_ id: String, declaresFetch: Bool, allowsMeteredNetwork: Bool) {
        apps[id, default: App()].declaresFetch = declaresFetch
        apps[id, default: App()].allowsMeteredNetwork = allowsMeteredNetwork
    }

    /// The app's `setMinimumBackgroundFetchInterval(_:)`. The same interval again keeps the due
    /// time (an app re-reports it at each launch); a new one is due one interval from now;
    /// ``Application/backgroundFetchIntervalNever`` (or any value above ``maximumInterval``, or not
    /// finite) unschedules it.
    ///
    /// - Returns: Whether the schedule changed (to be saved).
    @discardableResult
    package mutating func setInterval(_ id: String, seconds: Double, now: Double) -> Bool {
        let interval: Double? =
            seconds.isFinite && seconds <= Self.maximumInterval ? max(seconds, Self.minimumInterval) : nil
        var app = apps[id, default: App()]
        guard app.interval != interval || (interval != nil && app.nextDue == nil && app.runningSince == nil) else {
            return false
        }
        app.interval = interval
        app.nextDue = interval.map { now + $0 }
        app.deferral = nil
        apps[id] = app
        return true
    }

    /// The user's background-refresh switch for an app.
    ///
    /// - Returns: Whether it changed.
    @discardableResult
    package mutating func setBackgroundRefresh(_ id: String, enabled: Bool) -> Bool {
        let changed = enabled ? backgroundRefreshDenied.remove(id) != nil : backgroundRefreshDenied.insert(id).inserted
        if changed, enabled, apps[id]?.deferral == .backgroundRefreshDenied { apps[id]?.deferral = nil }
        return changed
    }

    /// New conditions: the apps deferred for a reason that no longer holds wait no more.
    package mutating func setConditions(_ conditions: FetchConditions) {
        self.conditions = conditions
        for (id, app) in apps where app.deferral != nil && app.deferral != .backgroundRefreshDenied {
            apps[id]?.deferral = nil
        }
    }

    /// Whether an app may be fetched at all: its manifest declares `fetch` and it has an interval.
    package func isScheduled(_ id: String) -> Bool {
        guard let app = apps[id] else { return false }
        return app.declaresFetch && app.interval != nil
    }

    // MARK: Wake-ups

    /// When the daemon should wake next: the last due time of the first batch of waiting apps (not
    /// running, not deferred) whose windows overlap, or `nil` when none waits.
    package func nextWakeUp() -> Double? {
        let waiting = apps.values.compactMap { app -> (due: Double, end: Double)? in
            guard app.declaresFetch, let interval = app.interval, let due = app.nextDue, app.runningSince == nil,
                app.deferral == nil
            else { return nil }
            return (due, due + Self.window(for: interval))
        }.sorted { $0.due < $1.due }
        guard var wake = waiting.first?.due, var closes = waiting.first?.end else { return nil }
        for app in waiting.dropFirst() {
            guard app.due <= closes else { break }
            wake = app.due
            closes = min(closes, app.end)
        }
        return wake
    }

    /// When an app's next fetch is due, or `nil`.
    package func nextDue(_ id: String) -> Double? {
        guard isScheduled(id) else { return nil }
        return apps[id]?.nextDue
    }

    /// A wake-up at `now`: every scheduled app due by `now` that is not running is decided, in id
    /// order. Those that run are marked running (the daemon sends them `background-fetch` and calls
    /// ``completed(_:result:now:)`` when they finish); the others keep their due time, deferred.
    ///
    /// - Returns: This wake-up's decisions.
    package mutating func wakeUp(now: Double) -> [FetchDecision] {
        var made: [FetchDecision] = []
        for id in apps.keys.sorted() {
            guard let app = apps[id], app.declaresFetch, app.interval != nil, let due = app.nextDue, due <= now,
                app.runningSince == nil
            else { continue }
            let deferral =
                backgroundRefreshDenied.contains(id)
                ? .backgroundRefreshDenied : conditions.deferral(allowsMeteredNetwork: app.allowsMeteredNetwork)
            if let deferral {
                // Decided once per reason: a deferred app is not looked at again until something changes.
                if app.deferral != deferral { made.append(FetchDecision(appID: id, time: now, deferral: deferral)) }
                apps[id]?.deferral = deferral
                continue
            }
            made.append(FetchDecision(appID: id, time: now, deferral: nil))
            apps[id]?.deferral = nil
            apps[id]?.runningSince = now
            apps[id]?.nextDue = nil
        }
        record(made)
        return made
    }

    /// Runs one fetch of an app now, whatever its schedule and the conditions (`lifecyclectl fetch`).
    ///
    /// - Returns: `false` when a fetch of it is running already.
    package mutating func runNow(_ id: String, now: Double) -> Bool {
        guard apps[id]?.runningSince == nil else { return false }
        apps[id, default: App()].runningSince = now
        apps[id]?.deferral = nil
        record([FetchDecision(appID: id, time: now, deferral: nil)])
        return true
    }

    /// Whether a fetch of the app is running.
    package func isRunning(_ id: String) -> Bool { apps[id]?.runningSince != nil }

    /// A fetch ended with `result` at `now` (`failed` also when the app did not complete in time
    /// or exited meanwhile); the next due time follows the result rule (see the type).
    ///
    /// - Returns: Whether a fetch was running (and the schedule changed).
    @discardableResult
    package mutating func completed(_ id: String, result: BackgroundFetchResult, now: Double) -> Bool {
        guard var app = apps[id], app.runningSince != nil else { return false }
        app.runningSince = nil
        switch result {
        case .newData:
            app.noDataInARow = 0
            app.failuresInARow = 0
        case .noData:
            app.noDataInARow = min(app.noDataInARow, Self.maximumCount - 1) + 1
            app.failuresInARow = 0
        case .failed:
            app.failuresInARow = min(app.failuresInARow, Self.maximumCount - 1) + 1
        }
        app.nextDue = app.interval.map { interval in
            joined(
                id, at: now + Self.delay(after: result, of: app, interval: interval),
                reach: result == .failed ? interval : interval / 2)
        }
        apps[id] = app
        return true
    }

    /// The joining rule: the nearest fetch planned for another app in `[due, due + reach]` (its next
    /// due time, or that plus its interval), else `due`.
    func joined(_ id: String, at due: Double, reach: Double) -> Double {
        let limit = due + reach
        var best: Double?
        for (other, app) in apps where other != id && app.declaresFetch {
            guard let planned = app.nextDue, let otherInterval = app.interval else { continue }
            for candidate in [planned, planned + otherInterval] where candidate >= due && candidate <= limit {
                best = min(best ?? candidate, candidate)
            }
        }
        return best ?? due
    }

    /// The result rule: seconds from a fetch's end to the next, for an app whose counts already
    /// include this result.
    package static func delay(after result: BackgroundFetchResult, of app: App, interval: Double) -> Double {
        switch result {
        case .newData:
            return interval
        case .noData:
            return interval * min(1 + 0.5 * Double(app.noDataInARow), 2)
        case .failed:
            var backoff = failureBackoff
            var delay = Duration.zero
            for _ in 0..<min(max(app.failuresInARow, 1), maximumCount) { delay = backoff.next() }
            let (seconds, attoseconds) = delay.components
            return interval + Double(seconds) + Double(attoseconds) / 1e18
        }
    }

    /// Forgets an app's schedule (its manifest went away).
    package mutating func remove(_ id: String) {
        apps[id] = nil
    }

    private mutating func record(_ made: [FetchDecision]) {
        decisions.append(contentsOf: made)
        if decisions.count > Self.keptDecisions { decisions.removeFirst(decisions.count - Self.keptDecisions) }
    }
}
