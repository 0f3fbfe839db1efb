import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Follows the device's conditions, live, and reports them as whole ``DeviceConditions`` values.
///
/// One monitor watches every source once, on the system bus connection's event loop, without polling:
/// - NetworkManager (`org.freedesktop.NetworkManager`): `Connectivity`, `Metered`, `PrimaryConnectionType`.
/// - UPower (`org.freedesktop.UPower`): `OnBattery`; the display device's `Percentage`, `WarningLevel`
///   and `IsPresent` (no battery present: the percentage is unknown).
/// - power-profiles-daemon under both of its names, `org.freedesktop.UPower.PowerProfiles` (preferred)
///   and `net.hadess.PowerProfiles`: `ActiveProfile` (`power-saver` is Low Power Mode) and
///   `PerformanceDegraded`.
/// - iio-sensor-proxy (`net.hadess.SensorProxy`): `HasAccelerometer` and `AccelerometerOrientation`,
///   only while the monitor claims the accelerometer (``claimAccelerometer()``); the claim is made
///   again when the service restarts.
/// - The kernel's thermal zones under ``thermalRoot``, read at start and again whenever the kernel's
///   generic-netlink family `thermal` multicasts an event on its `event` group (a trip point crossed
///   up or down, a zone or trip added, changed or removed, a cooling device changing state). Without
///   that family (no `CONFIG_THERMAL_NETLINK`) the monitor logs it once and keeps the reading from
///   start; ``rereadThermalZones()`` reads again on demand.
///
/// The thermal state (`ThermalState`) is the hottest of:
/// - power-profiles-daemon's `PerformanceDegraded`: any reason (`high-operating-temperature`,
///   `lap-detected`) is at least `serious`; empty is `nominal`;
/// - each thermal zone's: its temperature at or above a `hot` or `critical` trip point is
///   `critical`; at or above a `passive` trip point `serious`; within 5 °C (5000 m°C) below a
///   passive trip point `fair`; else `nominal`. Trip points at or below 0 m°C (disabled) and zones
///   whose temperature cannot be read are left out.
///
/// With neither source the state is unknown (`nil`). Only trip-point crossings are kernel events,
/// so a zone that warms into the fair band is seen at the next event or re-read, not at once.
///
/// Services are followed by name: each service's properties are read (`GetAll`) at start and
/// whenever its name gets a new owner (it started or restarted), and followed through
/// `org.freedesktop.DBus.Properties.PropertiesChanged` from its current owner only. A service that
/// is absent, or leaves the bus, makes its fields unknown. A value of the wrong type or out of range
/// (a `Connectivity` of 9, a `Percentage` of 250, an unknown profile or orientation) is logged once
/// per run of the service and ignored: the field keeps its last valid value, or stays unknown.
///
/// ``updates`` has a whole value after ``start()`` and then one after each change of any field,
/// never a repeat of the same value. When the bus connection closes, the monitor stops.
public final class DeviceConditionsMonitor: Sendable {
    /// The kernel's thermal zones in sysfs: `/sys/class/thermal`.
    public static let defaultThermalRoot = "/sys/class/thermal"

    /// The system bus connection the monitor uses.
    public let connection: BusConnection
    /// The directory whose `thermal_zone<N>` subdirectories are read.
    public let thermalRoot: String
    /// Whole conditions after ``start()`` and after each change; ends after ``stop()``.
    ///
    /// Buffers the newest 64 values: a consumer that falls behind loses old values, never the latest.
    public let updates: AsyncStream<DeviceConditions>

    private let continuation: AsyncStream<DeviceConditions>.Continuation
    private let thermalFamily: String
    private let logger: Logger
    private let state = Mutex(State())

    private enum Phase { case idle, starting, running, stopped }

    private struct ServiceState {
        /// The unique name of the service's current owner.
        var owner: String?
        /// The last valid value of each property.
        var values: [String: BusValue] = [:]
        /// The serial of the signal that last set each property: a read sent before that signal
        /// does not overwrite it.
        var signalSerials: [String: UInt64] = [:]
        /// Whether a bad value from this run of the service was logged already.
        var reportedBadValue = false
    }

    private struct State {
        var phase = Phase.idle
        var services: [ConditionsService: ServiceState] = [:]
        var serial: UInt64 = 0
        var zones: ThermalState?
        var zoneReadsStarted: UInt64 = 0
        var zoneReadsApplied: UInt64 = 0
        var reportedNoZones = false
        /// A reread of the zones for the kernel's events runs, and events came meanwhile: one more
        /// follows it (a burst of events costs two reads, not one each).
        var eventRereadRunning = false
        var eventRereadPending = false
        var accelerometerClaimed = false
        var subscriptions: [BusSubscription] = []
        var thermalWatch: EventSourceToken?
        var published: DeviceConditions?
    }

    /// Creates a monitor; nothing is watched until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A connection to the system bus (or a test bus).
    ///   - thermalRoot: Where the thermal zones are; ``defaultThermalRoot`` on a real system.
    ///   - logger: Where the monitor's diagnostics go (at info and below).
    public convenience init(connection: BusConnection, thermalRoot: String = defaultThermalRoot, logger: Logger) {
        self.init(connection: connection, thermalRoot: thermalRoot, thermalFamily: "thermal", logger: logger)
    }

    /// Creates a monitor that resolves `thermalFamily` instead of the kernel's `thermal` (tests name a
    /// family that does not exist).
    package init(connection: BusConnection, thermalRoot: String, thermalFamily: String, logger: Logger) {
        self.connection = connection
        self.thermalRoot = thermalRoot
        self.thermalFamily = thermalFamily
        var logger = logger
        logger[metadataKey: "source"] = "device-conditions"
        self.logger = logger
        (updates, continuation) = AsyncStream.makeStream(
            of: DeviceConditions.self, bufferingPolicy: .bufferingNewest(64))
    }

    deinit {
        stop()
    }

    /// The conditions now (all unknown before ``start()``).
    public var conditions: DeviceConditions { state.withLock { Self.conditions(of: $0) } }

    /// Whether the monitor wants the accelerometer (``claimAccelerometer()`` without a release since).
    public var isAccelerometerClaimed: Bool { state.withLock { $0.accelerometerClaimed } }

    // MARK: - Start and stop

    /// Follows every service and the thermal zones, reads what is there, and puts the first value on
    /// ``updates``.
    ///
    /// An absent service is not an error: its fields stay unknown until it appears. Calling it again
    /// does nothing.
    ///
    /// - Throws: `BusServiceError` with `BusServiceError/Code/busFailure` when the bus refuses a
    ///   subscription (the monitor is then back where it was before the call).
    public func start() async throws(BusServiceError) {
        let proceed = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .starting
            return true
        }
        guard proceed else { return }
        for service in ConditionsService.allCases {
            do {
                try await follow(service)
            } catch {
                let subscriptions = state.withLock { state in
                    state.phase = .idle
                    state.services.removeAll()
                    defer { state.subscriptions.removeAll() }
                    return state.subscriptions
                }
                subscriptions.forEach { $0.cancel() }
                throw BusServiceError.wrap(error, service: service.busName, message: "follow \(service.busName)")
            }
        }
        connection.addDisconnectHandler { [weak self] in
            guard let self else { return }
            self.logger.info("the system bus went away; the device's conditions are no longer followed")
            self.stop()
        }
        await watchThermalEvents()
        await rereadThermalZones()
        await withTaskGroup(of: Void.self) { group in
            for service in ConditionsService.allCases {
                group.addTask { await self.read(service) }
            }
        }
        let present = state.withLock { state in
            ConditionsService.allCases.filter { state.services[$0]?.owner != nil }.map(\.busName)
        }
        logger.info(
            "following the device's conditions; present: \(present.isEmpty ? "none" : present.joined(separator: ", "))")
        state.withLock { state in
            guard state.phase == .starting else { return }
            state.phase = .running
            let conditions = Self.conditions(of: state)
            state.published = conditions
            continuation.yield(conditions)
        }
    }

    /// Stops following and ends ``updates``. Safe to call more than once.
    ///
    /// An accelerometer claim ends with the connection; release it first to end it sooner.
    public func stop() {
        let (subscriptions, watch) = state.withLock { state in
            state.phase = .stopped
            defer {
                state.subscriptions.removeAll()
                state.thermalWatch = nil
            }
            return (state.subscriptions, state.thermalWatch)
        }
        subscriptions.forEach { $0.cancel() }
        watch?.cancel()
        continuation.finish()
    }

    private func follow(_ service: ConditionsService) async throws {
        let tracker = try await connection.trackNameOwner(service.busName)
        let handler = try await tracker.addOwnerChangeHandler { [weak self] change in
            self?.ownerChanged(service, change)
        }
        state.withLock { $0.subscriptions.append(handler) }
        for object in service.objects {
            let subscription = try await connection.observeProperties(
                sender: service.busName, path: object.path, interface: object.interface
            ) { [weak self] change in
                self?.propertiesChanged(service, change)
            }
            state.withLock { $0.subscriptions.append(subscription) }
        }
        let owner = tracker.currentOwner
        state.withLock { state in
            if state.services[service] == nil { state.services[service] = ServiceState(owner: owner) }
        }
    }

    // MARK: - Services

    /// Loop thread: a service started, restarted or left.
    private func ownerChanged(_ service: ConditionsService, _ change: NameOwnerChange) {
        let running = state.withLock { state -> Bool in
            guard state.phase == .running || state.phase == .starting else { return false }
            var entry = state.services[service] ?? ServiceState()
            entry.owner = change.newOwner
            entry.reportedBadValue = false
            if change.newOwner == nil {
                entry.values.removeAll()
                entry.signalSerials.removeAll()
            }
            state.services[service] = entry
            publish(&state)
            return true
        }
        guard running else { return }
        guard let owner = change.newOwner else {
            logger.info("\(service) left the bus; its conditions are unknown until it is back")
            return
        }
        logger.info("\(service) is on the bus as \(owner); reading it")
        Task {
            if service == .sensorProxy, self.isAccelerometerClaimed {
                await self.claimOnBus(owner: owner)
            }
            await self.read(service)
        }
    }

    /// Loop thread: a verified `PropertiesChanged` from the service's owner.
    private func propertiesChanged(_ service: ConditionsService, _ change: PropertiesChange) {
        let watched = service.objects.first { $0.path == change.path && $0.interface == change.interface }
        guard let watched else { return }
        accept(service, change.changed.filter { watched.properties.contains($0.key) }, read: nil)
        if !change.invalidated.filter(watched.properties.contains).isEmpty {
            Task { await self.read(service) }
        }
    }

    /// Reads every watched property of the service from its current owner (`GetAll` per object).
    private func read(_ service: ConditionsService) async {
        let start = state.withLock { state -> (owner: String, serial: UInt64)? in
            guard let owner = state.services[service]?.owner else { return nil }
            return (owner, state.serial)
        }
        guard let start else { return }
        var values: [String: BusValue] = [:]
        for object in service.objects {
            do {
                let properties = try await connection.getAllProperties(
                    destination: start.owner, path: object.path, interface: object.interface)
                for (name, value) in properties where object.properties.contains(name) { values[name] = value }
            } catch {
                logger.info("\(service): cannot read \(object.interface) at \(object.path): \(error)")
            }
        }
        accept(service, values, read: start)
    }

    /// Keeps the valid values (a read's only where no later signal set the property, and only if the
    /// owner is the one read), logs the first bad one of this run of the service, and publishes.
    private func accept(
        _ service: ConditionsService, _ values: [String: BusValue], read: (owner: String, serial: UInt64)?
    ) {
        guard !values.isEmpty else { return }
        let rejected = state.withLock { state -> [String: BusValue]? in
            guard state.phase == .running || state.phase == .starting, var entry = state.services[service] else {
                return nil
            }
            if let read, entry.owner != read.owner { return nil }
            var rejected: [String: BusValue] = [:]
            for (name, value) in values {
                if let read, let serial = entry.signalSerials[name], serial > read.serial { continue }
                guard ConditionsService.isValid(value, for: name) else {
                    rejected[name] = value
                    continue
                }
                entry.values[name] = value
                if read == nil {
                    state.serial += 1
                    entry.signalSerials[name] = state.serial
                }
            }
            if service == .sensorProxy, !state.accelerometerClaimed {
                // Unclaimed, the sensor's orientation is stale: keep only that it has one.
                entry.values["AccelerometerOrientation"] = nil
            }
            let firstReport = !rejected.isEmpty && !entry.reportedBadValue
            if !rejected.isEmpty { entry.reportedBadValue = true }
            state.services[service] = entry
            publish(&state)
            return firstReport ? rejected : nil
        }
        if let rejected {
            let described = rejected.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            logger.info(
                "\(service) sent \(described): wrong type or out of range; keeping the last valid value (logged once)")
        }
    }

    // MARK: - The accelerometer

    /// Claims iio-sensor-proxy's accelerometer (`ClaimAccelerometer`), so that it reports the
    /// orientation; ``DeviceConditions/deviceOrientation`` is known from then on.
    ///
    /// Claim only while some active app cares: a claimed sensor keeps the hardware awake. The claim is
    /// remembered: when iio-sensor-proxy is absent it is made when the service appears, and again
    /// after each restart. Claiming twice is harmless.
    ///
    /// - Throws: `BusServiceError` with `BusServiceError/Code/notStarted` before ``start()`` or after
    ///   ``stop()``, `BusServiceError/Code/busFailure` when the service refuses (the claim stays
    ///   wanted and is made again when the service restarts).
    public func claimAccelerometer() async throws(BusServiceError) {
        let owner = try state.withLock { state throws(BusServiceError) -> String? in
            guard state.phase == .running else {
                throw BusServiceError(
                    code: .notStarted, service: ConditionsService.sensorProxy.busName,
                    message: "claim the accelerometer")
            }
            state.accelerometerClaimed = true
            return state.services[.sensorProxy]?.owner
        }
        guard let owner else {
            logger.info("the accelerometer is claimed once iio-sensor-proxy appears")
            return
        }
        do {
            try await callSensorProxy("ClaimAccelerometer", owner: owner)
        } catch {
            throw BusServiceError.wrap(
                error, service: ConditionsService.sensorProxy.busName, message: "ClaimAccelerometer")
        }
        await read(.sensorProxy)
    }

    /// Releases the accelerometer (`ReleaseAccelerometer`); the orientation becomes unknown at once.
    ///
    /// Does nothing on the bus when nothing is claimed or iio-sensor-proxy is absent.
    ///
    /// - Throws: `BusServiceError` with `BusServiceError/Code/busFailure` when the service refuses
    ///   (the monitor no longer wants the claim all the same).
    public func releaseAccelerometer() async throws(BusServiceError) {
        let owner = state.withLock { state -> String? in
            guard state.accelerometerClaimed else { return nil }
            state.accelerometerClaimed = false
            state.services[.sensorProxy]?.values["AccelerometerOrientation"] = nil
            publish(&state)
            return state.phase == .running ? state.services[.sensorProxy]?.owner : nil
        }
        guard let owner else { return }
        do {
            try await callSensorProxy("ReleaseAccelerometer", owner: owner)
        } catch {
            throw BusServiceError.wrap(
                error, service: ConditionsService.sensorProxy.busName, message: "ReleaseAccelerometer")
        }
    }

    /// Claims again on a new iio-sensor-proxy; a failure is logged (the claim stays wanted).
    private func claimOnBus(owner: String) async {
        do {
            try await callSensorProxy("ClaimAccelerometer", owner: owner)
            logger.info("claimed the accelerometer again on the new iio-sensor-proxy")
        } catch {
            logger.info("could not claim the accelerometer on the new iio-sensor-proxy: \(error)")
        }
    }

    private func callSensorProxy(_ member: String, owner: String) async throws {
        let object = ConditionsService.sensorProxy.objects[0]
        _ = try await connection.call(
            destination: owner, path: object.path, interface: object.interface, member: member)
    }

    // MARK: - Thermal zones

    /// Reads the zones for the kernel's events until none came during the last read.
    private func rereadThermalZonesForEvents() async {
        while true {
            await rereadThermalZones()
            let again = state.withLock { state -> Bool in
                guard state.eventRereadPending else {
                    state.eventRereadRunning = false
                    return false
                }
                state.eventRereadPending = false
                return true
            }
            guard again else { return }
        }
    }

    /// Reads the thermal zones under ``thermalRoot`` again and publishes what changed.
    ///
    /// The monitor calls it on each thermal event from the kernel; call it when there is another
    /// reason to believe the zones changed (the kernel has no thermal netlink family, the machine
    /// resumed). Reads that overlap apply in the order they were started.
    public func rereadThermalZones() async {
        let serial = state.withLock { state in
            state.zoneReadsStarted += 1
            return state.zoneReadsStarted
        }
        let zones = ThermalZones.read(root: thermalRoot)
        let reportNoZones = state.withLock { state -> Bool in
            guard serial > state.zoneReadsApplied else { return false }
            state.zoneReadsApplied = serial
            state.zones = ThermalZones.state(of: zones)
            publish(&state)
            guard zones.isEmpty, !state.reportedNoZones else { return false }
            state.reportedNoZones = true
            return true
        }
        if reportNoZones {
            logger.info(
                "no readable thermal zone under \(thermalRoot); the kernel's part of the thermal state is unknown")
        } else {
            logger.debug("thermal zones: \(zones.map { "\($0.name) \($0.temperature) m°C" })")
        }
    }

    /// Subscribes to the kernel's thermal events as an fd watch on the loop; logs once if it cannot.
    private func watchThermalEvents() async {
        let socket: ThermalEventSocket
        do {
            socket = try ThermalEventSocket(family: thermalFamily)
        } catch {
            logger.info("\(error); the thermal zones are read at start and on request only")
            return
        }
        do {
            let token = try await connection.loop.addIO(
                fd: socket.fileDescriptor, events: EventLoop.IOEvents.readable, ownsFD: true
            ) { [weak self] _ in
                let (events, overrun) = socket.drain()
                guard let self, overrun || events.contains(where: ThermalEventSocket.rereadEvents.contains) else {
                    return
                }
                self.logger.debug("thermal events \(events)\(overrun ? " (overrun)" : ""); reading the zones")
                let start = self.state.withLock { state -> Bool in
                    guard !state.eventRereadRunning else {
                        state.eventRereadPending = true
                        return false
                    }
                    state.eventRereadRunning = true
                    return true
                }
                guard start else { return }
                Task { await self.rereadThermalZonesForEvents() }
            }
            let kept = state.withLock { state -> Bool in
                guard state.phase == .starting || state.phase == .running else { return false }
                state.thermalWatch = token
                return true
            }
            if !kept { token.cancel() }
            logger.info("following the kernel's thermal events (family \(thermalFamily) id \(socket.familyID))")
        } catch {
            logger.info("cannot watch the kernel's thermal events: \(error); the zones are read on request only")
        }
    }

    // MARK: - Publishing

    private static func conditions(of state: State) -> DeviceConditions {
        var values: [ConditionsService: [String: BusValue]] = [:]
        for (service, entry) in state.services where entry.owner != nil && !entry.values.isEmpty {
            values[service] = entry.values
        }
        return ConditionsService.conditions(
            values: values, zones: state.zones, accelerometerClaimed: state.accelerometerClaimed)
    }

    /// Under the lock: puts the conditions on ``updates`` if they differ from the last ones (so
    /// values are in the order the changes were applied).
    private func publish(_ state: inout State) {
        guard state.phase == .running else { return }
        let conditions = Self.conditions(of: state)
        guard conditions != state.published else { return }
        state.published = conditions
        continuation.yield(conditions)
    }
}
