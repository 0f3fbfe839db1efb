import AppLifecycleSystemd

/// What the fetch scheduler knows of the device when it decides whether a due fetch runs.
///
/// Every field is optional: `nil` is unknown (the service that tells it is absent, restarting, or
/// said something out of range), and unknown never blocks a fetch. The daemon fills it from the
/// host bridge's condition sources (NetworkManager, UPower, power-profiles-daemon, the thermal
/// zones); tests and `Simulate("fetch-conditions")` set it directly.
package struct FetchConditions: Sendable, Hashable, Codable {
    /// Whether the network has full connectivity (NetworkManager `Connectivity == full`); `false`
    /// for none, portal or limited. A fetch waits for `true` (or unknown).
    package var hasFullConnectivity: Bool?
    /// Whether the primary connection is metered (NetworkManager `Metered` yes or guess-yes).
    /// Blocks the apps whose manifest does not set `allowsMeteredNetwork`.
    package var isMetered: Bool?
    /// Whether the battery is low (UPower's display device: `WarningLevel` low or worse while on battery).
    package var isLowBattery: Bool?
    /// Whether Low Power Mode is on (power-profiles-daemon's `ActiveProfile == power-saver`).
    package var isLowPowerModeEnabled: Bool?
    /// Whether the thermal state is serious or critical.
    package var isThermalStateSeriousOrAbove: Bool?

    /// Conditions with every field given (unknown by default).
    package init(
        hasFullConnectivity: Bool? = nil, isMetered: Bool? = nil, isLowBattery: Bool? = nil,
        isLowPowerModeEnabled: Bool? = nil, isThermalStateSeriousOrAbove: Bool? = nil
    ) {
        self.hasFullConnectivity = hasFullConnectivity
        self.isMetered = isMetered
        self.isLowBattery = isLowBattery
        self.isLowPowerModeEnabled = isLowPowerModeEnabled
        self.isThermalStateSeriousOrAbove = isThermalStateSeriousOrAbove
    }

    /// Nothing known: nothing blocks.
    package static let unknown = FetchConditions()

    /// Why a due fetch of an app must wait under these conditions, or `nil` when it may run.
    /// Checked in this order: connectivity, metered network, Low Power Mode, low battery, thermal state.
    ///
    /// - Parameters:
    ///   - allowsMeteredNetwork: Whether the app accepts a metered network (its manifest).
    package func deferral(allowsMeteredNetwork: Bool) -> FetchDeferral? {
        if hasFullConnectivity == false { return .noFullConnectivity }
        if isMetered == true, !allowsMeteredNetwork { return .meteredNetwork }
        if isLowPowerModeEnabled == true { return .lowPowerMode }
        if isLowBattery == true { return .lowBattery }
        if isThermalStateSeriousOrAbove == true { return .thermalState }
        return nil
    }

    /// What the fetch scheduler needs of the device's conditions: full connectivity, a metered
    /// network, a low battery (UPower's warning level low or worse while on battery), Low Power Mode,
    /// a thermal state of serious or above; each unknown when its service is.
    ///
    /// - Parameters:
    ///   - conditions: The host bridge's conditions.
    package init(_ conditions: DeviceConditions) {
        let lowBattery: Bool? =
            switch (conditions.isOnBattery, conditions.batteryWarningLevel) {
            case (false, _): false
            case (true, .some(let level)): level >= .low
            case (true, nil), (nil, _): nil
            }
        self.init(
            // NetworkManager's own "unknown" (its connectivity check is off, or has not run) blocks nothing.
            hasFullConnectivity: conditions.connectivity.flatMap { $0 == .unknown ? nil : $0 == .full },
            isMetered: conditions.isMetered, isLowBattery: lowBattery,
            isLowPowerModeEnabled: conditions.isLowPowerModeEnabled,
            isThermalStateSeriousOrAbove: conditions.thermalState.map { $0 >= .serious })
    }
}
