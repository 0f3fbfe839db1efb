import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FetchScheduling
import FoundationEssentials
import LocalNotificationEngine
import Logging
import SystemdBus
import UnifiedPushClient

/// The real host of one app: a `HostBridge` (systemd-logind, the screensaver, timedated,
/// low-memory-monitor, the kernel's clocks and memory pressure, SIGTERM) drives the app, and the
/// service manager hears about it through `sd_notify`.
///
/// On top of the bridge's policies it applies the app's own:
///
/// - **Sleep:** the bridge holds a `sleep` delay inhibitor. On `PrepareForSleep(true)` the app
///   moves to the background; the lock is released when the app reaches suspended (its callbacks
///   returned and every background task ended or expired) and never later than logind's
///   `InhibitDelayMaxUSec` minus `HostBridge/Configuration/sleepDelayMargin`. On
///   `PrepareForSleep(false)` the lock is taken again *before* the foreground callbacks run.
/// - **Shutdown:** `PrepareForShutdown(true)` terminates the app under the `shutdown` delay lock,
///   released once the app has terminated.
/// - **Service manager:** `READY=1` after launching, `STATUS=` with each state, `STOPPING=1` and
///   `EXTEND_TIMEOUT_USEC` while `applicationWillTerminate` runs, `WATCHDOG=1` when enabled.
/// - **The device:** the bridge's conditions reach the app (Low Power Mode, thermal state,
///   background refresh status, status-bar orientation); the accelerometer is claimed while the
///   app is active and released otherwise; background fetch by lifecycled's scheduler
///   (`SystemdHost+BackgroundFetch.swift`).
@MainActor
public final class SystemdHost: ApplicationHost {
    /// The sources and policies.
    public let bridge: HostBridge
    /// The real scheduler.
    public let scheduler: any LifecycleScheduler = SystemLifecycleScheduler()
    /// The app being hosted.
    public private(set) weak var application: Application?
    /// Called with each release of the sleep delay lock and why (`"suspended"`, `"cap"`, `"terminated"`).
    public var sleepLockReleaseHandler: (@MainActor (String) -> Void)?

    /// Where the host tells what happens (at info and below): the app's
    /// (`Application.Configuration.logger`), from ``prepare(_:)`` on.
    private(set) var logger = Logger.discarding
    var sleepPending = false
    var sleepCap: (any ScheduledAction)?
    /// Local notifications and the badge (`SystemdHost+LocalNotifications.swift`); the idle
    /// inhibitor is in `SystemdHost+Desktop.swift`.
    var notificationCenter: LocalNotificationCenter?
    var sessionConnection: BusConnection?
    var idleTimerWanted = false
    /// The app's `setMinimumBackgroundFetchInterval(_:)`, as last set.
    package internal(set) var backgroundFetchInterval = Application.backgroundFetchIntervalNever
    /// Background fetch (`SystemdHost+BackgroundFetch.swift`).
    var fetch = BackgroundFetch()
    var idleInhibitor: BusFileDescriptor?
    var screenSaverCookie: UInt32?
    var idleGeneration = 0
    var applicationService: FreedesktopApplicationService?
    /// The app's UnifiedPush connector (while the app runs, with a state directory).
    var pushConnector: UnifiedPushConnector?

    /// Creates the host; nothing starts until the app runs (``prepare(_:)``).
    ///
    /// - Parameters:
    ///   - configuration: What the bridge uses.
    public init(configuration: HostBridge.Configuration = HostBridge.Configuration()) {
        self.bridge = HostBridge(configuration: configuration)
        // The fetch scheduler's conditions follow the device's (a deferred fetch runs when they allow).
        bridge.onDeviceConditionsChange = { [weak self] conditions in
            self?.deviceConditionsChanged(FetchConditions(conditions))
        }
    }

    /// The sources that started, and why each other one did not.
    public var sourceStatus: [HostBridge.Source: String] { bridge.sourceStatus }

    // MARK: ApplicationHost

    /// Starts the bridge and feeds its facts to the app; the facts read at start come first.
    public func prepare(_ application: Application) async {
        self.application = application
        logger = application.configuration.logger
        await bridge.start(logger: logger) { [weak self] event in await self?.deliver(event) }
        startBackgroundFetch(for: application)
        await startDesktopServices(for: application)
    }

    /// Sends `READY=1`.
    public func applicationDidFinishLaunching(_ application: Application) {
        bridge.notify("READY=1\nSTATUS=\(application.applicationState)")
    }

    /// Sends `STATUS=` and releases the sleep lock when the app has quiesced.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - previousState: The state before.
    ///   - state: The state after.
    public func application(
        _ application: Application, didChangeStateFrom previousState: ApplicationState, to state: ApplicationState
    ) {
        bridge.notify("STATUS=\(state)")
        if state == .active, let notificationCenter {
            notificationCenter.appBecameActive(application.configuration.applicationIdentifier)
        }
        updateIdleInhibitor()
        updateAccelerometerClaim(state)
        if state != .notRunning, previousState == .notRunning { armFetchTimer() }
        if sleepPending && (state == .suspended || state == .notRunning) {
            releaseSleepLock(reason: state == .suspended ? "suspended" : "terminated")
        }
    }

    /// Sends `STOPPING=1` and extends the stop timeout by the deadline.
    ///
    /// - Parameters:
    ///   - application: The app this host drives.
    ///   - deadline: The callback deadline.
    public func applicationWillTerminate(_ application: Application, deadline: Duration) {
        let microseconds = (deadline + .seconds(1)).saturatingMicroseconds
        bridge.notify("STOPPING=1\nEXTEND_TIMEOUT_USEC=\(microseconds)\nSTATUS=terminating")
    }

    /// Stops the bridge, which releases the delay locks.
    public func applicationDidTerminate(_ application: Application) {
        stop()
    }

    /// Stops the bridge and the sleep policy; idempotent.
    public func stop() {
        sleepCap?.cancel()
        sleepCap = nil
        stopBackgroundFetch()
        stopDesktopServices()
        bridge.stop()
    }

    /// Claims iio-sensor-proxy's accelerometer while the app is active (it may rotate) and releases
    /// it otherwise, so the sensor is not kept powered for an app in the background; a suspended
    /// app hears only the latest orientation when it returns.
    func updateAccelerometerClaim(_ state: ApplicationState) {
        let bridge = bridge
        Task.immediate { @MainActor in await bridge.setAccelerometerWanted(state == .active) }
    }

    // MARK: Sleep policy

    /// Applies the sleep policy to one fact and hands it to the app.
    func deliver(_ event: HostEvent) async {
        guard let application else { return }
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
            await bridge.takeDelayLock("sleep")
            application.handle(event)
        case .significantTimeChange(let change):
            if change.reason == .timeZone || change.reason == .daylightSavingTime {
                notificationCenter?.timeZoneChanged()
            }
            application.handle(event)
        default:
            application.handle(event)
        }
    }

    func armSleepCap() {
        sleepCap?.cancel()
        let cap = max(.milliseconds(100), bridge.inhibitDelayMax - bridge.configuration.sleepDelayMargin)
        sleepCap = scheduler.schedule(after: cap) { [weak self] in
            guard let self, self.sleepPending else { return }
            self.logger.info("sleep delay cap (\(cap)) reached before the app suspended; releasing the sleep lock")
            self.releaseSleepLock(reason: "cap")
        }
    }

    func releaseSleepLock(reason: String) {
        sleepCap?.cancel()
        sleepCap = nil
        guard sleepPending else { return }
        sleepPending = false
        bridge.releaseDelayLock("sleep")
        sleepLockReleaseHandler?(reason)
    }
}
