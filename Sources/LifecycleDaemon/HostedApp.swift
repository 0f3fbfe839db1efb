import AppLifecycle
import AppLifecycleSystemd
import SystemdBus

/// One app the daemon hosts, as logind's `Session` is one session: its manifest, its process and
/// cgroup, its registration, queued commands, background tasks and state, and the only code that
/// stops and resumes its process.
///
/// An app is known because a manifest names it, because lifecycled launched it, or because a
/// process registered under its id (an app started by hand, or one that re-registers after a
/// daemon restart). Only a launched app has a ``process``, so only a launched app is
/// suspended, purged and escalated by the daemon; a registered-only app gets the same
/// commands and signals but is never signalled. ``LifecycleDaemon`` keeps routing, policy and
/// the sleep hold; it holds each app in its ``AppRegistry`` by reference, so what it reads after
/// an `await` is the app as it is now, not as it was before.
@MainActor
final class HostedApp {
    /// Where the daemon stands with the app's process: one explicit phase instead of flags.
    ///
    /// `notLaunched` ─(launch)► `running` ⇄ `stopRequested` ─► `terminating` ─(exit)► `notLaunched`;
    /// an exit from any phase ends in `notLaunched`. An app that only registered stays
    /// `notLaunched`: the daemon never signals a process it did not start.
    enum Phase: Sendable, Equatable {
        /// No process of the daemon's runs.
        case notLaunched
        /// The launched process runs (or was resumed).
        case running
        /// The daemon asked for the process to be stopped and has not resumed it since.
        case stopRequested
        /// A `terminate` is under way for the running process: it is never stopped again, whatever
        /// it reports, so it can run its `applicationWillTerminate` and exit. `stopPending`: a stop
        /// asked before the terminate has not been withdrawn, so the process may still be stopped
        /// (the freezer confirms asynchronously) and must be resumed to read its `terminate`.
        case terminating(stopPending: Bool)
    }

    /// The app id.
    let id: String
    /// The manifest, if one names this id.
    var manifest: AppManifest?
    /// The process lifecycled launched, while it runs.
    private(set) var process: AppProcess?
    /// The delegated cgroup v2 directory of the current launch (its freezer, its memory), while it
    /// runs; `nil` for an app in the daemon's cgroup (stopped with `SIGSTOP`) or not launched.
    private(set) var cgroupDirectory: String?
    /// Where the daemon stands with ``process``.
    private(set) var phase: Phase = .notLaunched
    /// The unique bus name the app registered from, while registered.
    private(set) var busName: String?
    /// Which launch ``process`` is (so a late exit of an earlier launch is not mistaken for it).
    private(set) var launchID = 0
    /// The pid the registration came from (or the launched process), 0 if none.
    private(set) var registeredPID: UInt32 = 0
    /// The last state the app reported (`not-running` when it is not running).
    var state: ApplicationState = .notRunning
    /// The launch options of the current launch (returned by `RegisterApp`).
    private(set) var launchOptions = LaunchOptions()
    /// Whether the app is to be in the foreground (`false` when launched in the background).
    var foreground = true
    /// The background tasks the app reported as running, by id.
    private(set) var backgroundTasks: [UInt32: String] = [:]
    /// Commands for a launched app that has not registered yet, sent once it does.
    private(set) var pendingCommands: [(command: String, arguments: UserInfo)] = []
    /// When the app was first known, for a deterministic order (registration order).
    let order: Int
    /// Its windows as the window source last reported them (``WindowOwnership``).
    var windows: [TopLevelWindow] = []
    /// What the display server shows of it; ``AppWindowState/noWindow`` until it has a window.
    var windowState: AppWindowState = .noWindow
    /// Why it is in its state, for `lifecyclectl apps` (`activated`, `hidden, frozen`, …).
    var placementReason = ""
    /// The freeze of a program that does not adopt AppLifecycle, due after its windows left the foreground.
    var pendingFreeze: Task<Void, Never>?

    /// Creates the record of an app.
    ///
    /// - Parameters:
    ///   - manifest: Its manifest, if any.
    ///   - order: Its position in the registry's order.
    init(id: String, manifest: AppManifest?, order: Int) {
        self.id = id
        self.manifest = manifest
        self.order = order
    }

    /// Whether the app is registered on the bus now.
    var isRegistered: Bool { busName != nil }

    /// Whether a launched process of the app is running.
    var isRunning: Bool { process.map { $0.exitStatus == nil } ?? false }

    /// Whether the daemon asked for the process to be stopped and has not resumed it since (also
    /// while terminating: the stop may still land).
    var stopRequested: Bool { phase == .stopRequested || phase == .terminating(stopPending: true) }

    /// Whether a `terminate` is under way for the running process.
    var terminating: Bool {
        if case .terminating = phase { return true }
        return false
    }

    /// The pid to show: the launched process, else the registration's, else 0.
    var pid: UInt32 {
        if let process, process.exitStatus == nil { return UInt32(process.pid) }
        return busName == nil ? 0 : registeredPID
    }

    /// The `(sssu)` entry of `ListApps` / `Apps`: id, state, name, pid.
    var listEntry: BusValue {
        .structure([.string(id), .string(state.rawValue), .string(manifest?.name ?? ""), .uint32(pid)])
    }

    // MARK: Transitions

    /// A new launch: its process runs (in `cgroupDirectory` when it has one of its own), nothing is
    /// queued or stopped from an earlier one.
    func launched(
        _ process: AppProcess, launchID: Int, manifest: AppManifest, options: LaunchOptions,
        cgroupDirectory: String? = nil
    ) {
        self.manifest = manifest
        self.process = process
        self.cgroupDirectory = cgroupDirectory
        self.launchID = launchID
        launchOptions = options
        foreground = !options.launchedInBackground
        pendingCommands.removeAll()
        phase = .running
    }

    /// The launched process ended: with it go its registration (its connection died too), its
    /// queued commands and its background tasks.
    func exited() {
        process = nil
        cgroupDirectory = nil
        cancelPendingFreeze()
        windows = []
        windowState = .noWindow
        placementReason = ""
        phase = .notLaunched
        pendingCommands.removeAll()
        backgroundTasks.removeAll()
        busName = nil
    }

    /// The app registered from a unique name; returns the commands that waited for it, in order.
    func registered(from busName: String, pid: UInt32) -> [(command: String, arguments: UserInfo)] {
        self.busName = busName
        registeredPID = pid
        defer { pendingCommands.removeAll() }
        return pendingCommands
    }

    /// The unique name the app registered from left the bus: its registration and tasks end.
    func leftTheBus() {
        busName = nil
        backgroundTasks.removeAll()
        // What the display server showed of it is its launch's; a registration that comes back starts afresh.
        if process == nil {
            windows = []
            windowState = .noWindow
            placementReason = ""
        }
    }

    /// The daemon asked for the running process to be stopped (a terminating one never is).
    func requestStop() {
        if phase == .running { phase = .stopRequested }
    }

    /// The process was resumed (or its stop taken back) before it was stopped again.
    func stopWithdrawn() {
        switch phase {
        case .stopRequested: phase = .running
        case .terminating(stopPending: true): phase = .terminating(stopPending: false)
        case .notLaunched, .running, .terminating(stopPending: false): break
        }
    }

    /// A `terminate` is under way for the running process; a stop asked before stays pending until
    /// the process is resumed.
    func beginTerminating() {
        guard process != nil else { return }
        switch phase {
        case .running: phase = .terminating(stopPending: false)
        case .stopRequested: phase = .terminating(stopPending: true)
        case .notLaunched, .terminating: break
        }
    }

    // MARK: The process

    /// Drops a freeze that was due later (the app came back to the foreground, exited, or was exempted).
    func cancelPendingFreeze() {
        pendingFreeze?.cancel()
        pendingFreeze = nil
    }

    /// Whether ``stopProcess(completion:)`` would stop it: a launched process runs, is not stopped
    /// or being stopped, and is not terminating.
    var canStopProcess: Bool {
        guard let process, process.exitStatus == nil else { return false }
        return !process.isSuspended && !stopRequested && !terminating
    }

    /// Stops the running process (cgroup freezer, else `SIGSTOP`), unless it is stopped or being
    /// stopped already, or terminating. The request reaches the loop before this returns, so stop
    /// and resume requests stay in main-actor order.
    ///
    /// - Parameter completion: The kernel's confirmation or the error, on the loop thread.
    /// - Returns: Whether a stop was requested.
    func stopProcess(completion: @escaping @Sendable (Result<Void, AppProcessError>) -> Void) -> Bool {
        guard canStopProcess, let process else { return false }
        requestStop()
        process.suspend(completion: completion)
        return true
    }

    /// Resumes the process if it is stopped or a stop was asked for, and waits for the kernel's
    /// confirmation. Nothing to do for an app without a running process.
    ///
    /// - Throws: ``AppProcessError`` when the resume failed (the process exited, say).
    func resumeProcess() async throws(AppProcessError) {
        guard let process, process.exitStatus == nil, process.isSuspended || stopRequested else { return }
        stopWithdrawn()
        try await process.resume()
    }

    /// Takes back a stop the app has outrun (it reported a running state while the stop for its
    /// earlier `suspended` went out). The request is made at once, in main-actor order with later
    /// stops.
    ///
    /// - Parameter completion: The kernel's confirmation or the error, on the loop thread.
    /// - Returns: Whether a resume was requested.
    func withdrawStaleStop(completion: @escaping @Sendable (Result<Void, AppProcessError>) -> Void) -> Bool {
        guard stopRequested, let process, process.exitStatus == nil else { return false }
        stopWithdrawn()
        process.resume(completion: completion)
        return true
    }

    /// Queues a command until the launched app registers, dropping the oldest beyond `limit`.
    ///
    /// - Returns: Whether the oldest queued command was dropped.
    func enqueue(_ command: String, _ arguments: UserInfo, limit: Int) -> Bool {
        let dropped = pendingCommands.count >= limit
        if dropped { pendingCommands.removeFirst() }
        pendingCommands.append((command, arguments))
        return dropped
    }

    /// Records a background task the app began (`name`) or ended (`nil`).
    func setBackgroundTask(_ task: UInt32, _ name: String?) {
        backgroundTasks[task] = name
    }
}
