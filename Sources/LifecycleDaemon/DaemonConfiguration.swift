import AppLifecycleSystemd
import FoundationEssentials
import Logging
import SystemdBus

/// How a ``LifecycleDaemon`` runs: its bus, its apps, its host sources and its deadlines.
///
/// The defaults are those of the real daemon in a user session; tests pass a private bus, a
/// temporary apps directory, no host sources and short deadlines.
package struct DaemonConfiguration: Sendable {
    /// The bus to serve on (the session bus by default).
    var busAddress: BusConnection.Address = .session
    /// The apps directories to read, most important first; `nil` reads the XDG data directories.
    var appsDirectories: [String]?
    /// Whether `Simulate` is accepted (`--enable-simulate`).
    var simulationEnabled = false
    /// The host-bridge sources to start; `[]` starts none (tests inject facts with `Simulate`).
    var bridgeSources: Set<HostBridge.Source> = Set(HostBridge.Source.allCases)
    /// The system bus the bridge uses for logind, timedated and low-memory-monitor.
    var systemBus: BusConnection.Address = .system
    /// How long a terminated app gets before `SIGTERM`, and after it before `SIGKILL`.
    var termination = TerminationPolicy()
    /// The longest the daemon waits for apps to suspend before it lets the machine sleep;
    /// `nil` uses logind's `InhibitDelayMaxUSec` minus the bridge's margin. Never more than that.
    var sleepDeadline: Duration?
    /// Variables added to every launched app's environment.
    var appEnvironment: [String: String] = [:]
    /// Whether each launched app gets a cgroup of its own (so the freezer suspends it).
    var appCgroups: AppCgroupPlacement.Mode = .automatic
    /// Whether, with ``appCgroups`` automatic, the daemon may move itself into a leaf of its cgroup
    /// to give the apps' cgroups the memory controller: lifecycled's main says yes; a daemon in a
    /// test process (whose cgroup is the test runner's) leaves its process where it is.
    package var movesIntoLeafCgroup = false
    /// Where the schedule of local notifications is kept; `nil`: `$STATE_DIRECTORY`, else
    /// `$XDG_STATE_HOME/lifecycled`, else `~/.local/state/lifecycled` (`RestorationArchive.defaultDirectory`'s rule).
    var stateDirectory: String?
    /// The `lifecycled.conf` to read (`--config`); `nil`: the XDG and `/etc` defaults
    /// (``FleetConfiguration/locate(explicit:environment:)``).
    var fleetConfigurationPath: String?
    /// The most pushes held for apps in all (``PushQueue/capacity``); beyond it the broker keeps them.
    var pushQueueCapacity = PushQueue.defaultCapacity
    /// How the windows move apps (the foreground mode, the freeze delay of plain programs, the window
    /// source), before `lifecycled.conf`'s `[lifecycle]` section applies over it.
    var lifecycle = LifecycleSettings.defaults
    /// How long a window set in which no window has the focus waits for the next before it is
    /// applied: window managers clear the focus before they give it (openbox), and an app must not
    /// resign active and become active again for that.
    var windowSettleDelay: Duration = .milliseconds(50)
    /// How long a window set that shows a new window without the focus waits for the next: KWin
    /// describes a new window before it activates it, after the client's first frame (19 ms apart
    /// on an idle machine, 95 ms under the test suite's load), and an app just launched must not
    /// go to the background meanwhile.
    var newWindowSettleDelay: Duration = .milliseconds(250)
    /// Where `WAYLAND_DISPLAY` and `DISPLAY` are read from; `nil`: lifecycled's own environment.
    var windowEnvironment: [String: String]?
    /// The cgroup files the memory reclaim of frozen apps reads and writes (``CgroupMemoryReclaimer``);
    /// tests play the kernel's answers through it.
    var memoryReclaimFiles: CgroupMemoryReclaimer.FileAccess = .system
    /// Where the daemon tells what happens: the executable's (`lifecycled` writes to the journal
    /// under systemd); the daemon's parts take theirs from it.
    var logger: Logger

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - busAddress: The bus to serve on.
    ///   - appsDirectories: The apps directories, or `nil` for the XDG ones.
    ///   - simulationEnabled: Whether `Simulate` is accepted.
    ///   - bridgeSources: The host sources to start.
    ///   - systemBus: The system bus for the bridge's clients.
    ///   - termination: The termination deadlines.
    ///   - sleepDeadline: The cap on waiting for apps before sleep.
    ///   - appEnvironment: Extra environment for launched apps.
    ///   - appCgroups: Where launched apps' cgroups are created.
    ///   - stateDirectory: Where the schedule, the push registrations and the push queue are kept.
    ///   - fleetConfigurationPath: The `lifecycled.conf` to read.
    ///   - logger: Where the daemon tells what happens.
    package init(
        busAddress: BusConnection.Address = .session, appsDirectories: [String]? = nil, simulationEnabled: Bool = false,
        bridgeSources: Set<HostBridge.Source> = Set(HostBridge.Source.allCases),
        systemBus: BusConnection.Address = .system,
        termination: TerminationPolicy = TerminationPolicy(), sleepDeadline: Duration? = nil,
        appEnvironment: [String: String] = [:], appCgroups: AppCgroupPlacement.Mode = .automatic,
        stateDirectory: String? = nil, fleetConfigurationPath: String? = nil, logger: Logger
    ) {
        self.logger = logger
        self.stateDirectory = stateDirectory
        self.fleetConfigurationPath = fleetConfigurationPath
        self.busAddress = busAddress
        self.appsDirectories = appsDirectories
        self.simulationEnabled = simulationEnabled
        self.bridgeSources = bridgeSources
        self.systemBus = systemBus
        self.termination = termination
        self.sleepDeadline = sleepDeadline
        self.appEnvironment = appEnvironment
        self.appCgroups = appCgroups
    }

    /// The environment every launched app gets on top of the daemon's own.
    ///
    /// When the daemon serves an explicit address, the apps must register on that bus, so
    /// `DBUS_SESSION_BUS_ADDRESS` points there.
    var launchEnvironment: [String: String] {
        var environment = appEnvironment
        if case .address(let address) = busAddress { environment["DBUS_SESSION_BUS_ADDRESS"] = address }
        return environment
    }
}
