import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// Starts the host's sources and delivers their facts, in order, as one stream of `HostEvent`s.
///
/// The bridge owns an sd-event loop thread, the kernel sources (the `CLOCK_REALTIME` timerfd,
/// the `/etc/localtime` watch, PSI or `$MEMORY_PRESSURE_WATCH`, the service watchdog), SIGTERM
/// and SIGINT, and the D-Bus clients (logind, the screensaver, timedated, low-memory-monitor).
/// Every source is optional: one that cannot start is logged in one line with its reason, the
/// live ones are logged together, and the bridge runs with what it has.
///
/// Before an event reaches the stream the bridge applies the policies that concern sources, not
/// apps: memory warnings from all sources are rate-limited together
/// (``Configuration/memoryWarningInterval``; a more severe level passes at once), and a time-zone
/// change reported by both the localtime watch and timedated is delivered once (the midnight/DST
/// timer then follows the new zone). It also holds logind's `sleep` and `shutdown` delay
/// inhibitors for its user (`SystemdHost` for one app, `lifecycled` for a session of apps),
/// who decides when to release them.
@MainActor
public final class HostBridge {
    /// One source of host facts.
    public enum Source: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// systemd-logind: sleep, shutdown, session lock and activity, delay inhibitors.
        case logind
        /// `org.freedesktop.ScreenSaver` / `org.gnome.ScreenSaver` `ActiveChanged` on the session bus.
        case screensaver
        /// timedated's `Timezone` property.
        case timedated
        /// low-memory-monitor's `LowMemoryWarning`.
        case lowMemoryMonitor = "low-memory-monitor"
        /// PSI triggers, or systemd's `$MEMORY_PRESSURE_WATCH` when it is set.
        case memoryPressure = "memory-pressure"
        /// A `CLOCK_REALTIME` timerfd: clock sets, local midnight, DST offset changes.
        case clock
        /// inotify on `/etc/localtime`.
        case localtime
        /// SIGTERM and SIGINT.
        case signals
        /// `sd_notify` `WATCHDOG=1` when `$WATCHDOG_USEC` is set.
        case watchdog
        /// The device's conditions on the system bus and in the kernel: NetworkManager, UPower,
        /// power-profiles-daemon, iio-sensor-proxy and the thermal zones (``DeviceConditionsMonitor``).
        case deviceConditions = "device-conditions"

        /// The raw name.
        public var description: String { rawValue }
    }

    /// What the bridge uses and how.
    public struct Configuration: Sendable {
        /// The sources to try (default: all).
        public var sources: Set<Source>
        /// The system bus (default: `$DBUS_SYSTEM_BUS_ADDRESS`, else the standard socket).
        public var systemBus: BusConnection.Address
        /// The session bus (default: `$DBUS_SESSION_BUS_ADDRESS`).
        public var sessionBus: BusConnection.Address
        /// The environment (`$XDG_SESSION_ID`, `$MEMORY_PRESSURE_WATCH`, `$TZ`…).
        public var environment: [String: String]
        /// The localtime file to watch.
        public var localtimePath: String
        /// At most one memory warning per interval (a more severe level passes at once).
        public var memoryWarningInterval: Duration
        /// How long before logind's `InhibitDelayMaxUSec` the sleep lock is released at the latest.
        public var sleepDelayMargin: Duration
        /// The name shown as the inhibitor's "who".
        public var inhibitorWho: String
        /// Where the kernel's thermal zones are (a fake sysfs root in tests).
        public var thermalRoot: String = DeviceConditionsMonitor.defaultThermalRoot

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - sources: The sources to try.
        ///   - systemBus: The system bus.
        ///   - sessionBus: The session bus.
        ///   - environment: The environment.
        ///   - localtimePath: The localtime file to watch.
        ///   - memoryWarningInterval: The memory-warning rate limit.
        ///   - sleepDelayMargin: The margin below `InhibitDelayMaxUSec`.
        ///   - inhibitorWho: The inhibitor's "who".
        public init(
            sources: Set<Source> = Set(Source.allCases),
            systemBus: BusConnection.Address = .system,
            sessionBus: BusConnection.Address = .session,
            environment: [String: String] = ProcessInfo.processInfo.environment,
            localtimePath: String = "/etc/localtime",
            memoryWarningInterval: Duration = .seconds(10),
            sleepDelayMargin: Duration = .milliseconds(500),
            inhibitorWho: String = ProcessInfo.processInfo.processName
        ) {
            self.sources = sources
            self.systemBus = systemBus
            self.sessionBus = sessionBus
            self.environment = environment
            self.localtimePath = localtimePath
            self.memoryWarningInterval = memoryWarningInterval
            self.sleepDelayMargin = sleepDelayMargin
            self.inhibitorWho = inhibitorWho
        }
    }

    /// The bridge's configuration.
    public let configuration: Configuration
    /// The sources that started, and why each other one did not.
    public private(set) var sourceStatus: [Source: String] = [:]
    /// Sends `sd_notify` messages (a no-op without `$NOTIFY_SOCKET`).
    public let notifier = ServiceManagerNotifier()

    /// Where the bridge and its sources tell what happens (at info and below): the caller's,
    /// from ``start(logger:)``; nothing is logged before.
    private(set) var logger = Logger.discarding
    package var loop: EventLoop?
    var runner: ReadinessSourceRunner?
    var wallClock: WallClockTimer?
    var timeZoneWatcher: TimeZoneWatcher?
    var signalWatcher: TerminationSignalWatcher?
    /// Where sources put their facts; `nil` marks the end of the facts read while starting.
    var intake: AsyncStream<Intake?>.Continuation?
    var output: AsyncStream<HostEvent>.Continuation?
    var consumer: Task<Void, Never>?
    var memoryLimiter: MemoryWarningRateLimiter
    var lastTimeZone: String?
    /// Each lock source's last report (logind, the screensaver), and the fact last delivered.
    var lockedBySource: [String: Bool] = [:]
    var lastLocked: Bool?
    var bus = BusClients()
    /// Told each new value of the device's conditions, after its host facts went to the intake
    /// (lifecycled's fetch scheduler reads the network and the battery from it).
    public var onDeviceConditionsChange: (@MainActor (DeviceConditions) -> Void)?

    /// An event from a source, with the source's name for logs.
    struct Intake: Sendable {
        var event: HostEvent
        var source: String
    }

    /// Creates the bridge; nothing starts until ``start(logger:)``.
    ///
    /// - Parameters:
    ///   - configuration: What to use.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.memoryLimiter = MemoryWarningRateLimiter(interval: configuration.memoryWarningInterval)
    }

    /// Starts every configured source and returns the stream of facts.
    ///
    /// The facts the sources read while starting (the session is locked, not active) are the
    /// stream's first elements. The stream ends after ``stop()``. Calling `start(logger:)` again returns
    /// a stream that ends at once.
    ///
    /// - Parameters:
    ///   - logger: Where the bridge and its sources tell what happens (at info and below).
    public func start(logger: Logger) async -> AsyncStream<HostEvent> {
        let (events, eventOutput) = AsyncStream<HostEvent>.makeStream(bufferingPolicy: .unbounded)
        let started = await start(logger: logger) { event in eventOutput.yield(event) }
        if started { output = eventOutput } else { eventOutput.finish() }
        return events
    }

    /// Starts every configured source and calls `deliver` with each fact, in order, on the main
    /// actor; the next fact waits until `deliver` returns.
    ///
    /// Returns once the facts read while starting (a locked or inactive session, say) have been
    /// delivered, so an app launched right after starts in the state they imply.
    ///
    /// The lowest-latency way to consume the bridge: one hop from the event loop to the main
    /// actor, no intermediate stream.
    ///
    /// - Parameters:
    ///   - logger: Where the bridge and its sources tell what happens (at info and below).
    ///   - deliver: Receives each fact that passed the bridge's policies.
    /// - Returns: `false` when the bridge was started before (nothing is delivered then).
    @discardableResult
    public func start(logger: Logger, deliver: @escaping @MainActor (HostEvent) async -> Void) async -> Bool {
        guard intake == nil, loop == nil else { return false }
        self.logger = logger
        let (stream, continuation) = AsyncStream<Intake?>.makeStream(bufferingPolicy: .unbounded)
        intake = continuation
        do {
            let loop = try EventLoop(name: "lifecycle-host")
            self.loop = loop
            let runner = ReadinessSourceRunner(loop: loop, logger: logger) { event, source in
                continuation.yield(Intake(event: event, source: source))
            }
            self.runner = runner
            await startKernelSources(runner)
        } catch {
            logger.info("event loop unavailable (\(error)); kernel and bus sources are off")
        }
        if configuration.sources.contains(.signals) {
            let watcher = await TerminationSignalWatcher()
            signalWatcher = watcher
            Task {
                for await event in watcher.events { continuation.yield(Intake(event: event, source: "signal")) }
            }
            sourceStatus[.signals] = "live"
        }
        if let loop {
            await startBusClients(
                loop: loop, sink: { event, source in continuation.yield(Intake(event: event, source: source)) })
        }
        // The facts read while starting (a locked or inactive session, say) are delivered before
        // start returns, so an app that launches right after starts in the state they imply
        // rather than passing through active first.
        continuation.yield(nil)
        await withCheckedContinuation { (startedUp: CheckedContinuation<Void, Never>) in
            consumer = Task { @MainActor [weak self] in
                var startedUp: CheckedContinuation<Void, Never>? = startedUp
                defer { startedUp?.resume() }
                for await next in stream {
                    guard let self else { return }
                    guard let intake = next else {
                        startedUp?.resume()
                        startedUp = nil
                        continue
                    }
                    if let event = self.filter(intake) { await deliver(event) }
                }
            }
        }
        logSources()
        return true
    }

    /// Stops every source, releases the delay locks and the event loop; idempotent.
    public func stop() {
        stopBusClients()
        runner?.stopAll()
        runner = nil
        wallClock = nil
        timeZoneWatcher?.close()
        timeZoneWatcher = nil
        signalWatcher?.cancel()
        signalWatcher = nil
        intake?.finish()
        intake = nil
        consumer?.cancel()
        consumer = nil
        output?.finish()
        output = nil
        loop?.shutdown()
        loop = nil
    }

    /// The longest delay logind allows an inhibitor (`InhibitDelayMaxUSec`; 5 s when unknown).
    public var inhibitDelayMax: Duration { bus.inhibitDelayMax }

    /// Whether a delay lock (`"sleep"` or `"shutdown"`) is held now.
    ///
    /// - Parameters:
    ///   - what: The lock.
    public func holdsDelayLock(_ what: String) -> Bool { bus.holdsDelayLock(what) }

    /// Takes a delay lock again (after resume); does nothing without logind or when it is held.
    ///
    /// - Parameters:
    ///   - what: `"sleep"` or `"shutdown"`.
    public func takeDelayLock(_ what: String) async {
        guard let lock = LogindClient.DelayLock(rawValue: what) else { return }
        bus.wantedLocks.insert(lock)
        // Read the client out first: no access to `bus` may span the await.
        guard let logind = bus.logind, !logind.holdsDelayLock(what: lock) else { return }
        do {
            try await logind.takeDelayLock(what: lock, who: configuration.inhibitorWho, why: BusClients.why(lock))
        } catch {
            logger.info("could not take the \(what) delay lock: \(error)")
        }
    }

    /// Releases a delay lock (closes its fd), letting logind go on; idempotent.
    ///
    /// - Parameters:
    ///   - what: `"sleep"` or `"shutdown"`.
    public func releaseDelayLock(_ what: String) {
        // No longer wanted: a reconnect must not take it again behind the caller's back.
        if let lock = LogindClient.DelayLock(rawValue: what) { bus.wantedLocks.remove(lock) }
        bus.releaseDelayLock(what)
    }

    /// Sends an `sd_notify` state, logging failures at debug level.
    ///
    /// - Parameters:
    ///   - state: The state, for example `"READY=1"`.
    public func notify(_ state: String) {
        do {
            _ = try notifier.notify(state)
        } catch {
            logger.debug("sd_notify failed: \(error)")
        }
    }

    // MARK: Policies

    /// The event to deliver for an intake, or `nil` when a policy drops it.
    func filter(_ intake: Intake) -> HostEvent? {
        let event = intake.event
        switch event {
        case .memoryWarning(let warning):
            guard memoryLimiter.admit(warning) else {
                logger.debug("memory warning (\(warning.level.rawValue)) from \(warning.source) rate-limited")
                return nil
            }
            return event
        case .locked(let value):
            // logind and the screensaver each say whether the session is locked; it is locked
            // while either says so. Without this the last one to speak would win: logind's
            // LockedHint still true, a screensaver going inactive would unlock the app.
            lockedBySource[intake.source] = value
            let locked = lockedBySource.values.contains(true)
            guard locked != lastLocked else {
                logger.debug("locked(\(value)) from \(intake.source): still \(locked)")
                return nil
            }
            lastLocked = locked
            return .locked(locked)
        case .significantTimeChange(let change) where change.reason == .timeZone:
            // $TZ fixes the process's zone (it overrides /etc/localtime for glibc and Foundation):
            // a change of the system's zone changes nothing the app sees.
            if let fixed = configuration.environment["TZ"], !fixed.isEmpty {
                logger.debug("time zone report from \(intake.source) ignored: the process's zone is $TZ=\(fixed)")
                return nil
            }
            // timedated repeats what the localtime watch already reported; the watch itself also
            // reports a rewritten zone file with the same name (new rules), which must pass.
            guard let zone = change.timeZoneIdentifier, !(intake.source == "timedated" && zone == lastTimeZone) else {
                logger.debug("time zone report from \(intake.source) repeats \(lastTimeZone ?? "?")")
                return nil
            }
            lastTimeZone = zone
            try? wallClock?.localTimeZoneChanged()
            return event
        default:
            return event
        }
    }

    // MARK: Kernel sources

    private func startKernelSources(_ runner: ReadinessSourceRunner) async {
        let sources = configuration.sources
        if sources.contains(.clock) {
            await attempt(.clock) {
                let timer = try WallClockTimer()
                try await runner.add(timer)
                wallClock = timer
            }
        }
        if sources.contains(.localtime) {
            await attempt(.localtime) {
                let watcher = try TimeZoneWatcher(
                    path: configuration.localtimePath, environment: configuration.environment)
                lastTimeZone = watcher.currentIdentifier
                timeZoneWatcher = watcher
                try await watcher.start(on: runner.loop, logger: logger) { event in
                    runner.deliver(event, from: watcher.name)
                }
            }
        }
        if sources.contains(.memoryPressure) {
            await attempt(.memoryPressure) {
                switch try MemoryPressureWatch.setUp(environment: configuration.environment) {
                case .disabled:
                    sourceStatus[.memoryPressure] = "off ($MEMORY_PRESSURE_WATCH=/dev/null)"
                case .watching(let watch):
                    try await runner.add(watch)
                    sourceStatus[.memoryPressure] = "live ($MEMORY_PRESSURE_WATCH)"
                case .notConfigured:
                    try await runner.add(PressureStallTrigger(kind: .some))
                    try await runner.add(PressureStallTrigger(kind: .full))
                    sourceStatus[.memoryPressure] = "live (PSI some/full)"
                }
            }
        }
        if sources.contains(.watchdog) {
            // sd-event pings from the loop thread itself, so a hung loop stops pinging.
            await attempt(.watchdog) {
                if try await runner.loop.enableWatchdog() == false {
                    sourceStatus[.watchdog] = "off ($WATCHDOG_USEC not set)"
                }
            }
        }
    }

    /// Runs a source's start-up, recording it live or logging why not.
    func attempt(_ source: Source, _ start: () async throws -> Void) async {
        do {
            try await start()
            if sourceStatus[source] == nil { sourceStatus[source] = "live" }
        } catch {
            sourceStatus[source] = "unavailable: \(error)"
            logger.info("\(source) unavailable: \(error)")
        }
    }

    /// Records a source's status (the bus clients report theirs).
    func record(_ source: Source, _ status: String) {
        sourceStatus[source] = status
        if !status.hasPrefix("live") { logger.info("\(source) \(status)") }
    }

    private func logSources() {
        let live = Source.allCases.filter { sourceStatus[$0]?.hasPrefix("live") == true }.map(\.rawValue)
        logger.info("host sources live: \(live.isEmpty ? "none" : live.joined(separator: ", "))")
    }
}
