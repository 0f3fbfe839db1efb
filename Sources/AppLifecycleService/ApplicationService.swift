import AppLifecycle
import ServiceLifecycle

/// Runs an app as a swift-service-lifecycle `Service`, so it can live in a `ServiceGroup` beside
/// other services.
///
/// `run()` launches the app (letting its host prepare first) and returns when the app has
/// terminated. Graceful shutdown of the group (the group's own SIGTERM handling, or another
/// service finishing) terminates the app through `applicationWillTerminate(_:)`. When the group
/// traps SIGTERM, give the host a configuration without `HostBridge.Source.signals` so the
/// signal is handled in one place. (This sample is compiled by `ApplicationServiceTests`.)
///
/// ```swift
/// let sources = Set(HostBridge.Source.allCases).subtracting([.signals])
/// let service = ApplicationService(host: SystemdHost(configuration: .init(sources: sources))) {
///     AppDelegate()
/// }
/// let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct ApplicationService: Service {
    private let makeApplication: @MainActor @Sendable () -> Application
    private let launchOptions: LaunchOptions

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - host: The host that drives the app.
    ///   - launchOptions: Why the app is launched (default: read from the service manager's environment).
    ///   - configuration: The app's limits.
    ///   - delegate: Makes the app's delegate, on the main actor.
    public init(
        host: @autoclosure @escaping @MainActor @Sendable () -> any ApplicationHost,
        launchOptions: LaunchOptions = .fromServiceManager(),
        configuration: Application.Configuration = Application.Configuration(),
        delegate: @escaping @MainActor @Sendable () -> any ApplicationDelegate
    ) {
        self.launchOptions = launchOptions
        self.makeApplication = { Application(delegate: delegate(), host: host(), configuration: configuration) }
    }

    /// Runs the app until it terminates; graceful shutdown terminates it.
    public func run() async throws {
        let application = await makeApplication()
        let options = launchOptions
        await withGracefulShutdownHandler {
            await application.run(launchOptions: options)
        } onGracefulShutdown: {
            Task { @MainActor in application.handle(.terminate(.hostRequest)) }
        }
    }
}
