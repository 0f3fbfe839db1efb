import AppLifecycle
import DurableState
import FetchScheduling
import FoundationEssentials
import SystemdBus

/// Background fetch of the one app ``SystemdHost`` runs, by lifecycled's rules: the same
/// ``FetchScheduler`` (floor, coalescing window, result rule, conditions), driven here for one app.
///
/// - **Which app is fetched.** There is no manifest without lifecycled, so no `fetch` background
///   mode to declare: the app is scheduled once it asks for an interval other than
///   ``Application/backgroundFetchIntervalNever`` (`setMinimumBackgroundFetchInterval(_:)`, which
///   an app calls at each launch), and unscheduled when it asks for never. A metered network is
///   not acceptable to it (a manifest's `allowsMeteredNetwork` has no counterpart here).
/// - **When.** One `CLOCK_REALTIME` timer on the bridge's event loop, armed at the scheduler's next
///   wake-up. When it fires and the device's conditions allow (`FetchConditions` of the bridge's
///   ``HostBridge/deviceConditions``, followed live), the app gets ``HostEvent/backgroundFetch``
///   and so `application(_:performFetchWithCompletionHandler:)` with 30 s; the result it posts
///   (``Application/performFetchNotification``) feeds the result rule when its fetch task ends
///   (no result: `noData`, the app does not fetch). A fetch deferred by the conditions runs as
///   soon as they change to allow it. The app runs only while this process does: nothing launches
///   it for a fetch (lifecycled does).
/// - **Kept.** The schedule is in the app's state directory (``FetchScheduleFile`` in
///   `$STATE_DIRECTORY`, else `$XDG_STATE_HOME/<app id>`, as the local-notification schedule),
///   written through one `GroupCommitFile`; in memory only when there is none. Asking again for the
///   interval it had keeps the due time, so the schedule survives a restart. A fetch that is
///   running is written as failed: an app that overruns its 30 s ends its process, and its next
///   start must not fetch again at once.
/// - **Background refresh status.** The bridge's: restricted while Low Power Mode is on, else
///   available. There is no per-app switch to deny it without lifecycled
///   (`lifecyclectl background-refresh APP off`).
extension SystemdHost {
    /// The background fetch of the one app: the scheduler, its clock, file and timer, the fetch running.
    struct BackgroundFetch {
        var scheduler = FetchScheduler()
        /// The wall clock, plus what a test moved it by (``SystemdHost/advanceFetchClock(by:)``).
        var clock = FetchClock()
        /// The writer of `fetch-schedule.json` in the app's state directory (`nil`: memory only).
        var file: GroupCommitFile?
        let timer = FetchTimer()
        /// The app's fetch task (``Application/backgroundFetchTaskName``) while its fetch runs.
        var task: BackgroundTaskIdentifier?
        /// The result the running fetch posted.
        var result: BackgroundFetchResult?
        var resultObservation: NotificationObservation?
    }

    /// The app's next fetch time (Unix seconds on the fetch clock), or `nil`.
    package var nextBackgroundFetch: Double? {
        application.flatMap { fetch.scheduler.nextDue($0.configuration.applicationIdentifier) }
    }

    /// The scheduler's decisions so far, oldest first.
    package var backgroundFetchDecisions: [FetchDecision] { fetch.scheduler.decisions }

    /// The test clock: moves the fetch clock forward by `seconds` (finite, not negative) and
    /// re-arms the timer, so a test runs a 15-minute interval in a call. Package-level: no app
    /// outside this package reaches it, so in production the fetch clock is the wall clock.
    package func advanceFetchClock(by seconds: Double) {
        fetch.clock.advance(by: seconds)
        armFetchTimer()
    }

    /// Loads the schedule from the app's state directory and starts following the device's conditions.
    func startBackgroundFetch(for application: Application) {
        let id = application.configuration.applicationIdentifier
        if let directory = Self.stateDirectory(appID: id, environment: bridge.configuration.environment) {
            let url = URL(fileURLWithPath: directory).appendingPathComponent(FetchScheduleFile.name)
            fetch.file = GroupCommitFile(url: url, logger: logger)
            fetch.scheduler = FetchScheduleFile.load(from: url, now: fetch.clock.now, logger: logger)
        }
        // Not fetched until the app asks for an interval this run (the saved one is kept until then).
        fetch.scheduler.setManifest(id, declaresFetch: false, allowsMeteredNetwork: false)
        fetch.scheduler.setConditions(FetchConditions(bridge.deviceConditions))
        fetch.resultObservation = application.notificationCenter.addObserver(
            for: Application.PerformFetchMessage.self, object: application
        ) { [weak self] message in
            guard let self, self.fetch.task != nil else { return }
            self.fetch.result = message.result
        }
    }

    func stopBackgroundFetch() {
        fetch.timer.disarm()
        fetch.resultObservation = nil
    }

    /// New conditions from the bridge: a fetch they deferred runs now if they allow it.
    func deviceConditionsChanged(_ conditions: FetchConditions) {
        guard conditions != fetch.scheduler.conditions else { return }
        fetch.scheduler.setConditions(conditions)
        logger.info("fetch conditions: \(conditions)")
        armFetchTimer()
    }

    /// Schedules the app's fetches at this interval (never: unschedules them), and saves the schedule.
    public func application(
        _ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval
    ) {
        backgroundFetchInterval = interval
        let id = application.configuration.applicationIdentifier
        fetch.scheduler.setManifest(
            id, declaresFetch: interval != Application.backgroundFetchIntervalNever, allowsMeteredNetwork: false)
        let changed = fetch.scheduler.setInterval(id, seconds: interval, now: fetch.clock.now)
        logger.info(
            "background fetch \(fetch.scheduler.nextDue(id).map { "due at \(Int($0.rounded())) (Unix time)" } ?? "never")"
        )
        armFetchTimer()
        if changed { saveFetchSchedule() }
    }

    /// Notes the app's fetch task when a fetch of the scheduler's runs.
    public func application(
        _ application: Application, didBeginBackgroundTask identifier: BackgroundTaskIdentifier, name: String?
    ) {
        guard name == Application.backgroundFetchTaskName, fetch.task == nil,
            fetch.scheduler.isRunning(application.configuration.applicationIdentifier)
        else { return }
        fetch.task = identifier
    }

    /// The fetch task ended: the fetch's result (or `noData`) sets the next fetch time.
    public func application(_ application: Application, didEndBackgroundTask identifier: BackgroundTaskIdentifier) {
        guard identifier == fetch.task else { return }
        finishFetch(result: fetch.result ?? .noData)
    }

    // MARK: The timer

    /// Arms the one fetch timer at the scheduler's next wake-up (at once when it is past), or
    /// cancels it when nothing waits.
    func armFetchTimer() {
        let running = application.map { $0.applicationState != .notRunning } ?? false
        fetch.timer.arm(at: fetch.scheduler.nextWakeUp(), clock: fetch.clock, on: running ? bridge.loop : nil) {
            [weak self] in
            self?.fetchWakeUp()
        }
    }

    /// The timer fired: the app's fetch runs if it is due and the conditions allow it.
    func fetchWakeUp() {
        let decisions = fetch.scheduler.wakeUp(now: fetch.clock.now)
        for decision in decisions {
            if let deferral = decision.deferral {
                logger.info("background fetch deferred: \(deferral.rawValue)")
                continue
            }
            guard let application, application.applicationState != .notRunning else {
                fetch.scheduler.completed(decision.appID, result: .failed, now: fetch.clock.now)
                continue
            }
            logger.info("background fetch")
            fetch.task = nil
            fetch.result = nil
            application.handle(.backgroundFetch)
        }
        armFetchTimer()
        if !decisions.isEmpty { saveFetchSchedule() }
    }

    private func finishFetch(result: BackgroundFetchResult) {
        fetch.task = nil
        fetch.result = nil
        guard let id = application?.configuration.applicationIdentifier,
            fetch.scheduler.completed(id, result: result, now: fetch.clock.now)
        else { return }
        logger.info(
            "background fetch ended (\(result.rawValue)); next at \(fetch.scheduler.nextDue(id).map { "\(Int($0.rounded())) (Unix time)" } ?? "never")"
        )
        armFetchTimer()
        saveFetchSchedule()
    }

    /// Writes the schedule (group-committed); a running fetch is written as failed (see the type).
    func saveFetchSchedule() {
        guard let file = fetch.file else { return }
        Task { @MainActor in
            await file.persist {
                var saved = self.fetch.scheduler
                for (id, app) in saved.apps where app.runningSince != nil {
                    saved.completed(id, result: .failed, now: self.fetch.clock.now)
                }
                return FetchScheduleFile.encode(saved)
            }
        }
    }
}
