import AppLifecycle
import AppLifecycleSystemd
import ArgumentParser
import CommandLineSupport
import FoundationEssentials
import LifecycleDaemon
import Logging
import SystemdBus

/// The `lifecycled` command: the per-session host daemon.
///
/// `lifecycled [--address ADDR] [--apps-directory DIR]... [--enable-simulate] [--no-host-sources] [--app-cgroups auto|off|DIR] [--check]`
///
/// It serves `org.applifecycle.Lifecycled1` on the session bus (or `--address`) until SIGTERM,
/// SIGINT, a logind shutdown or `Simulate terminate`, then terminates its apps and exits 0.
/// Exit status 1: it cannot start (for example another lifecycled owns the name), or its bus closed
/// the connection (the unit's `Restart=on-failure` then starts it again); 2: a
/// usage error. `--check` only loads the manifests, prints them and every rejected file, and
/// exits 1 if any was rejected.
@main
struct Lifecycled: AsyncParsableCommand, UsageErrorExit {
    /// The command's name and help.
    static let configuration = CommandConfiguration(
        commandName: "lifecycled",
        abstract: "Host Linux apps with the iOS app lifecycle on the session bus.",
        version: PackageVersion.current)

    /// The bus address to serve on instead of the session bus.
    @Option(name: .customLong("address"), help: "The D-Bus address to serve on (default: the session bus).")
    var address: String?

    /// Apps directories to read instead of the XDG ones.
    @Option(
        name: .customLong("apps-directory"),
        help: "An apps directory to read instead of the XDG ones (repeatable, most important first).")
    var appsDirectories: [String] = []

    /// Whether `Simulate` is accepted.
    @Flag(name: .customLong("enable-simulate"), help: "Accept the Simulate method (for tests and demos).")
    var enableSimulate = false

    /// Whether the host sources (logind, screensaver, clock, memory pressure…) stay off.
    @Flag(name: .customLong("no-host-sources"), help: "Start no host sources except SIGTERM/SIGINT and the watchdog.")
    var noHostSources = false

    /// Host sources to start beside SIGTERM/SIGINT and the watchdog, instead of all of them.
    @Option(
        name: .customLong("host-source"),
        help: ArgumentHelp(
            "Start only this host source besides SIGTERM/SIGINT and the watchdog (repeatable).",
            discussion: "One of: \(HostBridge.Source.allCases.map(\.rawValue).joined(separator: ", ")).",
            valueName: "source"))
    var hostSources: [String] = []

    /// Where launched apps get cgroups of their own: `auto`, `off`, or a cgroup2 directory.
    @Option(
        name: .customLong("app-cgroups"),
        help: ArgumentHelp(
            "Give each app a cgroup of its own under the daemon's delegated cgroup (auto), never (off), or under this cgroup2 directory; frozen apps use the cgroup freezer, others SIGSTOP.",
            valueName: "auto|off|dir"))
    var appCgroups = "auto"

    /// Where the schedule of local notifications is kept.
    @Option(
        name: .customLong("state-directory"),
        help: ArgumentHelp(
            "Keep the schedule of local notifications here (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/lifecycled).",
            valueName: "dir"))
    var stateDirectory: String?

    /// The push and fleet configuration file.
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "Read the broker, push and window settings from this file (default: $XDG_CONFIG_HOME/applifecycle/lifecycled.conf, else /etc/applifecycle/lifecycled.conf).",
            valueName: "file"))
    var config: String?

    /// Whether to only check the manifests and the configuration file.
    @Flag(
        help:
            "Only load the manifests and the configuration file, print them and exit (1 if a manifest is rejected or the file has a problem)."
    )
    var check = false

    /// Rejects an empty address.
    ///
    /// - Throws: A validation error (exit status 2).
    func validate() throws {
        if let address, address.isEmpty { throw ValidationError("--address must not be empty") }
        if let stateDirectory, !stateDirectory.hasPrefix("/") {
            throw ValidationError("--state-directory must be an absolute path, not '\(stateDirectory)'")
        }
        if let config, config.isEmpty { throw ValidationError("--config must not be empty") }
        if appsDirectories.contains(where: \.isEmpty) { throw ValidationError("--apps-directory must not be empty") }
        if !["auto", "off"].contains(appCgroups) && !appCgroups.hasPrefix("/") {
            throw ValidationError(
                "--app-cgroups must be auto, off or an absolute cgroup2 directory, not '\(appCgroups)'")
        }
        for source in hostSources where HostBridge.Source(rawValue: source) == nil {
            throw ValidationError(
                "--host-source '\(source)' is not a host source (\(HostBridge.Source.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        if noHostSources && !hostSources.isEmpty {
            throw ValidationError("--no-host-sources and --host-source contradict each other; give one of them")
        }
    }

    /// The daemon's configuration from the options.
    var daemonConfiguration: DaemonConfiguration {
        var configuration = DaemonConfiguration(
            busAddress: address.map { .address($0) } ?? .session,
            appsDirectories: appsDirectories.isEmpty ? nil : appsDirectories,
            simulationEnabled: enableSimulate,
            bridgeSources: noHostSources
                ? [.signals, .watchdog]
                : hostSources.isEmpty
                    ? Set(HostBridge.Source.allCases)
                    : Set(hostSources.compactMap(HostBridge.Source.init(rawValue:))).union([.signals, .watchdog]),
            appCgroups: appCgroups == "auto" ? .automatic : appCgroups == "off" ? .off : .under(appCgroups),
            stateDirectory: stateDirectory, fleetConfigurationPath: config, logger: Logger(label: "lifecycled"))
        // The daemon's own process: it may move into its leaf cgroup for the apps' memory controller.
        configuration.movesIntoLeafCgroup = true
        return configuration
    }

    /// Runs the daemon (or the manifest check).
    ///
    /// - Throws: `ExitCode(1)` when the daemon cannot start or `--check` found a rejected manifest.
    func run() async throws {
        if check { return try checkManifests() }
        // Under systemd, structured journal entries (priority, APP_ID=…); elsewhere lines on stderr.
        JournalLogHandler.bootstrap(identifier: "lifecycled", environment: ProcessInfo.processInfo.environment)
        let daemon = await LifecycleDaemon(configuration: daemonConfiguration)
        do {
            try await daemon.start()
        } catch {
            StandardError.write(line: "lifecycled: \(error)")
            throw ExitCode(1)
        }
        await daemon.run()
        // Without its bus it serves nobody: a failure, so that Restart=on-failure brings it back.
        if await daemon.lostTheBus { throw ExitCode(1) }
    }

    private func checkManifests() throws {
        let store = appsDirectories.isEmpty ? ManifestStore() : ManifestStore(directories: appsDirectories)
        for entry in store.entries.values.sorted(by: { $0.manifest.id < $1.manifest.id }) {
            let schemes =
                entry.manifest.urlSchemes.isEmpty ? "" : " schemes=\(entry.manifest.urlSchemes.joined(separator: ","))"
            print("\(entry.manifest.id)\t\(entry.manifest.executable)\(schemes)\t(\(entry.path))")
        }
        for error in store.errors {
            StandardError.write(line: "lifecycled: \(error)")
        }
        let configuration = LifecycleDaemon.ConfigurationCheck(
            explicit: config, environment: ProcessInfo.processInfo.environment)
        if let path = configuration.path {
            print("configuration\t\(configuration.problems.isEmpty ? "good" : "has problems")\t(\(path))")
        } else {
            print("configuration\tnone (no lifecycled.conf: no fleet, default [lifecycle] settings)")
        }
        for problem in configuration.problems {
            StandardError.write(line: "lifecycled: \(problem)")
        }
        if !store.errors.isEmpty || !configuration.problems.isEmpty { throw ExitCode(1) }
    }

    /// Parses the command line and runs; usage errors exit 2 (``UsageErrorExit``).
    static func main() async {
        await runMain()
    }
}
