import AppLifecycle
import SystemdBus

/// One system service `DeviceConditionsMonitor` follows: its bus name, the objects and properties
/// it reads, what counts as a valid value of each, and how its values become conditions.
enum ConditionsService: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    case networkManager = "org.freedesktop.NetworkManager"
    case upower = "org.freedesktop.UPower"
    /// power-profiles-daemon 0.20 and later (it also owns the old name).
    case powerProfiles = "org.freedesktop.UPower.PowerProfiles"
    /// power-profiles-daemon before 0.20 (Debian 12 has 0.12).
    case legacyPowerProfiles = "net.hadess.PowerProfiles"
    case sensorProxy = "net.hadess.SensorProxy"

    /// One object of a service and the properties of one of its interfaces.
    struct Object: Sendable {
        var path: String
        var interface: String
        var properties: Set<String>
    }

    var busName: String { rawValue }
    var description: String { rawValue }

    var objects: [Object] {
        switch self {
        case .networkManager:
            [
                Object(
                    path: "/org/freedesktop/NetworkManager", interface: "org.freedesktop.NetworkManager",
                    properties: ["Connectivity", "Metered", "PrimaryConnectionType"])
            ]
        case .upower:
            [
                Object(path: "/org/freedesktop/UPower", interface: "org.freedesktop.UPower", properties: ["OnBattery"]),
                Object(
                    path: "/org/freedesktop/UPower/devices/DisplayDevice", interface: "org.freedesktop.UPower.Device",
                    properties: ["IsPresent", "Percentage", "WarningLevel"]),
            ]
        case .powerProfiles:
            [
                Object(
                    path: "/org/freedesktop/UPower/PowerProfiles", interface: "org.freedesktop.UPower.PowerProfiles",
                    properties: ["ActiveProfile", "PerformanceDegraded"])
            ]
        case .legacyPowerProfiles:
            [
                Object(
                    path: "/net/hadess/PowerProfiles", interface: "net.hadess.PowerProfiles",
                    properties: ["ActiveProfile", "PerformanceDegraded"])
            ]
        case .sensorProxy:
            [
                Object(
                    path: "/net/hadess/SensorProxy", interface: "net.hadess.SensorProxy",
                    properties: ["HasAccelerometer", "AccelerometerOrientation"])
            ]
        }
    }

    /// power-profiles-daemon's profiles.
    static let profiles: Set<String> = ["power-saver", "balanced", "performance"]

    /// Whether `value` is a value the service may send for `property`: the documented type, and
    /// within the documented range.
    static func isValid(_ value: BusValue, for property: String) -> Bool {
        switch (property, value) {
        case ("Connectivity", .uint32(let number)), ("Metered", .uint32(let number)):
            return number <= 4
        case ("WarningLevel", .uint32(let number)):
            return number <= 5
        case ("Percentage", .double(let number)):
            return number.isFinite && number >= 0 && number <= 100
        case ("OnBattery", .bool), ("IsPresent", .bool), ("HasAccelerometer", .bool):
            return true
        case ("PrimaryConnectionType", .string), ("PerformanceDegraded", .string):
            return true
        case ("ActiveProfile", .string(let profile)):
            return profiles.contains(profile)
        case ("AccelerometerOrientation", .string(let orientation)):
            return DeviceOrientation(rawValue: orientation) != nil
        default:
            return false
        }
    }

    /// The conditions the services' last valid values say.
    ///
    /// - Parameters:
    ///   - values: Each present service's last valid property values (an absent service has none).
    ///   - zones: The kernel's thermal zones' state, `nil` without readable zones.
    ///   - accelerometerClaimed: Whether the monitor holds a claim on the accelerometer.
    static func conditions(
        values: [ConditionsService: [String: BusValue]], zones: ThermalState?, accelerometerClaimed: Bool
    ) -> DeviceConditions {
        var conditions = DeviceConditions()
        let network = values[.networkManager] ?? [:]
        conditions.connectivity = network["Connectivity"]?.uint32Value.flatMap(NetworkConnectivity.init)
        switch network["Metered"]?.uint32Value {
        case 1, 3: conditions.isMetered = true
        case 2, 4: conditions.isMetered = false
        default: conditions.isMetered = nil
        }
        conditions.primaryConnectionType = network["PrimaryConnectionType"]?.stringValue.flatMap {
            $0.isEmpty ? nil : $0
        }

        let power = values[.upower] ?? [:]
        conditions.isOnBattery = power["OnBattery"]?.boolValue
        if power["IsPresent"]?.boolValue != false {
            conditions.batteryPercentage = power["Percentage"]?.doubleValue
        }
        conditions.batteryWarningLevel = power["WarningLevel"]?.uint32Value.flatMap(BatteryWarningLevel.init)

        let profiles = values[.powerProfiles] ?? values[.legacyPowerProfiles] ?? [:]
        conditions.isLowPowerModeEnabled = profiles["ActiveProfile"]?.stringValue.map { $0 == "power-saver" }
        let degraded = profiles["PerformanceDegraded"]?.stringValue.map { $0.isEmpty ? ThermalState.nominal : .serious }
        conditions.thermalState = [degraded, zones].compactMap { $0 }.max()

        let sensor = values[.sensorProxy] ?? [:]
        if accelerometerClaimed, sensor["HasAccelerometer"]?.boolValue == true {
            conditions.deviceOrientation = sensor["AccelerometerOrientation"]?.stringValue.flatMap(
                DeviceOrientation.init(rawValue:))
        }
        return conditions
    }
}
