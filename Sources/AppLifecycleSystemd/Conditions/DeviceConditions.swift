import AppLifecycle

/// What the device's services say about its network, power, heat and orientation, at one moment.
///
/// Every field is optional: `nil` means unknown, because the service that knows is not running
/// (or has not said, or said something out of range before it ever said something valid).
/// Unknown never blocks: a scheduler treats an unknown condition as satisfied.
///
/// `DeviceConditionsMonitor` fills it from the system bus and the kernel and reports a whole
/// value after each change.
public struct DeviceConditions: Sendable, Hashable {
    /// NetworkManager's `Connectivity`.
    public var connectivity: NetworkConnectivity?
    /// Whether the network costs per byte: NetworkManager's `Metered` yes or guess-yes is `true`,
    /// no or guess-no `false`, unknown `nil`.
    public var isMetered: Bool?
    /// NetworkManager's `PrimaryConnectionType`: the connection type of the default route, for example
    /// `802-11-wireless`, `802-3-ethernet`, `gsm` or `vpn`; `nil` when there is no primary connection.
    public var primaryConnectionType: String?
    /// UPower's `OnBattery`: the device runs on its battery, not on mains.
    public var isOnBattery: Bool?
    /// UPower's display device `Percentage`, 0 to 100; `nil` when the device has no battery
    /// (the display device is not present).
    public var batteryPercentage: Double?
    /// UPower's display device `WarningLevel`.
    public var batteryWarningLevel: BatteryWarningLevel?
    /// Low Power Mode: power-profiles-daemon's `ActiveProfile` is `power-saver`.
    public var isLowPowerModeEnabled: Bool?
    /// How hot the device is, from power-profiles-daemon's `PerformanceDegraded` and the kernel's
    /// thermal zones; `nil` when neither is available.
    public var thermalState: ThermalState?
    /// iio-sensor-proxy's `AccelerometerOrientation`; `nil` unless the accelerometer is claimed
    /// and present.
    public var deviceOrientation: DeviceOrientation?

    /// Creates conditions; every field defaults to unknown.
    ///
    /// - Parameters:
    ///   - connectivity: How far the network reaches.
    ///   - isMetered: Whether the network is metered.
    ///   - primaryConnectionType: The type of the primary connection.
    ///   - isOnBattery: Whether the device runs on battery.
    ///   - batteryPercentage: The battery's charge, 0 to 100.
    ///   - batteryWarningLevel: How urgently the battery needs a charger.
    ///   - isLowPowerModeEnabled: Whether the power-saver profile is active.
    ///   - thermalState: How hot the device is.
    ///   - deviceOrientation: Which edge of the screen is up.
    public init(
        connectivity: NetworkConnectivity? = nil, isMetered: Bool? = nil, primaryConnectionType: String? = nil,
        isOnBattery: Bool? = nil, batteryPercentage: Double? = nil, batteryWarningLevel: BatteryWarningLevel? = nil,
        isLowPowerModeEnabled: Bool? = nil, thermalState: ThermalState? = nil,
        deviceOrientation: DeviceOrientation? = nil
    ) {
        self.connectivity = connectivity
        self.isMetered = isMetered
        self.primaryConnectionType = primaryConnectionType
        self.isOnBattery = isOnBattery
        self.batteryPercentage = batteryPercentage
        self.batteryWarningLevel = batteryWarningLevel
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.thermalState = thermalState
        self.deviceOrientation = deviceOrientation
    }
}
