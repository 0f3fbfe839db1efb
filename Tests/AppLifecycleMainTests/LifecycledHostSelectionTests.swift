import AppLifecycle
import AppLifecycleMain
import AppLifecycleSystemd
import AppLifecycleTesting
import InProcessHost
import LifecycledClient
import LifecycledTestSupport
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("HostSelection decides between lifecycled and the in-process bridge")
struct LifecycledHostSelectionTests {
    @Test("the environment decides first: LIFECYCLE_USE_DAEMON=0 wins, =1 and LIFECYCLE_APP_ID choose lifecycled")
    func environment() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let address = BusConnection.Address.address(bus.address)
        let off = await HostSelection.automatic.decide(
            environment: ["LIFECYCLE_USE_DAEMON": "0", "LIFECYCLE_APP_ID": "org.example.Counter"], sessionBus: address)
        #expect(off.host == .systemd)
        #expect(off.reason.contains("LIFECYCLE_USE_DAEMON=0"))
        let on = await HostSelection.automatic.decide(environment: ["LIFECYCLE_USE_DAEMON": "1"], sessionBus: address)
        #expect(on.host == .lifecycled)
        let launched = await HostSelection.automatic.decide(
            environment: ["LIFECYCLE_APP_ID": "org.example.Counter"], sessionBus: address)
        #expect(launched.host == .lifecycled)
        #expect(launched.reason.contains("org.example.Counter"))
        #expect(
            await HostSelection.systemd.decide(environment: ["LIFECYCLE_USE_DAEMON": "1"], sessionBus: address).host
                == .systemd)
        #expect(
            await HostSelection.lifecycled.decide(environment: ["LIFECYCLE_USE_DAEMON": "0"], sessionBus: address).host
                == .lifecycled)
    }

    @Test(
        "otherwise the bus decides: lifecycled when its name has an owner, the bridge when not or when the bus is unreachable"
    )
    func bus() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let address = BusConnection.Address.address(bus.address)
        let none = await HostSelection.automatic.decide(environment: [:], sessionBus: address)
        #expect(none.host == .systemd)
        #expect(none.reason.contains("no owner"))

        let loop = try EventLoop(name: "fake-daemon")
        defer { loop.shutdown() }
        let fake = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { fake.connection.close() }
        let owned = await HostSelection.automatic.decide(environment: [:], sessionBus: address)
        #expect(owned.host == .lifecycled)
        #expect(owned.reason.contains(fake.connection.uniqueName))

        let unreachable = await HostSelection.automatic.decide(
            environment: [:], sessionBus: .address("unix:path=\(bus.directory.path)/no-such-socket"))
        #expect(unreachable.host == .systemd)
        #expect(unreachable.reason.contains("did not answer"))
    }

    @MainActor @Test("makeHost builds the host the decision names")
    func makeHost() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let configuration = HostBridge.Configuration(
            sources: [], systemBus: .address(bus.address), sessionBus: .address(bus.address),
            environment: ["LIFECYCLE_APP_ID": "org.example.Counter"])
        let logger = Logger(label: "AppLifecycleMainTests")
        let (host, decision) = await HostSelection.automatic.makeHost(configuration: configuration, logger: logger)
        #expect(decision.host == .lifecycled)
        #expect(host is LifecycledHost)
        var systemd = configuration
        systemd.environment = ["LIFECYCLE_USE_DAEMON": "0"]
        #expect(await HostSelection.makeHost(configuration: systemd, logger: logger) is SystemdHost)
    }
}
