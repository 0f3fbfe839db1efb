import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
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
}
