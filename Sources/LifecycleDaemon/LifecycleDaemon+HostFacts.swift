import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import Glibc
import LifecycledProtocol
import SystemdBus

extension LifecycleDaemon {
    /// Acts on one host fact, from the bridge or from `Simulate`.
    ///
    /// | fact | what the daemon does |
    /// | --- | --- |
    /// | sleeping(true) | `HostState`; `sleeping` to every app; holds the session's `sleep` delay lock until every app is suspended or not running, or the deadline |
    /// | sleeping(false) | re-takes the `sleep` lock first, then `HostState`, then resumes the apps and sends `sleeping` |
    /// | locked, session-active | `HostState`, then the command to every app |
    /// | foreground | every app's foreground fact, then the command |
    /// | memory warning | below critical, frozen apps' memory reclaimed first; ``MemoryPressurePlan``: suspended apps purged (largest first; not those whose reclaim freed memory), then `memory-warning` to the running ones |
    /// | terminate | the whole session: every app terminated, then the daemon stops |
    /// | background refresh status | each app's own (``backgroundRefreshStatus(for:lowPowerMode:)``) to each |
    /// | anything else with a command | the command to every app |
    ///
    /// - Parameters:
    ///   - event: The fact.
    func handleHostEvent(_ event: HostEvent) async {
        guard phase == .running else { return }
        switch event {
        case .sleeping(true):
            hostFacts.sleeping = true
            publishHostState()
            beginSleepWait()
            await broadcast(event)
            checkSleepRelease()
        case .sleeping(false):
            endSleepWait()
            await bridge?.takeDelayLock("sleep")
            hostFacts.sleeping = false
            publishHostState()
            await broadcast(event)
        case .locked(let value):
            hostFacts.locked = value
            publishHostState()
            await broadcast(event)
        case .sessionActive(let value):
            hostFacts.sessionActive = value
            publishHostState()
            await broadcast(event)
        case .foreground(let value):
            for app in registry.all { registry[app.id]?.foreground = value }
            await broadcast(event)
        case .memoryWarning(let warning):
            await handleMemoryWarning(warning)
        case .terminate(let reason):
            await shutdown(reason: reason)
        case .significantTimeChange(let change):
            // The bridge's localtime watch or timedated: floating notifications follow the zone.
            // (A clock set reaches the schedule through its own alarm.)
            if change.reason == .timeZone || change.reason == .daylightSavingTime { localTimeZoneChanged() }
            await broadcast(event)
        case .backgroundRefreshStatus(let status):
            await broadcastBackgroundRefreshStatus(status)
        default:
            await broadcast(event)
        }
    }

    // MARK: Sleep

    /// The longest the daemon holds back sleep: the configured deadline, never beyond logind's
    /// `InhibitDelayMaxUSec` minus the bridge's margin (and at least 100 ms).
    var sleepCap: Duration {
        let logindCap =
            (bridge?.inhibitDelayMax ?? .seconds(5)) - (bridge?.configuration.sleepDelayMargin ?? .milliseconds(500))
        let cap = configuration.sleepDeadline.map { min($0, logindCap) } ?? logindCap
        return max(.milliseconds(100), cap)
    }

    /// Starts waiting for the apps to suspend, with the deadline armed.
    func beginSleepWait() {
        sleep.deadline?.cancel()
        sleep.pending = true
        let cap = sleepCap
        sleep.deadline = Task { @MainActor [weak self] in
            do { try await Task.sleep(for: cap) } catch { return }
            guard let self, self.sleep.pending else { return }
            let waiting = self.appsHoldingSleep().joined(separator: ", ")
            self.logger.warning("sleep deadline (\(cap)) reached; still not suspended: \(waiting)")
            self.releaseSleepLock(reason: "deadline")
        }
    }

    /// Stops waiting (the machine woke up before every app suspended).
    func endSleepWait() {
        sleep.deadline?.cancel()
        sleep = SleepWait()
    }

    /// The apps that keep the machine from sleeping: running code, or not yet confirmed stopped.
    func appsHoldingSleep() -> [String] {
        registry.all.filter { app in
            guard app.isRegistered || app.isRunning else { return false }
            // A program that does not adopt AppLifecycle cannot acknowledge: the kernel's own
            // freeze at suspend stops it.
            guard app.manifest?.adoptsLifecycle ?? true else { return false }
            // Launched but not registered, or registered but no state reported yet: it has not
            // acknowledged the sleep, so it holds it (until it reports, or the deadline).
            if app.state == .notRunning { return true }
            if app.state != .suspended || !app.backgroundTasks.isEmpty { return true }
            // Reported suspended: done once the kernel confirmed the stop (a launched app).
            if let process = app.process, process.exitStatus == nil { return !process.isSuspended }
            return false
        }.map(\.id)
    }

    /// Releases the sleep lock if the daemon is waiting and no app holds sleep back.
    func checkSleepRelease() {
        guard sleep.pending, appsHoldingSleep().isEmpty else { return }
        releaseSleepLock(reason: "all-suspended")
    }

    /// Releases the session's `sleep` delay lock.
    ///
    /// - Parameters:
    ///   - reason: Why, for the log and ``onSleepLockReleased``.
    func releaseSleepLock(reason: String) {
        guard sleep.pending else { return }
        endSleepWait()
        bridge?.releaseDelayLock("sleep")
        logger.info("sleep lock released (\(reason))")
        onSleepLockReleased?(reason)
    }

    // MARK: Memory

    /// Carries out a ``MemoryPressurePlan``, after taking memory back from frozen apps.
    ///
    /// | level | frozen app in a cgroup with `memory.reclaim` | any other suspended app | frozen program that does not adopt AppLifecycle |
    /// | --- | --- | --- | --- |
    /// | low, medium | reclaimed (``reclaimFromFrozenApps(_:)``); purged only if that freed nothing | purged | reclaimed |
    /// | critical | purged, not reclaimed first (the kill frees everything at once; reclaiming first would only delay it) | purged | reclaimed |
    ///
    /// A program that does not adopt AppLifecycle is never purged (it hears no callback and could
    /// save nothing); reclaim, which does not wake it, is the only memory taken from it.
    ///
    /// A purge ends a suspended launched app with `SIGKILL` (without waking it), largest resident
    /// set first, each waited for; then the running apps get `memory-warning`, largest first.
    /// Where there is no `memory.reclaim` (no delegated cgroup, cgroup v1 or hybrid, a kernel
    /// before 5.19) every suspended app is purged, as before reclaim existed.
    func handleMemoryWarning(_ warning: MemoryWarning) async {
        let candidates = registry.all.filter { $0.isRegistered || $0.isRunning }
        let plan = MemoryPressurePlan(
            apps: candidates.map { app in
                MemoryPressurePlan.App(id: app.id, state: app.state, residentBytes: app.process?.residentBytes ?? 0)
            })
        logger.notice(
            "memory warning (\(warning.level.rawValue), \(warning.source)): purging [\(plan.terminate.joined(separator: ", "))], warning [\(plan.warn.joined(separator: ", "))]"
        )
        // Frozen programs that do not adopt AppLifecycle, largest first (the plan has no state for them).
        let programs = candidates.filter { !($0.manifest?.adoptsLifecycle ?? true) && !plan.terminate.contains($0.id) }
            .map { (id: $0.id, bytes: $0.process?.residentBytes ?? 0) }
            .sorted { $0.bytes != $1.bytes ? $0.bytes > $1.bytes : $0.id < $1.id }.map(\.id)
        let spared = await reclaimFromFrozenApps((warning.level < .critical ? plan.terminate : []) + programs)
        for id in plan.terminate where !spared.contains(id) {
            // Only a process lifecycled launched can be ended safely (its pidfd pins the pid).
            // The plan was made before the waits below: an app resumed meanwhile (a URL opened
            // for it, a wake) is running code again and is not purged.
            guard let app = registry[id], let process = app.process, app.state == .suspended,
                app.backgroundTasks.isEmpty, process.isSuspended
            else {
                logger.info("\(id) is no longer suspended; not purged", metadata: .app(id))
                continue
            }
            process.killNow(reason: "purged under memory pressure (suspended)")
            await waitForExit(id)
        }
        for id in plan.warn where registry[id]?.isRegistered == true {
            await send(.hostEvent(.memoryWarning(warning)), to: id)
        }
    }

    /// Reclaims memory from each frozen app in a cgroup of its own, in the plan's order (largest
    /// first), one at a time; logs a line per app and the total, adds it to `HostState`'s
    /// `memory-reclaimed` and sets `memory-reclaim` from what the kernel answered: `available` if
    /// it took any write, else `unavailable` if a cgroup had no `memory.reclaim`.
    ///
    /// - Parameters:
    ///   - ids: The suspended apps of the plan, and the programs that do not adopt AppLifecycle.
    /// - Returns: The apps whose reclaim freed memory, which are not purged.
    func reclaimFromFrozenApps(_ ids: [String]) async -> Set<String> {
        var spared: Set<String> = []
        var total: UInt64 = 0
        var attempted = 0
        var accepted = 0
        var missing = 0
        for id in ids {
            // Frozen by the cgroup freezer: the kernel confirmed the stop and the app has a cgroup.
            // (A program that does not adopt AppLifecycle reports no state: frozen is all there is.)
            guard let app = registry[id], let process = app.process, process.isSuspended,
                app.state == .suspended || !(app.manifest?.adoptsLifecycle ?? true), let directory = app.cgroupDirectory
            else { continue }
            attempted += 1
            let result = await memoryReclaimer.reclaim(directory: directory)
            let (before, after) = (
                result.bytesBefore.map(String.init) ?? "?", result.bytesAfter.map(String.init) ?? "?"
            )
            let sizes = "memory.current \(before) → \(after) bytes"
            switch result.outcome {
            case .complete:
                accepted += 1
                logger.notice(
                    "reclaimed \(result.reclaimedBytes) bytes from frozen \(id) (\(sizes))", metadata: .app(id))
            case .partial:
                accepted += 1
                logger.notice(
                    "reclaimed \(result.reclaimedBytes) bytes from frozen \(id), less than asked (EAGAIN; \(sizes))",
                    metadata: .app(id))
            case .unavailable:
                missing += 1
                logger.info("no memory.reclaim for frozen \(id) in \(directory); it is purged", metadata: .app(id))
            case .failed(let error):
                logger.warning(
                    "cannot reclaim from frozen \(id): \(String(cString: strerror(error))) (errno \(error)); it is purged",
                    metadata: .app(id))
            }
            total += result.reclaimedBytes
            if result.relievedPressure { spared.insert(id) }
        }
        guard attempted > 0 else { return spared }
        hostFacts.memoryReclaimedBytes += total
        if accepted > 0 || missing > 0 { hostFacts.memoryReclaimAvailable = accepted > 0 }
        logger.notice(
            "memory reclaim: \(total) bytes from \(attempted) frozen apps, \(spared.count) kept (\(hostFacts.memoryReclaimedBytes) bytes since start)"
        )
        publishHostState()
        return spared
    }
}
