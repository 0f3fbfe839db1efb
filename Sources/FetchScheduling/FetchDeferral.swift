/// Why a due background fetch did not run (``FetchScheduler``'s decisions; `lifecyclectl apps`).
/// Raw values are what the daemon logs and shows.
package enum FetchDeferral: String, Sendable, Hashable, Codable, CaseIterable {
    /// The user turned background refresh off for the app (`lifecyclectl background-refresh APP off`).
    case backgroundRefreshDenied = "background-refresh-denied"
    /// The network has no full connectivity (none, a captive portal, limited).
    case noFullConnectivity = "no-full-connectivity"
    /// The network is metered and the app's manifest does not allow it.
    case meteredNetwork = "metered-network"
    /// Low Power Mode is on.
    case lowPowerMode = "low-power-mode"
    /// The battery is low.
    case lowBattery = "low-battery"
    /// The device is serious or critical (thermal state).
    case thermalState = "thermal-state"
}
