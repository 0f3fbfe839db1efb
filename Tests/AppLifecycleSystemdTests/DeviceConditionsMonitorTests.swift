import AppLifecycle
import AppLifecycleSystemd
import Foundation
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

/// The monitor against python-dbusmock's `networkmanager`, `upower`, `power_profiles_daemon` and
/// `iio-sensors-proxy` on a private bus, and thermal zones in a temporary directory.
///
/// Each test reads the whole conditions the monitor reports, in order. That nothing was reported
/// for a repeat or a bad value is shown without waiting: the next good change must be the very
/// next value.
@Suite("DeviceConditionsMonitor against python-dbusmock and a fake sysfs", .timeLimit(.minutes(3)))
struct DeviceConditionsMonitorTests {
    /// The family the tests resolve instead of the kernel's `thermal`, so that they never depend on
    /// the machine's thermal events.
    static let absentFamily = "nothermal"

    static let managerPath = "/org/freedesktop/NetworkManager"
    static let managerInterface = "org.freedesktop.NetworkManager"
    static let displayDevice = "/org/freedesktop/UPower/devices/DisplayDevice"
    static let deviceInterface = "org.freedesktop.UPower.Device"
    static let sensorInterface = "net.hadess.SensorProxy"

    @Test(
        "NetworkManager: Connectivity, Metered and PrimaryConnectionType live; repeats and bad values are not reported")
    func network() async throws {
        try await withMonitor { env, _ in
            let mock = try DBusMock(template: "networkmanager", address: env.bus.address)
            try mock.addProperty(
                path: Self.managerPath, interface: Self.managerInterface, name: "Metered", value: "uint32 4")
            try mock.addProperty(
                path: Self.managerPath, interface: Self.managerInterface, name: "PrimaryConnectionType",
                value: "'802-11-wireless'")
            return mock
        } body: { mock, monitor, updates, rig in
            #expect(
                try await updates.next("first")
                    == DeviceConditions(connectivity: .full, isMetered: false, primaryConnectionType: "802-11-wireless")
            )
            // The template's SetConnectivity also emits NetworkManager's old PropertiesChanged(a{sv}).
            try mock.mockCall(path: "/org/freedesktop", "SetConnectivity", ["uint32 2"])
            try mock.mockCall(path: "/org/freedesktop", "SetConnectivity", ["uint32 2"])
            #expect(
                try await updates.next("portal")
                    == DeviceConditions(
                        connectivity: .portal, isMetered: false, primaryConnectionType: "802-11-wireless"))
            try update(mock, Self.managerPath, Self.managerInterface, ["Metered": "uint32 3"])
            #expect(
                try await updates.next("guess-yes")
                    == DeviceConditions(
                        connectivity: .portal, isMetered: true, primaryConnectionType: "802-11-wireless"))
            // Out of range, twice, and of the wrong type: ignored, logged once.
            try update(mock, Self.managerPath, Self.managerInterface, ["Connectivity": "uint32 9"])
            try update(mock, Self.managerPath, Self.managerInterface, ["Connectivity": "'full'"])
            try update(mock, Self.managerPath, Self.managerInterface, ["PrimaryConnectionType": "'gsm'"])
            #expect(
                try await updates.next("gsm")
                    == DeviceConditions(connectivity: .portal, isMetered: true, primaryConnectionType: "gsm"))
            try update(
                mock, Self.managerPath, Self.managerInterface,
                ["Connectivity": "uint32 4", "Metered": "uint32 0", "PrimaryConnectionType": "''"])
            #expect(try await updates.next("unknown metering") == DeviceConditions(connectivity: .full))
            #expect(rig.log.count { $0.contains("out of range") } == 1)
            #expect(monitor.conditions == DeviceConditions(connectivity: .full))
        }
    }

    @Test("UPower: OnBattery, Percentage (only for a present battery) and WarningLevel live; -3 and 250 are ignored")
    func power() async throws {
        try await withMonitor { env, _ in
            try DBusMock(template: "upower", address: env.bus.address)
        } body: { mock, _, updates, rig in
            #expect(
                try await updates.next("first")
                    == DeviceConditions(isOnBattery: false, batteryWarningLevel: BatteryWarningLevel.none))
            try update(mock, Self.displayDevice, Self.deviceInterface, ["IsPresent": "true", "Percentage": "80.0"])
            #expect(
                try await updates.next("present")
                    == DeviceConditions(
                        isOnBattery: false, batteryPercentage: 80, batteryWarningLevel: BatteryWarningLevel.none))
            try update(mock, nil, "org.freedesktop.UPower", ["OnBattery": "true"])
            try update(
                mock, Self.displayDevice, Self.deviceInterface, ["Percentage": "12.5", "WarningLevel": "uint32 3"])
            #expect(
                try await updates.next("on battery")
                    == DeviceConditions(
                        isOnBattery: true, batteryPercentage: 80, batteryWarningLevel: BatteryWarningLevel.none))
            #expect(
                try await updates.next("low")
                    == DeviceConditions(isOnBattery: true, batteryPercentage: 12.5, batteryWarningLevel: .low))
            try update(mock, Self.displayDevice, Self.deviceInterface, ["Percentage": "-3.0"])
            try update(mock, Self.displayDevice, Self.deviceInterface, ["Percentage": "250.0"])
            try update(mock, Self.displayDevice, Self.deviceInterface, ["WarningLevel": "uint32 4"])
            #expect(
                try await updates.next("critical")
                    == DeviceConditions(isOnBattery: true, batteryPercentage: 12.5, batteryWarningLevel: .critical))
            #expect(rig.log.count { $0.contains("out of range") } == 1)
        }
    }

    @Test("power-profiles-daemon: power-saver is Low Power Mode, PerformanceDegraded is serious; the new name wins")
    func powerProfiles() async throws {
        try await withMonitor { env, _ in
            try DBusMock(template: "power_profiles_daemon", address: env.bus.address)
        } body: { legacy, _, updates, _ in
            let ppdInterface = "net.hadess.PowerProfiles"
            #expect(
                try await updates.next("first")
                    == DeviceConditions(isLowPowerModeEnabled: false, thermalState: .nominal))
            try update(legacy, nil, ppdInterface, ["ActiveProfile": "'power-saver'"])
            #expect(
                try await updates.next("saver") == DeviceConditions(isLowPowerModeEnabled: true, thermalState: .nominal)
            )
            try update(legacy, nil, ppdInterface, ["ActiveProfile": "'turbo'"])
            try update(legacy, nil, ppdInterface, ["PerformanceDegraded": "'high-operating-temperature'"])
            #expect(
                try await updates.next("hot") == DeviceConditions(isLowPowerModeEnabled: true, thermalState: .serious))

            // A newer daemon on org.freedesktop.UPower.PowerProfiles is believed over the old name.
            let newName = "org.freedesktop.UPower.PowerProfiles"
            let current = try DBusMock(
                name: newName, path: "/org/freedesktop/UPower/PowerProfiles", interface: newName,
                address: legacy.address, system: true)
            defer { current.stop() }
            try current.addProperty(interface: newName, name: "ActiveProfile", value: "'performance'")
            try current.addProperty(interface: newName, name: "PerformanceDegraded", value: "''")
            // It appeared before its properties were added: the first read may find none.
            try update(current, nil, newName, ["ActiveProfile": "'balanced'", "PerformanceDegraded": "''"])
            // The values on the way depend on when the monitor read the new daemon; none is power-saver.
            let expected = DeviceConditions(isLowPowerModeEnabled: false, thermalState: .nominal)
            var seen = [try await updates.next("new daemon")]
            while seen.last != expected, seen.count < 4 { seen.append(try await updates.next("new daemon's values")) }
            #expect(seen.last == expected)
            #expect(seen.allSatisfy { $0.isLowPowerModeEnabled == false })
            current.stop()
            #expect(
                try await updates.next("back to the old name")
                    == DeviceConditions(isLowPowerModeEnabled: true, thermalState: .serious))
        }
    }

    @Test("a service absent at start appears, is stopped (unknown again), and comes back: each time read afresh")
    func serviceLifetime() async throws {
        try await withMonitor { _, _ in
            DBusMock?.none
        } body: { _, _, updates, rig in
            #expect(try await updates.next("nothing") == DeviceConditions())
            let first = try DBusMock(template: "upower", address: rig.address)
            defer { first.stop() }
            #expect(
                try await updates.next("appeared")
                    == DeviceConditions(isOnBattery: false, batteryWarningLevel: BatteryWarningLevel.none))
            first.stop()
            #expect(try await updates.next("gone") == DeviceConditions())
            let second = try DBusMock(template: "upower", address: rig.address, parameters: #"{"OnBattery": true}"#)
            defer { second.stop() }
            #expect(
                try await updates.next("back")
                    == DeviceConditions(isOnBattery: true, batteryWarningLevel: BatteryWarningLevel.none))
        }
    }

    @Test("iio-sensor-proxy: no orientation until claimed; live while claimed; claimed again after a restart; released")
    func accelerometer() async throws {
        let parameters = #"{"has_accelerometer": true, "accelerometer_orientation": "normal"}"#
        try await withMonitor { env, _ in
            try DBusMock(template: "iio-sensors-proxy", address: env.bus.address, parameters: parameters)
        } body: { mock, monitor, updates, rig in
            #expect(try await updates.next("unclaimed") == DeviceConditions())
            #expect(try owners(mock) == "(@as [],)")
            try await monitor.claimAccelerometer()
            #expect(try await updates.next("claimed") == DeviceConditions(deviceOrientation: .normal))
            #expect(try mock.callCount("ClaimAccelerometer") == 1)
            #expect(try owners(mock).contains(rig.uniqueName))
            try orient(mock, "left-up")
            #expect(try await updates.next("left-up") == DeviceConditions(deviceOrientation: .leftUp))
            try orient(mock, "sideways")
            try orient(mock, "right-up")
            #expect(try await updates.next("right-up") == DeviceConditions(deviceOrientation: .rightUp))

            mock.stop()
            #expect(try await updates.next("gone") == DeviceConditions())
            let again = try DBusMock(
                template: "iio-sensors-proxy", address: mock.address,
                parameters: #"{"has_accelerometer": true, "accelerometer_orientation": "bottom-up"}"#)
            defer { again.stop() }
            #expect(try await updates.next("claimed again") == DeviceConditions(deviceOrientation: .bottomUp))
            #expect(try again.callCount("ClaimAccelerometer") == 1)
            // The new daemon reports only to claimers: this change arrives only if the claim was made again.
            try orient(again, "left-up")
            #expect(try await updates.next("left-up again") == DeviceConditions(deviceOrientation: .leftUp))

            try await monitor.releaseAccelerometer()
            #expect(try await updates.next("released") == DeviceConditions())
            #expect(try again.callCount("ReleaseAccelerometer") == 1)
            #expect(try owners(again) == "(@as [],)")
        }
    }

    @Test("a claim made while iio-sensor-proxy is absent is made when it appears")
    func claimBeforeSensorAppears() async throws {
        try await withMonitor { _, _ in
            DBusMock?.none
        } body: { _, monitor, updates, rig in
            let first = try await updates.next("nothing")
            #expect(first == DeviceConditions())
            try await monitor.claimAccelerometer()
            #expect(monitor.isAccelerometerClaimed)
            let sensor = try DBusMock(
                template: "iio-sensors-proxy", address: rig.address,
                parameters: #"{"has_accelerometer": true, "accelerometer_orientation": "left-up"}"#)
            defer { sensor.stop() }
            #expect(try await updates.next("claimed on appearance") == DeviceConditions(deviceOrientation: .leftUp))
            #expect(try sensor.callCount("ClaimAccelerometer") == 1)
            try orient(sensor, "normal")
            #expect(try await updates.next("normal") == DeviceConditions(deviceOrientation: .normal))
        }
    }

    @Test("thermal zones: nominal, fair within 5 °C of passive, serious, critical; the hottest zone and PPD win")
    func thermalZones() async throws {
        try await withMonitor { _, sysfs in
            try sysfs.write("thermal_zone0/temp", "40000\n")
            try sysfs.write("thermal_zone0/trip_point_0_type", "passive\n")
            try sysfs.write("thermal_zone0/trip_point_0_temp", "80000\n")
            try sysfs.write("thermal_zone0/trip_point_1_type", "critical\n")
            try sysfs.write("thermal_zone0/trip_point_1_temp", "100000\n")
            try sysfs.write("thermal_zone0/trip_point_2_type", "hot\n")
            try sysfs.write("thermal_zone0/trip_point_2_temp", "0\n")  // disabled: ignored
            try sysfs.write("thermal_zone1/temp", "30000\n")
            try sysfs.write("cooling_device0/type", "Processor\n")
            return DBusMock?.none
        } body: { _, monitor, updates, rig in
            #expect(try await updates.next("nominal") == DeviceConditions(thermalState: .nominal))
            // The family is absent: said once, and the zones are read on request.
            #expect(rig.log.count { $0.contains("no generic-netlink family \(Self.absentFamily)") } == 1)
            // 74.999 °C is more than 5 °C below the passive trip: no change, so fair is the next value.
            for temperature in [74_999, 75_000, 80_000, 100_000, 60_000] {
                try rig.sysfs.write("thermal_zone0/temp", "\(temperature)\n")
                await monitor.rereadThermalZones()
            }
            #expect(try await updates.next("fair") == DeviceConditions(thermalState: .fair))
            #expect(try await updates.next("serious") == DeviceConditions(thermalState: .serious))
            #expect(try await updates.next("critical") == DeviceConditions(thermalState: .critical))
            #expect(try await updates.next("cool") == DeviceConditions(thermalState: .nominal))
            // A zone whose temperature cannot be read is left out; the other one counts.
            try rig.sysfs.write("thermal_zone0/temp", "busy\n")
            try rig.sysfs.write("thermal_zone1/temp", "81000\n")
            try rig.sysfs.write("thermal_zone1/trip_point_0_type", "passive\n")
            try rig.sysfs.write("thermal_zone1/trip_point_0_temp", "80000\n")
            await monitor.rereadThermalZones()
            #expect(try await updates.next("zone 1 hot") == DeviceConditions(thermalState: .serious))
            // PerformanceDegraded and the zones: the hotter counts.
            let ppd = try DBusMock(
                template: "power_profiles_daemon", address: rig.address,
                parameters: #"{"PerformanceDegraded": "high-operating-temperature"}"#)
            defer { ppd.stop() }
            #expect(
                try await updates.next("ppd") == DeviceConditions(isLowPowerModeEnabled: false, thermalState: .serious))
            try rig.sysfs.write("thermal_zone1/temp", "20000\n")
            await monitor.rereadThermalZones()
            try update(ppd, nil, "net.hadess.PowerProfiles", ["PerformanceDegraded": "''"])
            #expect(
                try await updates.next("ppd cool")
                    == DeviceConditions(isLowPowerModeEnabled: false, thermalState: .nominal))
            #expect(rig.log.count { $0.contains("no generic-netlink family") } == 1)
        }
    }

    @Test(
        "a trip-point event from the kernel's thermal genl family makes the monitor read the zones again",
        .enabled(
            if: canSendThermalEvents && ProcessInfo.processInfo.environment["LIFECYCLE_TEST_KERNEL_THERMAL"] == "1",
            "sends into the host's real thermal event group, which every thermal listener on the machine hears: opt in with LIFECYCLE_TEST_KERNEL_THERMAL=1 (needs the family and CAP_NET_ADMIN)"
        )
    )
    func thermalEvent() async throws {
        try await withMonitor(family: ThermalEventSocket.familyName) { _, sysfs in
            try sysfs.write("thermal_zone0/temp", "40000\n")
            try sysfs.write("thermal_zone0/trip_point_0_type", "passive\n")
            try sysfs.write("thermal_zone0/trip_point_0_temp", "80000\n")
            return DBusMock?.none
        } body: { _, _, updates, rig in
            let first = try await updates.next("nominal")
            #expect(first == DeviceConditions(thermalState: .nominal))
            #expect(rig.log.count { $0.contains("following the kernel's thermal events") } == 1)
            try rig.sysfs.write("thermal_zone0/temp", "81000\n")
            try sendThermalEvent(5)  // THERMAL_GENL_EVENT_TZ_TRIP_UP
            #expect(try await updates.next("serious") == DeviceConditions(thermalState: .serious))
        }
    }

    @Test("no thermal zones and no services: every condition is unknown, and the missing zones are said once")
    func nothingThere() async throws {
        try await withMonitor { _, _ in
            DBusMock?.none
        } body: { _, monitor, updates, rig in
            let first = try await updates.next("nothing")
            #expect(first == DeviceConditions())
            await monitor.rereadThermalZones()
            await monitor.rereadThermalZones()
            #expect(rig.log.count { $0.contains("no readable thermal zone") } == 1)
            #expect(monitor.conditions == DeviceConditions())
        }
    }

    @Test("when the system bus goes away the monitor stops and its updates end")
    func busGone() async throws {
        try await withMonitor { env, _ in
            try DBusMock(template: "upower", address: env.bus.address)
        } body: { mock, monitor, updates, rig in
            let first = try await updates.next("first")
            #expect(first.isOnBattery == false)
            mock.stop()
            #expect(try await updates.next("upower gone") == DeviceConditions())
            rig.bus.kill()
            #expect(try await rig.ended.next("the end of updates"))
            #expect(updates.untaken.isEmpty)
            await #expect(throws: BusServiceError.self) { try await monitor.claimAccelerometer() }
        }
    }

    @Test("a change signalled while the monitor reads a service wins over the read's older answer")
    func signalDuringRead() async throws {
        try await withMonitor { env, _ in
            // A NetworkManager whose GetAll announces Connectivity full and then answers with what it
            // had before: none. The signal reaches the monitor before the answer.
            let mock = try DBusMock(
                name: Self.managerInterface, path: Self.managerPath, interface: Self.managerInterface,
                address: env.bus.address, system: true)
            try mock.addMethod(
                interface: "org.freedesktop.DBus.Properties", name: "GetAll", inSignature: "s", outSignature: "a{sv}",
                code: """
                    self.EmitSignal('org.freedesktop.DBus.Properties', 'PropertiesChanged', 'sa{sv}as', \
                    [args[0], {'Connectivity': dbus.UInt32(4, variant_level=1)}, dbus.Array([], signature='s')])
                    ret = {'Connectivity': dbus.UInt32(1, variant_level=1)}
                    """)
            return mock
        } body: { _, _, updates, _ in
            let first = try await updates.next("first")
            #expect(first == DeviceConditions(connectivity: .full))
        }
    }

    @Test("the thermal state rule for one zone")
    func thermalRule() {
        let trips = [
            ThermalZones.Trip(type: "active", temperature: 50_000),
            ThermalZones.Trip(type: "passive", temperature: 90_000),
            ThermalZones.Trip(type: "passive", temperature: 85_000),
            ThermalZones.Trip(type: "hot", temperature: 95_000),
            ThermalZones.Trip(type: "critical", temperature: 105_000),
        ]
        func state(_ temperature: Int, _ trips: [ThermalZones.Trip]) -> ThermalState {
            ThermalZones.state(of: ThermalZones.Zone(name: "thermal_zone0", temperature: temperature, trips: trips))
        }
        #expect(state(79_999, trips) == .nominal)
        #expect(state(80_000, trips) == .fair)
        #expect(state(85_000, trips) == .serious)
        #expect(state(95_000, trips) == .critical)
        #expect(state(200_000, []) == .nominal)
        #expect(ThermalZones.state(of: []) == nil)
    }

    @Test(
        "the real kernel: the thermal genl family resolves where CONFIG_THERMAL_NETLINK is set; an unknown one is not found"
    )
    func realKernel() throws {
        let error = #expect(throws: HostSourceError.self) { try ThermalEventSocket(family: Self.absentFamily) }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("no generic-netlink family \(Self.absentFamily)") == true)
        let config = (try? ChildProcess.run("/bin/sh", ["-c", "zcat /proc/config.gz 2>/dev/null"]).output) ?? ""
        guard config.contains("CONFIG_THERMAL_NETLINK=y") else {
            print("this kernel has no CONFIG_THERMAL_NETLINK (or no /proc/config.gz): the real family is not checked")
            return
        }
        let socket = try ThermalEventSocket()
        print(
            "the real kernel's genl family thermal: id \(socket.familyID), group event \(socket.groupID); "
                + "zones under /sys/class/thermal: \(ThermalZones.read(root: "/sys/class/thermal").count)")
        defer { close(socket.fileDescriptor) }
        #expect(socket.familyID > 0)
        #expect(socket.groupID > 0)
        #expect(socket.drain().overrun == false)
    }

    // MARK: - Harness

    /// What a test's body gets besides the mock and the monitor.
    struct Rig {
        var bus: PrivateBus
        /// Has `true` once ``DeviceConditionsMonitor/updates`` ended.
        var ended: ValueRecorder<Bool>
        var address: String
        var uniqueName: String
        var sysfs: TemporaryDirectory
        var log: RecordedLog
    }

    /// Starts a private bus, the test's mock (`setUp`), and a monitor on a fake sysfs root, and
    /// records the monitor's updates; stops all of them after `body`.
    private func withMonitor<Mock: Sendable>(
        family: String = absentFamily,
        setUp: (BusTestEnvironment, TemporaryDirectory) throws -> Mock,
        body: (Mock, DeviceConditionsMonitor, ValueRecorder<DeviceConditions>, Rig) async throws -> Void
    ) async throws {
        let sysfs = try TemporaryDirectory(prefix: "device-conditions-sysfs")
        defer { sysfs.remove() }
        try await BusTestEnvironment.with { env in
            let mock = try setUp(env, sysfs)
            defer { (mock as? DBusMock)?.stop() }
            let log = RecordedLog()
            let monitor = DeviceConditionsMonitor(
                connection: env.connection, thermalRoot: sysfs.path, thermalFamily: family,
                logger: log.logger(label: "device-conditions"))
            let updates = ValueRecorder<DeviceConditions>()
            let ended = ValueRecorder<Bool>()
            let reader = Task {
                for await conditions in monitor.updates { updates.add(conditions) }
                ended.add(true)
            }
            defer {
                monitor.stop()
                reader.cancel()
            }
            try await monitor.start()
            try await body(
                mock, monitor, updates,
                Rig(
                    bus: env.bus, ended: ended, address: env.bus.address, uniqueName: env.connection.uniqueName,
                    sysfs: sysfs, log: log))
        }
    }
}

/// Whether this process can multicast into the kernel's thermal `event` group: the family exists
/// and the process has CAP_NET_ADMIN (bit 12 of CapEff), which netlink asks of a sender to a group.
private let canSendThermalEvents: Bool = {
    guard (try? ThermalEventSocket()).map({ close($0.fileDescriptor) }) != nil,
        let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
        let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << 12) != 0
}()

/// Multicasts a thermal event into the kernel's `event` group as the kernel would (a genl message of
/// the family with the event as its command), so every monitor following the group hears it.
///
/// The message has no `NLM_F_REQUEST`: the kernel's own copy is ignored, not run as a command.
private func sendThermalEvent(_ event: UInt8) throws {
    let listener = try ThermalEventSocket()
    close(listener.fileDescriptor)
    let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 16)
    guard fd >= 0 else { throw FixtureError("netlink socket: errno \(errno)") }
    defer { close(fd) }
    let id = listener.familyID
    // nlmsghdr (length 20, the family's type, no flags, sequence 1, port 0) and genlmsghdr (the event, version 1).
    let message: [UInt8] = [
        20, 0, 0, 0, UInt8(id & 0xFF), UInt8(id >> 8), 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, event, 1, 0, 0,
    ]
    // sockaddr_nl: AF_NETLINK, port 0, the group as a bit mask.
    let mask = UInt32(1) << (listener.groupID - 1)
    var address: [UInt8] = [16, 0, 0, 0, 0, 0, 0, 0]
    address += [UInt8(mask & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8((mask >> 16) & 0xFF), UInt8(mask >> 24)]
    let sent = message.withUnsafeBytes { bytes in
        address.withUnsafeBytes { raw in
            sendto(
                fd, bytes.baseAddress, bytes.count, 0, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self),
                socklen_t(raw.count))
        }
    }
    guard sent == message.count else { throw FixtureError("send a thermal event: errno \(errno)") }
}

/// Sets properties on a mock object and emits `PropertiesChanged`.
private func update(_ mock: DBusMock, _ path: String?, _ interface: String, _ properties: [String: String]) throws {
    try mock.updateProperties(path: path, interface: interface, properties: properties)
}

/// The connections that claimed the mock's accelerometer, as gdbus text.
private func owners(_ mock: DBusMock) throws -> String {
    try mock.call(
        interface: DBusMock.mockInterface, method: "GetInternalProperty", arguments: ["'AccelerometerOwners'"])
}

/// Moves the mock's accelerometer (reported only to the connections that claimed it).
private func orient(_ mock: DBusMock, _ orientation: String) throws {
    try mock.call(
        interface: DBusMock.mockInterface, method: "SetInternalProperty",
        arguments: ["'net.hadess.SensorProxy'", "'AccelerometerOrientation'", "<'\(orientation)'>"])
}

extension DBusMock {
    /// Calls a method of the mock's control interface on an object.
    @discardableResult
    fileprivate func mockCall(path: String? = nil, _ method: String, _ arguments: [String] = []) throws -> String {
        try call(path: path, interface: DBusMock.mockInterface, method: method, arguments: arguments)
    }
}
