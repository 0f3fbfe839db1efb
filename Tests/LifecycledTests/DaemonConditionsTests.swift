import AppLifecycle
import AppLifecycleSystemd
import FetchScheduling
import Foundation
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// The device's conditions through lifecycled, watched once for every app: python-dbusmock's
/// power-profiles-daemon and iio-sensor-proxy on a private system bus, counter-app hosted, and what
/// the app posted (its notifications reach the daemon) checked in order.
@Suite("lifecycled and the device's conditions", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonConditionsTests {
    nonisolated static let counter = "org.example.Counter"
    nonisolated static let powerState = "NSProcessInfoPowerStateDidChangeNotification"
    nonisolated static let thermal = "NSProcessInfoThermalStateDidChangeNotification"
    nonisolated static let refresh = "UIApplicationBackgroundRefreshStatusDidChangeNotification"
    nonisolated static let orientation = "UIApplicationDidChangeStatusBarOrientationNotification"

    /// A daemon with only the conditions source, on `systemBus`, and counter-app's manifest.
    func withConditionsDaemon(
        systemBus: PrivateBus, configure: @escaping (inout DaemonConfiguration) -> Void = { _ in },
        _ body: (DaemonHarness) async throws -> Void
    ) async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        try await withDaemon(
            systemBus: .address(systemBus.address),
            configure: {
                $0.bridgeSources = [.deviceConditions]
                configure(&$0)
            },
            setUp: { directory in
                try writeManifest(
                    directory, id: Self.counter, executable: products + "/counter-app",
                    arguments: ["--host", "lifecycled", "--state-directory", directory.path + "/state"])
            }, body)
    }

    @Test("Low Power Mode: in the registration's facts, then live: the app's power-state and refresh notifications")
    func lowPowerModeAndThermalReachTheApp() async throws {
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let ppd = try DBusMock(template: "power_profiles_daemon", address: systemBus.address)
        defer { ppd.stop() }
        let ppdInterface = "net.hadess.PowerProfiles"
        try ppd.updateProperties(interface: ppdInterface, properties: ["ActiveProfile": "'power-saver'"])
        try await withConditionsDaemon(systemBus: systemBus) { h in
            // An app registering now starts in Low Power Mode, background refresh restricted.
            let probe = try await FakeApp("org.example.Probe", address: h.bus.address)
            defer { probe.close() }
            let (_, facts) = try await probe.register()
            #expect(facts["low-power-mode"] == .bool(true))
            #expect(facts["background-refresh-status"] == .int(Int64(BackgroundRefreshStatus.restricted.rawValue)))
            #expect(facts["thermal-state"] == nil, "nominal is what an app starts with")

            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), encodeInfo(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)
            try ppd.updateProperties(interface: ppdInterface, properties: ["ActiveProfile": "'balanced'"])
            try await h.emitted.wait(for: "the app's refresh notification") {
                !$0.notifications(Self.counter, Self.refresh).isEmpty
            }
            try ppd.updateProperties(
                interface: ppdInterface, properties: ["PerformanceDegraded": "'high-operating-temperature'"])
            try await h.emitted.wait(for: "the app's thermal notification") {
                !$0.notifications(Self.counter, Self.thermal).isEmpty
            }
            #expect(
                h.emitted.commands(Self.counter).filter {
                    ["low-power-mode", "background-refresh-status", "thermal-state"].contains($0)
                } == ["low-power-mode", "background-refresh-status", "thermal-state"])
            #expect(h.emitted.notifications(Self.counter, Self.powerState).count == 1)
            let names = h.emitted.all.filter {
                $0.member == LifecycledProtocol.Signal.notification.name && $0.arguments[0].stringValue == Self.counter
            }.compactMap { $0.arguments[1].stringValue }.filter {
                [Self.powerState, Self.refresh, Self.thermal].contains($0)
            }
            #expect(names == [Self.powerState, Self.refresh, Self.thermal])
        }
    }

    @Test("the accelerometer: claimed while an app is active, released when none is; the lock holds the status bar")
    func accelerometerFollowsTheActiveApp() async throws {
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let sensor = try DBusMock(
            template: "iio-sensors-proxy", address: systemBus.address,
            parameters: #"{"has_accelerometer": true, "accelerometer_orientation": "normal"}"#)
        defer { sensor.stop() }
        let ppd = try DBusMock(template: "power_profiles_daemon", address: systemBus.address)
        defer { ppd.stop() }
        func orient(_ value: String) throws {
            try sensor.call(
                interface: DBusMock.mockInterface, method: "SetInternalProperty",
                arguments: ["'net.hadess.SensorProxy'", "'AccelerometerOrientation'", "<'\(value)'>"])
        }
        try await withConditionsDaemon(systemBus: systemBus) { h in
            // No app is active: the sensor is not kept powered.
            try await h.client.barrier()
            #expect(try sensor.callCount("ClaimAccelerometer") == 0)
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), encodeInfo(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)
            #expect(try await eventually { try sensor.callCount("ClaimAccelerometer") == 1 }, "not claimed")

            try orient("left-up")
            try await h.emitted.wait(for: "the app's orientation notification") {
                $0.notifications(Self.counter, Self.orientation).count == 1
            }
            // Locked: a turn moves nothing. The next fact (Low Power Mode) arrives after it, so its
            // arrival proves the turn was passed over, without waiting on the clock.
            h.daemon.bridge?.isOrientationLocked = true
            try orient("right-up")
            try ppd.updateProperties(
                interface: "net.hadess.PowerProfiles", properties: ["ActiveProfile": "'power-saver'"])
            try await h.emitted.wait(for: "Low Power Mode") { $0.commands(Self.counter).contains("low-power-mode") }
            #expect(h.emitted.commands(Self.counter).filter { $0 == "status-bar-orientation" }.count == 1)
            #expect(h.emitted.notifications(Self.counter, Self.orientation).count == 1)
            // Locked, nothing reads the sensor: it is released.
            #expect(try await eventually { try sensor.callCount("ReleaseAccelerometer") == 1 }, "not released")
            // Unlocked: claimed again, and the orientation it reads is reported.
            h.daemon.bridge?.isOrientationLocked = false
            try await h.emitted.wait(for: "the orientation after the unlock") {
                $0.notifications(Self.counter, Self.orientation).count == 2
            }
            #expect(try sensor.callCount("ClaimAccelerometer") == 2)

            // No app active any more: released.
            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(Self.counter)])
            _ = try await h.waitForExit(Self.counter)
            #expect(try await eventually { try sensor.callCount("ReleaseAccelerometer") == 2 }, "not released")
        }
    }

    @Test("the fetch scheduler's conditions follow NetworkManager and UPower; a user's switch denies the app")
    func fetchConditionsFollowTheServices() async throws {
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let manager = "/org/freedesktop/NetworkManager"
        let network = try DBusMock(template: "networkmanager", address: systemBus.address)
        defer { network.stop() }
        try network.addProperty(
            path: manager, interface: "org.freedesktop.NetworkManager", name: "Metered", value: "uint32 1")
        let power = try DBusMock(template: "upower", address: systemBus.address, parameters: #"{"OnBattery": true}"#)
        defer { power.stop() }
        try await withConditionsDaemon(systemBus: systemBus) { h in
            #expect(
                try await eventually { h.daemon.fetchScheduler.conditions.isMetered == true },
                "the scheduler did not hear that the network is metered")
            #expect(h.daemon.fetchScheduler.conditions.hasFullConnectivity == true)
            try network.updateProperties(
                path: manager, interface: "org.freedesktop.NetworkManager", properties: ["Metered": "uint32 2"])
            #expect(try await eventually { h.daemon.fetchScheduler.conditions.isMetered == false }, "still metered")

            // The user turns background refresh off for the running app: it hears that it is denied.
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), encodeInfo(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)
            try await h.client.call(
                LifecycledProtocol.Method.setBackgroundRefresh.name, [.string(Self.counter), .bool(false)])
            try await h.emitted.wait(for: "the app's refresh notification") {
                !$0.notifications(Self.counter, Self.refresh).isEmpty
            }
            // An app registering after the switch starts denied.
            let probe = "org.example.Probe"
            let first = try await FakeApp(probe, address: h.bus.address)
            _ = try await first.register()
            try await h.client.call(
                LifecycledProtocol.Method.setBackgroundRefresh.name, [.string(probe), .bool(false)])
            #expect(h.emitted.commands(probe).contains("background-refresh-status"))
            first.close()
            let again = try await FakeApp(probe, address: h.bus.address)
            defer { again.close() }
            // Once the daemon has seen the first connection go, the id is free again.
            var registered: UserInfo?
            #expect(
                await eventually {
                    registered = try? await again.register().facts
                    return registered != nil
                }, "the second registration was refused")
            #expect(registered?["background-refresh-status"] == .int(Int64(BackgroundRefreshStatus.denied.rawValue)))
        }
    }

    @Test("DeviceConditions to FetchConditions: unknown stays unknown; a low battery counts only on battery")
    func fetchConditionsMapping() {
        #expect(FetchConditions(DeviceConditions()) == .unknown)
        #expect(
            FetchConditions(
                DeviceConditions(
                    connectivity: .portal, isMetered: true, isOnBattery: true, batteryWarningLevel: .low,
                    isLowPowerModeEnabled: false, thermalState: .serious))
                == FetchConditions(
                    hasFullConnectivity: false, isMetered: true, isLowBattery: true, isLowPowerModeEnabled: false,
                    isThermalStateSeriousOrAbove: true))
        #expect(
            FetchConditions(DeviceConditions(isOnBattery: false, batteryWarningLevel: .critical))
                .isLowBattery == false)
        #expect(
            FetchConditions(
                DeviceConditions(isOnBattery: true, batteryWarningLevel: BatteryWarningLevel.none)
            )
            .isLowBattery == false)
        #expect(
            FetchConditions(DeviceConditions(thermalState: .fair)).isThermalStateSeriousOrAbove == false
        )
        // NetworkManager's "unknown" (connectivity checking off: Debian's default) blocks nothing.
        #expect(FetchConditions(DeviceConditions(connectivity: .unknown)).hasFullConnectivity == nil)
        #expect(FetchConditions(DeviceConditions(connectivity: .limited)).hasFullConnectivity == false)
    }
}
