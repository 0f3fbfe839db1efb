import AppLifecycle
import Logging
import SystemdBus

extension HostBridge {
    /// How long the status bar's rotation is said to take (UIKit animates about 0.3 s).
    public nonisolated static let orientationChangeDuration = 0.3

    /// The device's conditions as the bridge last heard them (all unknown without the
    /// `device-conditions` source).
    public var deviceConditions: DeviceConditions { bus.lastConditions }

    /// The status bar's orientation as last reported: portrait, where every app starts, until the
    /// accelerometer (claimed, not locked) says otherwise.
    public var statusBarOrientation: InterfaceOrientation { bus.reportedOrientation ?? .portrait }

    /// Whether the bridge reports the accelerometer's orientation changes: while `true`, the
    /// orientation stays where it is (the user's orientation lock) and the sensor is not claimed
    /// (nothing would read it). Unlocking claims it again if an app wants it, and reports the current
    /// orientation once it differs from the last one reported.
    public var isOrientationLocked: Bool {
        get { bus.orientationLocked }
        set {
            guard newValue != bus.orientationLocked else { return }
            bus.orientationLocked = newValue
            Task { await applyAccelerometerWish() }
            guard !newValue, let deliver = bus.deliverConditionEvent,
                let orientation = bus.lastConditions.deviceOrientation.flatMap(Self.interfaceOrientation),
                orientation != bus.reportedOrientation
            else { return }
            bus.reportedOrientation = orientation
            deliver(.statusBarOrientation(orientation, duration: Self.orientationChangeDuration))
        }
    }

    /// Wants the accelerometer (iio-sensor-proxy's `ClaimAccelerometer`) or lets it go.
    ///
    /// The sensor reports only while claimed, and a claim keeps it powered: a host wants it only while
    /// an app that can rotate is active. The wish outlasts the sensor service's restarts and the
    /// system bus's reconnections.
    ///
    /// - Parameters:
    ///   - wanted: Whether some active app cares about the orientation.
    public func setAccelerometerWanted(_ wanted: Bool) async {
        guard wanted != bus.accelerometerWanted else { return }
        bus.accelerometerWanted = wanted
        await applyAccelerometerWish()
    }

    /// Brings the monitor's claim to the host's wish (wanted and not locked), one request at a time:
    /// each waits for the one before and reads the wish when its turn comes, so a quick claim and
    /// release never reach iio-sensor-proxy out of order. Without a running monitor there is
    /// nothing to do; a new one (the system bus came back) gets the wish when it starts.
    func applyAccelerometerWish() async {
        let previous = bus.accelerometerRequests
        let request = Task { @MainActor [weak self] in
            await previous?.value
            guard let self, let monitor = self.bus.conditions else { return }
            let wanted = self.bus.accelerometerWanted && !self.bus.orientationLocked
            guard wanted != monitor.isAccelerometerClaimed else { return }
            do {
                if wanted { try await monitor.claimAccelerometer() } else { try await monitor.releaseAccelerometer() }
            } catch {
                self.logger.info("the accelerometer could not be \(wanted ? "claimed" : "released"): \(error)")
            }
        }
        bus.accelerometerRequests = request
        await request.value
    }

    /// The host facts a change of the conditions brings, in the order an app hears them: Low Power
    /// Mode and with it the background refresh status (restricted while it is on), the thermal state,
    /// then the status bar's orientation (not while locked; unknown and `undefined` readings move
    /// nothing).
    ///
    /// An unknown value is the default an app starts with (Low Power Mode off, nominal), so a service
    /// that appears with the default, or vanishes, changes nothing the app sees.
    ///
    /// - Parameters:
    ///   - old: The conditions before.
    ///   - new: The conditions now.
    ///   - reportedOrientation: The orientation last reported (`nil`: none yet).
    ///   - orientationLocked: Whether the user locked the orientation.
    /// - Returns: The facts, and the orientation reported after them.
    public nonisolated static func conditionEvents(
        from old: DeviceConditions, to new: DeviceConditions, reportedOrientation: InterfaceOrientation?,
        orientationLocked: Bool
    ) -> (events: [HostEvent], reportedOrientation: InterfaceOrientation?) {
        var events: [HostEvent] = []
        let lowPower = new.isLowPowerModeEnabled ?? false
        if lowPower != (old.isLowPowerModeEnabled ?? false) {
            events.append(.lowPowerMode(lowPower))
            events.append(.backgroundRefreshStatus(lowPower ? .restricted : .available))
        }
        let thermal = new.thermalState ?? .nominal
        if thermal != (old.thermalState ?? .nominal) { events.append(.thermalState(thermal)) }
        var reported = reportedOrientation
        if !orientationLocked, let orientation = new.deviceOrientation.flatMap(interfaceOrientation),
            orientation != reportedOrientation
        {
            events.append(.statusBarOrientation(orientation, duration: orientationChangeDuration))
            reported = orientation
        }
        return (events, reported)
    }

    /// The interface orientation of a sensor reading; `nil` for `undefined`.
    nonisolated static func interfaceOrientation(_ reading: DeviceOrientation) -> InterfaceOrientation? {
        InterfaceOrientation(sensorOrientation: reading.rawValue)
    }

    /// Starts the conditions monitor on the system bus and turns its values into host facts.
    func startConditions(
        connection: BusConnection, sink: @escaping @Sendable (HostEvent, String) -> Void
    ) async {
        let monitor = DeviceConditionsMonitor(
            connection: connection, thermalRoot: configuration.thermalRoot, logger: logger)
        do {
            try await monitor.start()
        } catch {
            monitor.stop()
            record(.deviceConditions, "unavailable: \(error)")
            return
        }
        bus.conditions = monitor
        bus.deliverConditionEvent = { event in sink(event, "device-conditions") }
        record(.deviceConditions, "live")
        bus.conditionsReader = Task { @MainActor [weak self] in
            for await conditions in monitor.updates {
                guard let self, self.bus.conditions === monitor else { return }
                self.conditionsChanged(conditions)
            }
        }
        // An app active before the monitor ran (or before the bus came back) wants the sensor now.
        await applyAccelerometerWish()
    }

    /// One new value of the conditions: its facts to the sink, the whole value to the host's observer.
    private func conditionsChanged(_ conditions: DeviceConditions) {
        let (events, reported) = Self.conditionEvents(
            from: bus.lastConditions, to: conditions, reportedOrientation: bus.reportedOrientation,
            orientationLocked: bus.orientationLocked)
        bus.lastConditions = conditions
        bus.reportedOrientation = reported
        for event in events { bus.deliverConditionEvent?(event) }
        onDeviceConditionsChange?(conditions)
    }
}
