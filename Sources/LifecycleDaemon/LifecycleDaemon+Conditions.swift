import AppLifecycle
import AppLifecycleSystemd
import LifecycledProtocol

extension LifecycleDaemon {
    /// The device's conditions an app registers with: Low Power Mode, the thermal state and its
    /// background refresh status, as the bridge last heard them; only those that differ from what an
    /// app starts with (off, nominal, available).
    ///
    /// - Parameters:
    ///   - id: The app.
    func deviceConditionFacts(for id: String) -> [HostEvent] {
        let conditions = bridge?.deviceConditions ?? DeviceConditions()
        var facts: [HostEvent] = []
        if conditions.isLowPowerModeEnabled == true { facts.append(.lowPowerMode(true)) }
        if let thermal = conditions.thermalState, thermal != .nominal { facts.append(.thermalState(thermal)) }
        let status = backgroundRefreshStatus(for: id, lowPowerMode: conditions.isLowPowerModeEnabled == true)
        if status != .available { facts.append(.backgroundRefreshStatus(status)) }
        return facts
    }

    /// An app's background refresh status: denied when the user turned it off for the app
    /// (`lifecyclectl background-refresh APP off`), else restricted while Low Power Mode is on, else available.
    ///
    /// - Parameters:
    ///   - id: The app.
    ///   - lowPowerMode: Whether Low Power Mode is on.
    func backgroundRefreshStatus(for id: String, lowPowerMode: Bool) -> BackgroundRefreshStatus {
        if fetchScheduler.backgroundRefreshDenied.contains(id) { return .denied }
        return lowPowerMode ? .restricted : .available
    }

    /// The bridge's background refresh status, made each app's own and sent to each.
    ///
    /// - Parameters:
    ///   - status: What the device's conditions allow every app.
    func broadcastBackgroundRefreshStatus(_ status: BackgroundRefreshStatus) async {
        for app in registry.registered {
            let own = backgroundRefreshStatus(for: app.id, lowPowerMode: status == .restricted)
            await send(.hostEvent(.backgroundRefreshStatus(own)), to: app.id)
        }
    }
}
