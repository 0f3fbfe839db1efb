import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import LifecycledTestSupport
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// The daemon's bridge on a real (python-dbusmock) logind: one sleep delay inhibitor for the
/// session, released when every hosted app is suspended and really stopped, taken again on wake.
@Suite("lifecycled on logind", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonLogindTests {
    @Test func oneSessionSleepLockReleasedWhenAppsAreStoppedAndRetakenOnWake() async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let sessionBus = try PrivateBus()
        defer { sessionBus.stop() }
        let logind = try DBusMock(template: "logind", address: systemBus.address)
        defer { logind.stop() }
        _ = try logind.addSession(id: "c1", uid: getuid(), username: "tester", active: true)
        let directory = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(directory), withIntermediateDirectories: true)
        let counter = "org.example.Counter"
        try writeManifest(
            directory, id: counter, executable: products + "/counter-app",
            arguments: ["--host", "lifecycled", "--state-directory", directory.path + "/state"])

        let daemon = LifecycleDaemon(
            configuration: DaemonConfiguration(
                busAddress: .address(sessionBus.address), appsDirectories: [appsDirectory(directory)],
                simulationEnabled: false,
                bridgeSources: [.logind], systemBus: .address(systemBus.address),
                termination: TerminationPolicy(deadline: .milliseconds(500), grace: .milliseconds(500)),
                sleepDeadline: .seconds(20), stateDirectory: directory.path + "/daemon-state",
                logger: Logger(label: "lifecycled")))
        try await daemon.start()
        let client = try await DaemonTestClient(address: sessionBus.address, name: "logind-test")
        let h = DaemonHarness(bus: sessionBus, directory: directory, daemon: daemon, client: client)
        defer { client.close() }
        do {
            func inhibitors() throws -> String {
                try logind.call(interface: "org.freedesktop.login1.Manager", method: "ListInhibitors")
            }
            #expect(try inhibitors().contains("'sleep', 'lifecycled'"))
            try await client.call(
                LifecycledProtocol.Method.launch.name, [.string(counter), UserInfoBusCodec.encode(UserInfo())])
            try await client.log.waitForState(counter, .active)

            try logind.emitSignal(
                interface: "org.freedesktop.login1.Manager", name: "PrepareForSleep", signature: "b",
                arguments: ["true"])
            #expect(try await h.waitForSleepRelease() == "all-suspended")
            let pid = try #require(h.pid(counter))
            #expect(processState(pid) == "T", "counter-app (pid \(pid)) is not stopped")
            #expect(
                try await eventually { try !inhibitors().contains("'sleep', 'lifecycled'") },
                "the session's sleep lock is still held")

            try logind.emitSignal(
                interface: "org.freedesktop.login1.Manager", name: "PrepareForSleep", signature: "b",
                arguments: ["false"])
            try await client.log.wait(for: "counter active again") {
                $0.stateChanges(counter).filter { $0.hasSuffix("->active") }.count >= 2
            }
            #expect(processState(pid) != "T")
            #expect(try inhibitors().contains("'sleep', 'lifecycled'"), "the sleep lock was not taken again on wake")
        } catch {
            await daemon.shutdown(reason: .hostRequest)
            throw error
        }
        await daemon.shutdown(reason: .hostRequest)
    }
}
