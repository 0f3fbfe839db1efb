import AppLifecycle
import DurableState
import FetchScheduling
import FoundationEssentials
import LifecycledProtocol
import SystemdBus

/// Background fetch: lifecycled drives ``FetchScheduler`` for the apps whose manifest declares
/// `fetch`.
///
/// An app asks for an interval (`SetMinimumBackgroundFetchInterval`, from
/// `setMinimumBackgroundFetchInterval(_:)`); the schedule is saved in the state directory
/// (``FetchScheduleFile``, through its one `GroupCommitFile`) before the call is answered, so next
/// fetch times survive a restart. One `CLOCK_REALTIME` timer on the event loop is armed at the
/// scheduler's next wake-up. When it fires, each app that runs is thawed (or launched in the
/// background: `launchedInBackground`, the `background-fetch` command queued until it registers)
/// and sent `background-fetch`. The app reports its fetch's completion through the background
/// task it holds meanwhile (named ``Application/backgroundFetchTaskName``) and its result through
/// the `performFetchNotification` it posts; it then suspends and is frozen again as any app. An
/// app that has not completed ``fetchDeadline`` plus ``fetchGrace`` after it was sent the fetch
/// is ended with `SIGKILL` (the app ends itself at the deadline; this is for one that cannot),
/// and its result counts as `failed`.
extension LifecycleDaemon {
    /// How long a fetch has to complete: the seeds' 30 s.
    static let fetchDeadline: Double = 30
    /// How long after ``fetchDeadline`` lifecycled waits for the app to end itself before `SIGKILL`.
    static let fetchGrace: Double = 5

    /// The schedule's file.
    var fetchScheduleURL: URL {
        URL(fileURLWithPath: stateDirectory).appendingPathComponent(FetchScheduleFile.name)
    }

    /// Reads the schedule and tells it every manifest's `fetch` and `allowsMeteredNetwork` (at start).
    func loadFetchSchedule() {
        fetchScheduler = FetchScheduleFile.load(from: fetchScheduleURL, now: fetchClock.now, logger: logger)
        for manifest in store.manifests {
            fetchScheduler.setManifest(
                manifest.id, declaresFetch: Self.fetches(manifest), allowsMeteredNetwork: manifest.allowsMeteredNetwork)
        }
    }

    /// Whether lifecycled fetches for an app: its manifest declares `fetch`, and it adopts
    /// AppLifecycle (a plain program hears no `background-fetch`).
    static func fetches(_ manifest: AppManifest) -> Bool {
        manifest.backgroundModes.contains(.fetch) && manifest.adoptsLifecycle
    }

    /// Saves the schedule (group-committed); `false` when it could not be written (logged by the writer).
    @discardableResult
    func saveFetchSchedule() async -> Bool {
        await fetchScheduleFile.persist { [weak self] in
            self.map { FetchScheduleFile.encode($0.fetchScheduler) } ?? Data()
        }
    }

    // MARK: Methods

    /// `SetMinimumBackgroundFetchInterval(app_id, interval)` from the registered app: scheduled
    /// (and saved) if its manifest declares `fetch`; logged and ignored otherwise, as iOS ignores
    /// the call of an app without the background mode.
    func setMinimumBackgroundFetchInterval(_ call: BusMethodCall, _ id: String, _ seconds: Double)
        async throws(BusError)
    {
        guard !seconds.isNaN, seconds >= 0 else {
            throw DaemonError.invalidArgs("the interval must be a number of seconds, 0 or more")
        }
        _ = try registeredApp(id, call)
        guard let manifest = store.manifest(id: id), Self.fetches(manifest) else {
            logger.info(
                "\(id) asked for background fetches but its manifest does not declare the fetch background mode",
                metadata: .app(id))
            return
        }
        guard fetchScheduler.setInterval(id, seconds: seconds, now: fetchClock.now) else { return }
        logger.info(
            "\(id): background fetch \(fetchScheduler.nextDue(id).map { "due at \(Self.describe($0))" } ?? "never")",
            metadata: .app(id))
        armFetchTimer()
        await saveFetchSchedule()
        publishApps()
    }

    /// `PerformFetch(app_id)`: one fetch now, whatever the schedule and the conditions (as Xcode's
    /// "simulate background fetch"); the app's manifest must declare `fetch`.
    func performFetch(_ id: String) async throws(BusError) {
        guard let manifest = store.manifest(id: id) else {
            throw registry[id] == nil
                ? DaemonError.unknownApp(id)
                : DaemonError.launchFailed(id, "it has no manifest (it registered by itself)")
        }
        guard Self.fetches(manifest) else {
            throw DaemonError.invalidArgs(
                "\(id)'s manifest does not declare the fetch background mode (or the app does not adopt AppLifecycle)")
        }
        guard fetchScheduler.runNow(id, now: fetchClock.now) else {
            throw BusError(name: BusError.Name.failed, message: "a background fetch of \(id) is running already")
        }
        do {
            try await startFetch(id)
        } catch {
            // Not started (the launch failed): a failed fetch, not one left running.
            await finishFetch(id, result: .failed)
            throw error
        }
    }

    /// `SetBackgroundRefresh(app_id, enabled)`: the user's switch, saved before it is applied.
    func setBackgroundRefresh(_ id: String, _ enabled: Bool) async throws(BusError) {
        guard store.manifest(id: id) != nil || registry[id] != nil else { throw DaemonError.unknownApp(id) }
        guard fetchScheduler.setBackgroundRefresh(id, enabled: enabled) else { return }
        guard await saveFetchSchedule() else {
            fetchScheduler.setBackgroundRefresh(id, enabled: !enabled)
            throw BusError(
                name: BusError.Name.failed,
                message: "cannot write \(fetchScheduleURL.path); free space on that disk and try again")
        }
        logger.info("\(id): background refresh \(enabled ? "on" : "off")", metadata: .app(id))
        armFetchTimer()
        publishApps()
        // The app hears its own status (UIApplicationBackgroundRefreshStatusDidChangeNotification).
        let lowPowerMode = bridge?.deviceConditions.isLowPowerModeEnabled == true
        await send(
            .hostEvent(.backgroundRefreshStatus(backgroundRefreshStatus(for: id, lowPowerMode: lowPowerMode))), to: id)
    }

    /// New conditions (the host's sources, or `Simulate("fetch-conditions")`): deferred fetches are
    /// looked at again.
    func setFetchConditions(_ conditions: FetchConditions) {
        guard conditions != fetchScheduler.conditions else { return }
        fetchScheduler.setConditions(conditions)
        logger.info("fetch conditions: \(conditions)")
        armFetchTimer()
    }

    /// `Simulate("fetch-clock")`: the test clock moves forward; what came due runs, and fetches
    /// past their deadline are ended.
    func advanceFetchClock(by seconds: Double) {
        fetchClock.advance(by: seconds)
        logger.info("fetch clock advanced by \(seconds) s")
        endOverrunFetches()
        armFetchTimer()
    }

    // MARK: The timer

    /// Arms the one fetch timer at the scheduler's next wake-up (at once when it is past), or
    /// cancels it when nothing waits.
    func armFetchTimer() {
        fetchTimer.arm(
            at: fetchScheduler.nextWakeUp(), clock: fetchClock, on: phase == .running ? loop : nil
        ) { [weak self] in
            await self?.fetchWakeUp()
        }
    }

    /// The timer fired: every due app is decided; those that run get their fetch.
    func fetchWakeUp() async {
        let decisions = fetchScheduler.wakeUp(now: fetchClock.now)
        for decision in decisions {
            if let deferral = decision.deferral {
                logger.info(
                    "\(decision.appID): background fetch deferred: \(deferral.rawValue)", metadata: .app(decision.appID)
                )
                continue
            }
            do {
                try await startFetch(decision.appID)
            } catch {
                logger.warning(
                    "\(decision.appID): background fetch not started: \(error)", metadata: .app(decision.appID))
                fetchScheduler.completed(decision.appID, result: .failed, now: fetchClock.now)
            }
        }
        armFetchTimer()
        if !decisions.isEmpty { await saveFetchSchedule() }
        publishApps()
    }

    // MARK: One fetch

    /// Sends the app `background-fetch` (resuming it if frozen), or launches it in the background
    /// with the command queued; arms the deadline.
    func startFetch(_ id: String) async throws(BusError) {
        logger.info("\(id): background fetch", metadata: .app(id))
        fetchResults[id] = nil
        let app = registry[id]
        if app?.isRegistered == true || app?.isRunning == true {
            await send(.hostEvent(.backgroundFetch), to: id)
        } else {
            guard let manifest = store.manifest(id: id) else { throw DaemonError.unknownApp(id) }
            var options = LaunchOptions()
            options.launchedInBackground = true
            try launch(manifest, options: options)
            await send(.hostEvent(.backgroundFetch), to: id)
        }
        let wait = Self.fetchDeadline + Self.fetchGrace
        fetchWatchdogs[id]?.cancel()
        fetchWatchdogs[id] = Task { @MainActor [weak self] in
            try? await Task.sleep(for: .seconds(wait))
            guard !Task.isCancelled else { return }
            self?.endOverrunFetches()
        }
    }

    /// The app posted `performFetchNotification` with its result (the completion follows).
    func fetchResultReported(_ id: String, _ userInfo: UserInfo) {
        guard fetchScheduler.isRunning(id), let message = Application.PerformFetchMessage(userInfo: userInfo) else {
            return
        }
        fetchResults[id] = message.result
    }

    /// A background task of the app ended; the fetch's own one completes the fetch.
    func fetchTaskEnded(_ id: String, name: String?) async {
        guard name == Application.backgroundFetchTaskName, fetchScheduler.isRunning(id) else { return }
        // No result posted: the app does not implement the fetch method, so nothing was fetched.
        await finishFetch(id, result: fetchResults[id] ?? .noData)
    }

    /// The app's process exited, or its registration ended, during its fetch: a failed fetch.
    func fetchAppGone(_ id: String) async {
        guard fetchScheduler.isRunning(id) else { return }
        await finishFetch(id, result: .failed)
    }

    /// Ends, with `SIGKILL`, every app whose fetch has run past its deadline and grace on the
    /// fetch clock; each counts as a failed fetch.
    func endOverrunFetches() {
        let now = fetchClock.now
        for (id, app) in fetchScheduler.apps {
            guard let since = app.runningSince, now - since >= Self.fetchDeadline + Self.fetchGrace else { continue }
            logger.notice(
                "\(id): background fetch not completed within \(Int(Self.fetchDeadline)) s; ending the app",
                metadata: .app(id))
            if let process = registry[id]?.process, process.exitStatus == nil {
                process.killNow(reason: "background fetch not completed in time")
            }
            Task { @MainActor [weak self] in await self?.finishFetch(id, result: .failed) }
        }
    }

    private func finishFetch(_ id: String, result: BackgroundFetchResult) async {
        fetchWatchdogs.removeValue(forKey: id)?.cancel()
        fetchResults[id] = nil
        guard fetchScheduler.completed(id, result: result, now: fetchClock.now) else { return }
        logger.info(
            "\(id): background fetch ended (\(result.rawValue)); next at \(fetchScheduler.nextDue(id).map(Self.describe) ?? "never")",
            metadata: .app(id))
        armFetchTimer()
        await saveFetchSchedule()
        publishApps()
    }

    /// What `DescribeApps` says of an app's fetches: its next due time (Unix seconds on the fetch
    /// clock), whether one runs, why its due fetch waits, and the user's switch.
    func fetchDescription(_ id: String) -> UserInfo {
        var info: UserInfo = [:]
        if let due = fetchScheduler.nextDue(id) { info["next-fetch"] = .double(due) }
        if fetchScheduler.isRunning(id) { info["fetching"] = .bool(true) }
        if let deferral = fetchScheduler.apps[id]?.deferral { info["fetch-deferred"] = .string(deferral.rawValue) }
        if fetchScheduler.backgroundRefreshDenied.contains(id) { info["background-refresh"] = .string("denied") }
        return info
    }

    private static func describe(_ time: Double) -> String {
        "\(Int(time.rounded())) (Unix time)"
    }
}
