import AppLifecycle
import AppLifecycleSystemd
import Testing

/// The bridge's rule from the device's conditions to the host facts an app hears.
@Suite("The host facts of the device's conditions")
struct HostBridgeConditionEventsTests {
    func events(
        _ old: DeviceConditions, _ new: DeviceConditions, reported: InterfaceOrientation? = .portrait,
        locked: Bool = false
    ) -> [HostEvent] {
        HostBridge.conditionEvents(from: old, to: new, reportedOrientation: reported, orientationLocked: locked).events
    }

    @Test("Low Power Mode brings the refresh status with it; unknown is what an app starts with")
    func lowPowerMode() {
        #expect(
            events(DeviceConditions(), DeviceConditions(isLowPowerModeEnabled: true)) == [
                .lowPowerMode(true), .backgroundRefreshStatus(.restricted),
            ])
        #expect(
            events(DeviceConditions(isLowPowerModeEnabled: true), DeviceConditions()) == [
                .lowPowerMode(false), .backgroundRefreshStatus(.available),
            ])
        // A service that appears with the default, or a change elsewhere, says nothing about power.
        #expect(events(DeviceConditions(), DeviceConditions(isLowPowerModeEnabled: false)).isEmpty)
        #expect(events(DeviceConditions(), DeviceConditions(connectivity: .full, isMetered: true)).isEmpty)
    }

    @Test("the thermal state: each change, unknown counting as nominal")
    func thermal() {
        #expect(events(DeviceConditions(), DeviceConditions(thermalState: .serious)) == [.thermalState(.serious)])
        #expect(events(DeviceConditions(), DeviceConditions(thermalState: .nominal)).isEmpty)
        #expect(events(DeviceConditions(thermalState: .critical), DeviceConditions()) == [.thermalState(.nominal)])
    }

    @Test("the orientation: mapped from the sensor, only on a change, never while locked or undefined")
    func orientation() {
        let turned = HostBridge.conditionEvents(
            from: DeviceConditions(), to: DeviceConditions(deviceOrientation: .leftUp), reportedOrientation: .portrait,
            orientationLocked: false)
        #expect(
            turned.events == [.statusBarOrientation(.landscapeLeft, duration: HostBridge.orientationChangeDuration)])
        #expect(turned.reportedOrientation == .landscapeLeft)
        #expect(events(DeviceConditions(), DeviceConditions(deviceOrientation: .normal)).isEmpty)
        #expect(events(DeviceConditions(), DeviceConditions(deviceOrientation: .undefined)).isEmpty)
        let locked = HostBridge.conditionEvents(
            from: DeviceConditions(), to: DeviceConditions(deviceOrientation: .rightUp), reportedOrientation: .portrait,
            orientationLocked: true)
        #expect(locked.events.isEmpty)
        #expect(locked.reportedOrientation == .portrait)
        // In the order an app hears them: power, refresh, heat, then the turn.
        #expect(
            events(
                DeviceConditions(),
                DeviceConditions(isLowPowerModeEnabled: true, thermalState: .fair, deviceOrientation: .bottomUp))
                == [
                    .lowPowerMode(true), .backgroundRefreshStatus(.restricted), .thermalState(.fair),
                    .statusBarOrientation(.portraitUpsideDown, duration: HostBridge.orientationChangeDuration),
                ])
    }
}
