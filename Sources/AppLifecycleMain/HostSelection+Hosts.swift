import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import Glibc
import InProcessHost
import LifecycledClient
import Logging

/// The hosts a ``HostSelection`` decides between, built in the one module above both hosts.
extension HostSelection {
    /// Creates the host this selection decides on, and logs the decision.
    ///
    /// - Parameters:
    ///   - appID: The app id for `LifecycledHost` (`nil`: `$LIFECYCLE_APP_ID`, else the app's identifier).
    ///   - configuration: The bridge's configuration; its `HostBridge/Configuration/environment`
    ///     and `HostBridge/Configuration/sessionBus` also drive the decision and the daemon's bus.
    ///   - logger: Where the decision and the host's diagnostics go (the app's,
    ///     `Application/Configuration/logger`).
    /// - Returns: The host and the decision that chose it.
    @MainActor
    public func makeHost(
        appID: String? = nil, configuration: HostBridge.Configuration = HostBridge.Configuration(), logger: Logger
    ) async -> (host: any ApplicationHost, decision: Decision) {
        let (built, decision) = await build(appID: appID, configuration: configuration, logger: logger)
        return (built.host, decision)
    }

    /// A host this selection built, kept typed so that what each needs at exit is known without a cast.
    private enum BuiltHost {
        case lifecycled(LifecycledHost)
        case systemd(SystemdHost)

        var host: any ApplicationHost {
            switch self {
            case .lifecycled(let host): return host
            case .systemd(let host): return host
            }
        }

        /// Sends what the host still holds before the process exits (lifecycled's last reports).
        @MainActor func finish() async {
            switch self {
            case .lifecycled(let host): await host.flush()
            case .systemd: break
            }
        }
    }

    @MainActor
    private func build(
        appID: String?, configuration: HostBridge.Configuration, logger: Logger
    ) async -> (BuiltHost, Decision) {
        let decision = await decide(environment: configuration.environment, sessionBus: configuration.sessionBus)
        logger.info("host: \(decision)")
        switch decision.host {
        case .lifecycled:
            let host = LifecycledHost(
                configuration: LifecycledHost.Configuration(
                    appID: appID, busAddress: configuration.sessionBus, environment: configuration.environment,
                    logger: logger))
            return (.lifecycled(host), decision)
        case .systemd, .automatic:
            return (.systemd(SystemdHost(configuration: configuration)), decision)
        }
    }

    /// Creates the host ``automatic`` decides on, and logs the decision.
    ///
    /// - Parameters:
    ///   - appID: The app id for `LifecycledHost`.
    ///   - configuration: The bridge's configuration (also the environment and bus of the decision).
    ///   - logger: Where the decision and the host's diagnostics go.
    @MainActor
    public static func makeHost(
        appID: String? = nil, configuration: HostBridge.Configuration = HostBridge.Configuration(), logger: Logger
    ) async -> any ApplicationHost {
        await HostSelection.automatic.makeHost(appID: appID, configuration: configuration, logger: logger).host
    }

    /// Picks the host, runs the app until it terminates, and exits the process.
    ///
    /// Like `Application/main(delegate:host:launchOptions:configuration:)`, but with a
    /// `LifecycledHost` the host is prepared first, so the launch options `lifecycled` returns
    /// from `RegisterApp` are the ones the app launches with; and the last reports are flushed
    /// before the process exits.
    ///
    /// - Parameters:
    ///   - delegate: The app's delegate.
    ///   - selection: Which host to use.
    ///   - appID: The app id for `LifecycledHost`.
    ///   - configuration: The bridge's configuration.
    ///   - applicationConfiguration: The app's limits.
    @MainActor
    public static func main(
        delegate: any ApplicationDelegate, selection: HostSelection = .automatic, appID: String? = nil,
        configuration: HostBridge.Configuration = HostBridge.Configuration(),
        applicationConfiguration: Application.Configuration = Application.Configuration()
    ) async -> Never {
        let (built, _) = await selection.build(
            appID: appID, configuration: configuration, logger: applicationConfiguration.logger)
        let app = Application(delegate: delegate, host: built.host, configuration: applicationConfiguration)
        // run() lets the host prepare and lays lifecycled's launch options over these.
        await app.run(launchOptions: .fromServiceManager(environment: configuration.environment))
        await built.finish()
        exit(0)
    }
}

extension Application {
    /// Creates the app, picks its host, runs it until it terminates, and exits: `UIApplicationMain`
    /// for an app that `lifecycled` may host.
    ///
    /// With ``HostSelection/automatic`` (the default) the app connects to `lifecycled` when the
    /// daemon launched it (`$LIFECYCLE_APP_ID`), when `$LIFECYCLE_USE_DAEMON=1`, or when the daemon's
    /// name has an owner or is activatable on the session bus (and not when `$LIFECYCLE_USE_DAEMON=0`); otherwise it
    /// runs on the in-process bridge (``SystemdHost``). The same delegate works both ways.
    ///
    /// - Parameters:
    ///   - hostSelection: Which host to use.
    ///   - appID: The app id for lifecycled (default: `$LIFECYCLE_APP_ID`, else the configuration's identifier).
    ///   - configuration: The app's limits.
    public static func main(
        delegate: any ApplicationDelegate, hostSelection: HostSelection = .automatic, appID: String? = nil,
        configuration: Application.Configuration = Application.Configuration()
    ) async -> Never {
        await HostSelection.main(
            delegate: delegate, selection: hostSelection, appID: appID, applicationConfiguration: configuration)
    }
}
