import Foundation
import Glibc
import LifecycledProtocol
import LifecycledTestSupport
import SystemdBus
import SystemdBusTesting
import Testing

@testable import lifecyclectl

@Suite("lifecyclectl starts an installed lifecycled through D-Bus activation", .serialized, .timeLimit(.minutes(2)))
struct ActivationCtlTests {
    /// A private bus whose service directory holds lifecycled's D-Bus service file, pointing at the
    /// built binary on that bus, as `make install` installs it for the session bus. Whatever daemon
    /// the test activated is stopped by its pid afterwards, also when the test fails.
    private static func withInstalledDaemon(_ body: (BusTestEnvironment) async throws -> Void) async throws {
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let services = try TemporaryDirectory(prefix: "dbus-services")
        defer { services.remove() }
        let apps = try TemporaryDirectory(prefix: "lifecycled-apps")
        defer { apps.remove() }
        try await BusTestEnvironment.with(serviceDirectory: services.path) { env in
            try installLifecycledService(
                in: services, binary: binary, busAddress: env.bus.address, appsDirectory: apps.path)
            try await env.connection.reloadBusConfiguration()
            try await env.connection.stoppingActivatedServices([LifecycledProtocol.busName]) { try await body(env) }
        }
    }

    @Test("status on a bus where lifecycled is installed but not running starts it and prints its status")
    func statusActivates() async throws {
        try await Self.withInstalledDaemon { env in
            #expect(try await env.connection.nameOwner(LifecycledProtocol.busName) == nil)
            let capture = Capture()
            let status = await StatusCommand.invoke(["--address", env.bus.address], output: capture.output)
            #expect(status == 0, "\(capture.err)")
            let owner = try #require(try await env.connection.nameOwner(LifecycledProtocol.busName))
            #expect(capture.out.first == "lifecycled: running as \(owner), protocol \(LifecycledProtocol.version)")
            #expect(capture.out.contains("apps: 0 known, 0 running"))
        }
    }

    @Test("monitor starts it, then follows it: the daemon it started going away is its next line")
    func monitorActivates() async throws {
        try await Self.withInstalledDaemon { env in
            let capture = Capture()
            let task = Task {
                await MonitorCommand.invoke(["--address", env.bus.address], output: capture.output)
            }
            defer { task.cancel() }
            try await capture.changes.wait(for: "monitor ready") { capture.ready }
            // Stopped by the pid the bus names now (SIGTERM, then waited for).
            #expect(await env.connection.stopOwner(of: LifecycledProtocol.busName) != nil)
            try await capture.changes.wait(for: "the daemon to go away") {
                capture.out.contains { $0.hasSuffix("-- lifecycled went away; waiting for it to return") }
            }
            task.cancel()
            #expect(await task.value == 0)
            #expect(capture.err.isEmpty, "\(capture.err)")
        }
    }
}
