import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import FetchScheduling
import Foundation
import InProcessHost
import SystemdBus
import SystemdBusTesting
import Testing

/// The device's conditions and background fetch through `SystemdHost` (one app in-process, no
/// lifecycled): python-dbusmock's power-profiles-daemon, NetworkManager and iio-sensor-proxy on
/// the rig's private system bus, the app's callbacks and notifications checked in order.
@MainActor
@Suite("SystemdHost: the device's conditions, the accelerometer and background fetch", .serialized)
struct SystemdHostConditionsTests {
    nonisolated static let ppdInterface = "net.hadess.PowerProfiles"
    nonisolated static let manager = "/org/freedesktop/NetworkManager"

    /// The services a rig's bridge watches, on its system bus; stopped by ``stop()``.
    struct DeviceServices {
        let ppd: DBusMock
        let network: DBusMock
        let sensor: DBusMock

        /// Starts them: balanced power, full connectivity (metered when asked), an accelerometer facing up.
        init(on bus: PrivateBus, metered: Bool = false) throws {
            ppd = try DBusMock(template: "power_profiles_daemon", address: bus.address)
            network = try DBusMock(template: "networkmanager", address: bus.address)
            sensor = try DBusMock(
                template: "iio-sensors-proxy", address: bus.address,
                parameters: #"{"has_accelerometer": true, "accelerometer_orientation": "normal"}"#)
            try network.addProperty(
                path: SystemdHostConditionsTests.manager, interface: "org.freedesktop.NetworkManager",
                name: "Metered", value: "uint32 \(metered ? 1 : 2)")
        }

        func lowPowerMode(_ on: Bool) throws {
            try ppd.updateProperties(
                interface: SystemdHostConditionsTests.ppdInterface,
                properties: ["ActiveProfile": on ? "'power-saver'" : "'balanced'"])
        }

        func metered(_ on: Bool) throws {
            try network.updateProperties(
                path: SystemdHostConditionsTests.manager, interface: "org.freedesktop.NetworkManager",
                properties: ["Metered": "uint32 \(on ? 1 : 2)"])
        }

        func orient(_ value: String) throws {
            try sensor.call(
                interface: DBusMock.mockInterface, method: "SetInternalProperty",
                arguments: ["'net.hadess.SensorProxy'", "'AccelerometerOrientation'", "<'\(value)'>"])
        }

        func stop() {
            sensor.stop()
            network.stop()
            ppd.stop()
        }
    }

    /// A rig whose bridge watches logind and the device's conditions (an empty fake sysfs for the
    /// thermal zones), with the app's state in `stateDirectory`; everything stopped even on failure.
    func withRig(
        stateDirectory: TemporaryDirectory, services: Bool = true, metered: Bool = false,
        _ body: (HostRig, DeviceServices?) async throws -> Void
    ) async throws {
        let thermal = try TemporaryDirectory(prefix: "thermal")
        defer { thermal.remove() }
        let rig = try HostRig(
            sources: [.logind, .deviceConditions], environment: ["STATE_DIRECTORY": stateDirectory.path],
            thermalRoot: thermal.path)
        var device: DeviceServices?
        do {
            if services { device = try DeviceServices(on: rig.systemBus, metered: metered) }
            try await body(rig, device)
        } catch {
            device?.stop()
            await rig.stop()
            throw error
        }
        device?.stop()
        await rig.stop()
    }

    @Test("Low Power Mode and the thermal state: the app's properties and notifications, in order")
    func conditionsReachTheApp() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        try await withRig(stateDirectory: state) { rig, device in
            let device = try #require(device)
            await rig.launch()
            try device.lowPowerMode(true)
            await rig.wait(for: Application.backgroundRefreshStatusDidChangeNotification.rawValue)
            #expect(rig.app.isLowPowerModeEnabled)
            #expect(rig.app.backgroundRefreshStatus == .restricted)
            try device.ppd.updateProperties(
                interface: Self.ppdInterface, properties: ["PerformanceDegraded": "'high-operating-temperature'"])
            await rig.wait(for: Application.thermalStateDidChangeNotification.rawValue)
            #expect(rig.app.thermalState == .serious)
            try device.lowPowerMode(false)
            await rig.wait(for: Application.backgroundRefreshStatusDidChangeNotification.rawValue, count: 2)
            #expect(!rig.app.isLowPowerModeEnabled)
            #expect(rig.app.backgroundRefreshStatus == .available)
            try rig.recorder.verifyOrder([
                Application.powerStateDidChangeNotification.rawValue,
                Application.backgroundRefreshStatusDidChangeNotification.rawValue,
                Application.thermalStateDidChangeNotification.rawValue,
                Application.powerStateDidChangeNotification.rawValue,
                Application.backgroundRefreshStatusDidChangeNotification.rawValue,
            ])
            #expect(rig.recorder.count(of: Application.powerStateDidChangeNotification.rawValue) == 2)
        }
    }

    @Test("the accelerometer is claimed while the app is active, released while not; turns reach the app")
    func accelerometerFollowsTheApp() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        try await withRig(stateDirectory: state) { rig, device in
            let device = try #require(device)
            await rig.launch()
            #expect(try await eventually { try device.sensor.callCount("ClaimAccelerometer") == 1 }, "not claimed")
            try device.orient("left-up")
            await rig.wait(for: Application.didChangeStatusBarOrientationNotification.rawValue)
            #expect(rig.app.statusBarOrientation == InterfaceOrientation(sensorOrientation: "left-up"))
            try rig.recorder.verifyOrder([
                Application.willChangeStatusBarOrientationNotification.rawValue,
                Application.didChangeStatusBarOrientationNotification.rawValue,
            ])
            // Locked: inactive, so the sensor is let go; unlocked and active: claimed again.
            try rig.session("Lock")
            await rig.wait(for: Application.willResignActiveNotification.rawValue)
            #expect(try await eventually { try device.sensor.callCount("ReleaseAccelerometer") == 1 }, "not released")
            try rig.session("Unlock")
            await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
            #expect(try await eventually { try device.sensor.callCount("ClaimAccelerometer") == 2 }, "not reclaimed")
            #expect(try device.sensor.callCount("ReleaseAccelerometer") == 1)
        }
    }

    @Test("the system bus restarts while the app is active: the conditions come back, the sensor is claimed again")
    func busRestart() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        try await withRig(stateDirectory: state, services: false) { rig, _ in
            var device = try DeviceServices(on: rig.systemBus)
            defer { device.stop() }
            await rig.launch()
            #expect(try await eventually { try device.sensor.callCount("ClaimAccelerometer") == 1 }, "not claimed")
            device.stop()
            rig.logind.stop()
            try rig.systemBus.restart()
            rig.logind = try DBusMock(template: "logind", address: rig.systemBus.address)
            rig.sessionPath = try rig.logind.addSession(id: "c1", uid: getuid(), username: "tester", active: true)
            device = try DeviceServices(on: rig.systemBus)
            // Through the bridge's reconnect backoff: the new monitor claims the sensor for the active app.
            #expect(
                try await eventually(hangGuard: .seconds(40), pause: .milliseconds(50)) {
                    try device.sensor.callCount("ClaimAccelerometer") == 1
                }, "the accelerometer was not claimed on the new bus: \(rig.host.bridge.sourceStatus)")
            try device.lowPowerMode(true)
            await rig.wait(for: Application.powerStateDidChangeNotification.rawValue)
            #expect(rig.app.isLowPowerModeEnabled)
        }
    }

    @Test("a due fetch waits on a metered network and in Low Power Mode, and runs once both end")
    func fetchFollowsTheConditions() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        try await withRig(stateDirectory: state, metered: true) { rig, device in
            let device = try #require(device)
            await rig.launch()
            #expect(
                await eventually { rig.host.bridge.deviceConditions.isMetered == true }, "metered not heard")
            rig.app.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalMinimum)
            let due = try #require(rig.host.nextBackgroundFetch)
            // 15 minutes later on the test clock (the floor the minimum interval is raised to).
            #expect(due - Date().timeIntervalSince1970 > FetchScheduler.minimumInterval - 60)
            rig.host.advanceFetchClock(by: FetchScheduler.minimumInterval)
            #expect(
                await eventually { rig.host.backgroundFetchDecisions.last?.deferral == .meteredNetwork },
                "not deferred on the metered network")
            try device.lowPowerMode(true)
            await rig.wait(for: Application.powerStateDidChangeNotification.rawValue)
            try device.metered(false)
            #expect(
                await eventually { rig.host.backgroundFetchDecisions.last?.deferral == .lowPowerMode },
                "not deferred in Low Power Mode")
            #expect(rig.recorder.count(of: Application.performFetchNotification.rawValue) == 0)
            try device.lowPowerMode(false)
            await rig.wait(for: Application.performFetchNotification.rawValue)
            let deferrals = rig.host.backgroundFetchDecisions.map(\.deferral)
            #expect(deferrals.first == .meteredNetwork)
            #expect(deferrals.last == .some(nil))
            #expect(deferrals.filter { $0 == nil }.count == 1, "the fetch ran more than once: \(deferrals)")
            #expect(!deferrals.contains(.noFullConnectivity))
            // The app's newData: the next fetch one interval after this one (noData would be 1.5).
            let next = try #require(rig.host.nextBackgroundFetch)
            #expect(next >= due + FetchScheduler.minimumInterval)
            #expect(next < due + 1.5 * FetchScheduler.minimumInterval)
        }
    }

    @Test("the schedule survives a new SystemdHost on the same state directory")
    func scheduleSurvivesARestart() async throws {
        let state = try TemporaryDirectory()
        defer { state.remove() }
        let file = state.appending(FetchScheduleFile.name)
        var due: Double?
        try await withRig(stateDirectory: state, services: false) { rig, _ in
            await rig.launch()
            rig.app.setMinimumBackgroundFetchInterval(FetchScheduler.minimumInterval)
            due = rig.host.nextBackgroundFetch
            #expect(
                await eventually { FileManager.default.fileExists(atPath: file) }, "the schedule was not written")
        }
        let saved = try #require(due)
        try await withRig(stateDirectory: state, services: false) { rig, _ in
            await rig.launch()
            #expect(rig.host.nextBackgroundFetch == nil, "scheduled before the app asked this run")
            rig.app.setMinimumBackgroundFetchInterval(FetchScheduler.minimumInterval)
            #expect(rig.host.nextBackgroundFetch == saved)
            rig.host.advanceFetchClock(by: saved - Date().timeIntervalSince1970)
            await rig.wait(for: Application.performFetchNotification.rawValue)
        }
    }
}
