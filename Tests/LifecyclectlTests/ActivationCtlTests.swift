import Foundation
import Glibc
import LifecycledClient
import LifecycledTestSupport
import SystemdBus
import SystemdBusTesting
import Testing

@testable import lifecyclectl

@Suite("lifecyclectl starts an installed lifecycled through D-Bus activation", .serialized, .timeLimit(.minutes(2)))
struct ActivationCtlTests {
    /// A private bus whose service directory holds lifecycled's D-Bus service file, pointing at the
    /// built binary on that bus, as `make install` installs it for the session bus.
    /// The body gets the bus and a function that returns the pid of the running daemon (which the
    /// fixture stops after the body, by that pid, even when the body fails).
    private static func withInstalledDaemon(
        _ body: (BusTestEnvironment, _ daemonPID: () async throws -> pid_t?) async throws -> Void
    ) async throws {
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let services = try TemporaryDirectory(prefix: "dbus-services")
        defer { services.remove() }
        let apps = try TemporaryDirectory(prefix: "lifecycled-apps")
        defer { apps.remove() }
        try await BusTestEnvironment.with(serviceDirectory: services.path) { env in
            try installLifecycledService(
                in: services, binary: binary, busAddress: env.bus.address, appsDirectory: apps.path)
            try await env.connection.reloadBusConfiguration()
            var started: [pid_t] = []
            defer { started.forEach(ChildProcess.terminate(activatedService:)) }
            func daemonPID() async throws -> pid_t? {
                guard let owner = try await env.connection.nameOwner(LifecycledProtocol.busName) else { return nil }
                return try await env.connection.credentials(of: owner).pid.map { pid_t($0) }
            }
            do {
                try await body(env) {
                    let pid = try await daemonPID()
                    if let pid { started.append(pid) }
                    return pid
                }
            } catch {
                if let pid = try? await daemonPID() { started.append(pid) }
                throw error
            }
            if let pid = try await daemonPID() { started.append(pid) }
        }
    }

    @Test("status on a bus where lifecycled is installed but not running starts it and prints its status")
    func statusActivates() async throws {
        try await Self.withInstalledDaemon { env, _ in
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
        try await Self.withInstalledDaemon { env, daemonPID in
            let capture = Capture()
            let task = Task {
                await MonitorCommand.invoke(["--address", env.bus.address], output: capture.output)
            }
            defer { task.cancel() }
            try await capture.changes.wait(for: "monitor ready") { capture.ready }
            let pid = try #require(try await daemonPID())
            kill(pid, SIGTERM)
            try await capture.changes.wait(for: "the daemon to go away") {
                capture.out.contains { $0.hasSuffix("-- lifecycled went away; waiting for it to return") }
            }
            task.cancel()
            #expect(await task.value == 0)
            #expect(capture.err.isEmpty, "\(capture.err)")
        }
    }
}
