import AppLifecycle
import AppLifecycleSystemd
import SystemdBus

/// What the daemon knows about one app: its manifest, its process, its registration and state.
///
/// An app is known because a manifest names it, because lifecycled launched it, or because a
/// process registered under its id (an app started by hand, or one that re-registers after a
/// daemon restart). Only a launched app has a ``process``, so only a launched app is
/// suspended, purged and escalated by the daemon; a registered-only app gets the same
/// commands and signals but is never signalled.
struct HostedApp: Sendable {
    /// The app id.
    let id: String
    /// The manifest, if one names this id.
    var manifest: AppManifest?
    /// The process lifecycled launched, while it runs.
    var process: AppProcess?
    /// The unique bus name the app registered from, while registered.
    var busName: String?
    /// Which launch ``process`` is (so a late exit of an earlier launch is not mistaken for it).
    var launchID = 0
    /// Whether the daemon asked for the process to be stopped and has not resumed it since.
    var stopRequested = false
    /// A `terminate` is under way for the running process: it is never stopped again, whatever it
    /// reports, so it can run its `applicationWillTerminate` and exit.
    var terminating = false
    /// The pid the registration came from (or the launched process), 0 if none.
    var registeredPID: UInt32 = 0
    /// The last state the app reported (`not-running` when it is not running).
    var state: ApplicationState = .notRunning
    /// The launch options of the current launch (returned by `RegisterApp`).
    var launchOptions = LaunchOptions()
    /// Whether the app is to be in the foreground (`false` when launched in the background).
    var foreground = true
    /// The background tasks the app reported as running, by id.
    var backgroundTasks: [UInt32: String] = [:]
    /// Commands for a launched app that has not registered yet, sent once it does.
    var pendingCommands: [(command: String, arguments: UserInfo)] = []
    /// When the app was first known, for a deterministic order (registration order).
    let order: Int

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

    /// The pid to show: the launched process, else the registration's, else 0.
    var pid: UInt32 {
        if let process, process.exitStatus == nil { return UInt32(process.pid) }
        return busName == nil ? 0 : registeredPID
    }

    /// The `(sssu)` entry of `ListApps` / `Apps`: id, state, name, pid.
    var listEntry: BusValue {
        .structure([.string(id), .string(state.rawValue), .string(manifest?.name ?? ""), .uint32(pid)])
    }
}
