import AppLifecycle
import Foundation
import Logging
import SystemdBus

/// The real host: systemd-logind, the screensaver, timedated, low-memory-monitor, the kernel's
/// clocks and memory pressure, SIGTERM and the service manager drive the app's life cycle.
///
/// Every source is optional. At start the host tries each one, logs one line per source that is
/// unavailable (no logind in a container, no permission for PSI, …) and one line naming the live
/// ones, and runs with what it has. Events from all sources go through one ordered queue to the
/// main actor, where the host applies its policies before handing them to the app:
///
/// - **Sleep:** a `sleep` delay inhibitor is held from start. On `PrepareForSleep(true)` the app
///   moves to the background; the lock is released when the app reaches suspended (its callbacks
///   returned and every background task ended or expired) and never later than logind's
///   `InhibitDelayMaxUSec` minus ``Configuration/sleepDelayMargin``. On `PrepareForSleep(false)`
///   the lock is taken again *before* the foreground callbacks run.
/// - **Shutdown:** a `shutdown` delay inhibitor is held; `PrepareForShutdown(true)` (or its
///   `WithMetadata` twin, de-duplicated) terminates the app, and the lock goes when it has.
/// - **Termination:** SIGTERM and SIGINT terminate the app; the service manager gets `STOPPING=1`
///   and `EXTEND_TIMEOUT_USEC` for the callback deadline.
/// - **Memory:** warnings from PSI, `$MEMORY_PRESSURE_WATCH` and low-memory-monitor are rate-limited
///   together (``Configuration/memoryWarningInterval``; a more severe level passes at once).
/// - **Time zone:** the `/etc/localtime` watch and timedated report the same change; it is
///   delivered once, and the midnight/DST timer follows the new zone.
/// - **Service manager:** `READY=1` after launching, `STATUS=` with each state, `WATCHDOG=1` at half
///   `$WATCHDOG_USEC` when the watchdog is on.
@MainActor
public final class SystemdHost: ApplicationHost {
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

        /// The raw name.
        public var description: String { rawValue }
    }

    /// What the host uses and how.
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

    /// The host's configuration.
    public let configuration: Configuration
    /// The real scheduler.
    public let scheduler: any LifecycleScheduler = SystemLifecycleScheduler()
    /// The sources that started, and why each other one did not.
    public private(set) var sourceStatus: [Source: String] = [:]
    /// The app being hosted.
    public private(set) weak var application: Application?

    let logger = Logger(label: "AppLifecycle.SystemdHost")
    let notifier = ServiceManagerNotifier()
    var loop: EventLoop?
    var runner: ReadinessSourceRunner?
    var wallClock: WallClockTimer?
    var signalWatcher: TerminationSignalWatcher?
    var intake: AsyncStream<Intake>.Continuation?
    var consumer: Task<Void, Never>?
    var memoryLimiter: MemoryWarningRateLimiter
    var lastTimeZone: String?
    var bus = BusClients()

    // Sleep policy.
    var sleepPending = false
    var sleepCap: (any ScheduledAction)?
    /// Called with each release of the sleep delay lock and why ("suspended", "cap", "terminated").
    public var sleepLockReleaseHandler: (@MainActor (String) -> Void)?

    /// An event from a source, with the source's name for logs.
    struct Intake: Sendable {
        var event: HostEvent
        var source: String
    }

    /// Creates the host; nothing starts until the app runs (``prepare(_:)``).
    ///
    /// - Parameters:
    ///   - configuration: What to use.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.memoryLimiter = MemoryWarningRateLimiter(interval: configuration.memoryWarningInterval)
    }

    // MARK: ApplicationHost

    /// Starts every configured source and reports the initial facts before the app launches.
    ///
    /// - Parameters:
    ///   - application: The app.
    public func prepare(_ application: Application) async {
        self.application = application
        let (stream, continuation) = AsyncStream<Intake>.makeStream(bufferingPolicy: .unbounded)
        intake = continuation
        do {
            let loop = try EventLoop(name: "lifecycle-host")
            self.loop = loop
            let runner = ReadinessSourceRunner(loop: loop, logger: logger) { event, source in
                continuation.yield(Intake(event: event, source: source))
            }
            self.runner = runner
            startKernelSources(runner)
        } catch {
            logger.error("event loop unavailable (\(error)); kernel and bus sources are off")
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
            await startBusClients(loop: loop)
        }
        // Facts read at start go to the app before launch, in order.
        drainStartupFacts(stream)
        logSources()
    }

    /// Sends `READY=1`.
    ///
    /// - Parameters:
    ///   - application: The app.
    public func applicationDidFinishLaunching(_ application: Application) {
        notify("READY=1\nSTATUS=\(application.applicationState)")
    }

    /// Sends `STATUS=` and releases the sleep lock when the app has quiesced.
    ///
    /// - Parameters:
    ///   - application: The app.
    ///   - previousState: The state before.
    ///   - state: The state after.
    public func application(_ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState) {
        notify("STATUS=\(state)")
        if sleepPending && (state == .suspended || state == .notRunning) {
            releaseSleepLock(reason: state == .suspended ? "suspended" : "terminated")
        }
    }

    /// Sends `STOPPING=1` and extends the stop timeout by the deadline.
    ///
    /// - Parameters:
    ///   - application: The app.
    ///   - deadline: The callback deadline.
    public func applicationWillTerminate(_ application: Application, deadline: Duration) {
        let microseconds = UInt64(deadline.timeInterval * 1_000_000) + 1_000_000
        notify("STOPPING=1\nEXTEND_TIMEOUT_USEC=\(microseconds)\nSTATUS=terminating")
    }

    /// Stops every source and releases the delay locks.
    ///
    /// - Parameters:
    ///   - application: The app.
    public func applicationDidTerminate(_ application: Application) {
        stop()
    }

    /// Stops every source, releases the delay locks and the event loop; idempotent.
    public func stop() {
        sleepCap?.cancel()
        sleepCap = nil
        stopBusClients()
        runner?.stopAll()
        runner = nil
        wallClock = nil
        signalWatcher?.cancel()
        signalWatcher = nil
        intake?.finish()
        intake = nil
        consumer?.cancel()
        consumer = nil
        loop?.shutdown()
        loop = nil
    }

    // MARK: Event intake

    /// Hands the app the facts the sources reported while starting, then consumes the rest in order.
    private func drainStartupFacts(_ stream: AsyncStream<Intake>) {
        consumer = Task { @MainActor [weak self] in
            for await intake in stream {
                guard let self else { return }
                await self.deliver(intake)
            }
        }
    }

    /// Applies the host's policies to one event and hands it to the app.
    func deliver(_ intake: Intake) async {
        guard let application else { return }
        let event = intake.event
        switch event {
        case .sleeping(true):
            sleepPending = true
            armSleepCap()
            application.handle(event)
            if application.applicationState == .suspended || application.applicationState == .notRunning {
                releaseSleepLock(reason: "suspended")
            }
        case .sleeping(false):
            sleepPending = false
            sleepCap?.cancel()
            sleepCap = nil
            await retakeSleepLock()
            application.handle(event)
        case .memoryWarning(let warning):
            guard memoryLimiter.admit(warning) else {
                logger.debug("memory warning (\(warning.level.rawValue)) from \(warning.source) rate-limited")
                return
            }
            application.handle(event)
        case .significantTimeChange(let change) where change.reason == .timeZone:
            guard let zone = change.timeZoneIdentifier, zone != lastTimeZone else {
                logger.debug("time zone report from \(intake.source) repeats \(lastTimeZone ?? "?")")
                return
            }
            lastTimeZone = zone
            if let timeZone = TimeZone(identifier: zone) { try? wallClock?.updateTimeZone(timeZone) }
            application.handle(event)
        default:
            application.handle(event)
        }
    }

    // MARK: Kernel sources

    private func startKernelSources(_ runner: ReadinessSourceRunner) {
        let sources = configuration.sources
        if sources.contains(.clock) {
            attempt(.clock) {
                let timer = try WallClockTimer()
                try runner.add(timer)
                wallClock = timer
            }
        }
        if sources.contains(.localtime) {
            attempt(.localtime) {
                let watcher = try TimeZoneWatcher(path: configuration.localtimePath, environment: configuration.environment)
                lastTimeZone = watcher.currentIdentifier
                try runner.add(watcher)
            }
        }
        if sources.contains(.memoryPressure) {
            attempt(.memoryPressure) {
                switch try MemoryPressureWatch.setUp(environment: configuration.environment) {
                case .disabled:
                    sourceStatus[.memoryPressure] = "off ($MEMORY_PRESSURE_WATCH=/dev/null)"
                case .watching(let watch):
                    try runner.add(watch)
                    sourceStatus[.memoryPressure] = "live ($MEMORY_PRESSURE_WATCH)"
                case .notConfigured:
                    try runner.add(PressureStallTrigger(kind: .some))
                    try runner.add(PressureStallTrigger(kind: .full))
                    sourceStatus[.memoryPressure] = "live (PSI some/full)"
                }
            }
        }
        if sources.contains(.watchdog) {
            let notifier = self.notifier
            attempt(.watchdog) {
                guard let timer = try WatchdogTimer(notifier: notifier) else {
                    sourceStatus[.watchdog] = "off ($WATCHDOG_USEC not set)"
                    return
                }
                try runner.add(timer)
            }
        }
    }

    /// Runs a source's start-up, recording it live or logging why not.
    func attempt(_ source: Source, _ start: () throws -> Void) {
        do {
            try start()
            if sourceStatus[source] == nil { sourceStatus[source] = "live" }
        } catch {
            sourceStatus[source] = "unavailable: \(error)"
            logger.notice("\(source) unavailable: \(error)")
        }
    }

    private func logSources() {
        let live = Source.allCases.filter { sourceStatus[$0]?.hasPrefix("live") == true }.map(\.rawValue)
        logger.info("host sources live: \(live.isEmpty ? "none" : live.joined(separator: ", "))")
    }

    // MARK: Sleep policy

    func armSleepCap() {
        sleepCap?.cancel()
        let cap = max(.milliseconds(100), bus.inhibitDelayMax - configuration.sleepDelayMargin)
        sleepCap = scheduler.schedule(after: cap) { [weak self] in
            guard let self, self.sleepPending else { return }
            self.logger.warning("sleep delay cap (\(cap)) reached before the app suspended; releasing the sleep lock")
            self.releaseSleepLock(reason: "cap")
        }
    }

    func releaseSleepLock(reason: String) {
        sleepCap?.cancel()
        sleepCap = nil
        guard sleepPending else { return }
        sleepPending = false
        bus.releaseDelayLock("sleep")
        sleepLockReleaseHandler?(reason)
    }

    // MARK: Service manager

    func notify(_ state: String) {
        do {
            _ = try notifier.notify(state)
        } catch {
            logger.debug("sd_notify failed: \(error)")
        }
    }
}
