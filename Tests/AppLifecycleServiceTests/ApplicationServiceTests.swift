import AppLifecycle
import AppLifecycleService
import AppLifecycleSystemd
import AppLifecycleTesting
import InProcessHost
import Logging
import ServiceLifecycle
import Testing

@Suite("Application as a swift-service-lifecycle Service")
struct ApplicationServiceTests {
    @MainActor final class Delegate: ApplicationDelegate {
        var calls: [String] = []
        func applicationDidBecomeActive(_ application: Application) { calls.append("active") }
        func applicationWillTerminate(_ application: Application) { calls.append("terminate") }
    }

    @MainActor @Test("graceful shutdown of the group terminates the app through applicationWillTerminate")
    func gracefulShutdownTerminates() async throws {
        let delegate = Delegate()
        let service = ApplicationService(host: VirtualHost()) { delegate }
        let group = ServiceGroup(services: [service], logger: Logger(label: "test"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            while delegate.calls.isEmpty { await Task.yield() }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(delegate.calls == ["active", "terminate"])
    }

    /// The delegate the documentation sample names.
    @MainActor final class AppDelegate: ApplicationDelegate {}

    /// `ApplicationService`'s documentation sample, verbatim between the markers, so the compiler
    /// checks that every name in it exists. It is not run: running it would trap SIGTERM in the
    /// test process, which other suites signal.
    static func documentationSample(logger: Logger) async throws {
        // Sample start.
        let sources = Set(HostBridge.Source.allCases).subtracting([.signals])
        let service = ApplicationService(host: SystemdHost(configuration: .init(sources: sources))) {
            AppDelegate()
        }
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], logger: logger)
        try await group.run()
        // Sample end.
    }

    @Test("the documentation sample compiles, and its sources leave SIGTERM to the group")
    func documentationSampleCompiles() {
        let sample: (Logger) async throws -> Void = Self.documentationSample
        _ = sample
        #expect(!Set(HostBridge.Source.allCases).subtracting([.signals]).contains(.signals))
    }
}
