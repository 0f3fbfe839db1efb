import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// The D-Bus side of a ``HostBridge``: connections and the four service clients.
///
/// Main-actor state of the bridge; the clients themselves deliver on the loop thread.
struct BusClients {
    var system: BusConnection?
    var session: BusConnection?
    var logind: LogindClient?
    var screensaver: ScreenSaverClient?
    var timedated: TimedatedClient?
    var lowMemory: LowMemoryMonitorClient?
    /// The device's conditions (network, power, heat, orientation) and the task reading them.
    var conditions: DeviceConditionsMonitor?
    var conditionsReader: Task<Void, Never>?
    /// The conditions last heard, and the orientation last reported to the app(s): portrait, where
    /// every app starts, until the accelerometer says otherwise.
    var lastConditions = DeviceConditions()
    var reportedOrientation: InterfaceOrientation? = .portrait
    var orientationLocked = false
    /// Whether the host wants the accelerometer claimed (kept across reconnections), and the last of
    /// the claim and release requests, which run one after another.
    var accelerometerWanted = false
    var accelerometerRequests: Task<Void, Never>?
    /// Hands a conditions fact to the bridge's intake (set once the monitor runs).
    var deliverConditionEvent: (@Sendable (HostEvent) -> Void)?
    /// The delay locks the bridge wants held (re-taken after a reconnect).
    var wantedLocks: Set<LogindClient.DelayLock> = []
    var reconnecting: [String: Task<Void, Never>] = [:]

    var inhibitDelayMax: Duration { logind?.inhibitDelayMax ?? .seconds(5) }

    func holdsDelayLock(_ what: String) -> Bool {
        guard let lock = LogindClient.DelayLock(rawValue: what) else { return false }
        return logind?.holdsDelayLock(what: lock) ?? false
    }

    func releaseDelayLock(_ what: String) {
        guard let lock = LogindClient.DelayLock(rawValue: what) else { return }
        logind?.releaseDelayLock(what: lock)
    }

    static func why(_ lock: LogindClient.DelayLock) -> String {
        switch lock {
        case .sleep: return "The app finishes its background work before the machine sleeps"
        case .shutdown: return "The app runs applicationWillTerminate before the machine shuts down"
        }
    }
}

extension HostBridge {
    /// The system bus connection, once the bridge has one (the in-process host's idle inhibitor uses it).
    package var systemConnection: BusConnection? { bus.system }

    /// How long a bus may take to accept a connection (answer `Hello`) before its sources
    /// count as unavailable; the bridge's actor is never blocked meanwhile.
    static let connectTimeout: Duration = .seconds(10)

    /// Connects to the buses and starts every configured bus client, recording each one's status.
    func startBusClients(loop: EventLoop, sink: @escaping @Sendable (HostEvent, String) -> Void) async {
        let sources = configuration.sources
        if !sources.isDisjoint(with: [.logind, .timedated, .lowMemoryMonitor, .deviceConditions]) {
            await connectSystemBus(loop: loop, sink: sink, initial: true)
        }
        if sources.contains(.screensaver) {
            await connectSessionBus(loop: loop, sink: sink, initial: true)
        }
    }

    private func connectSystemBus(loop: EventLoop, sink: @escaping @Sendable (HostEvent, String) -> Void, initial: Bool)
        async
    {
        let sources = configuration.sources
        let connection: BusConnection
        do {
            connection = try await BusConnection(
                configuration.systemBus, loop: loop, description: "lifecycle-system",
                timeout: Self.connectTimeout)
        } catch {
            for source in [Source.logind, .timedated, .lowMemoryMonitor, .deviceConditions]
            where sources.contains(source) {
                record(source, "unavailable: system bus \(configuration.systemBus): \(error)")
            }
            return
        }
        bus.system = connection
        watchDisconnect(connection, address: configuration.systemBus, loop: loop, sink: sink, system: true)
        if sources.contains(.logind) {
            let client = LogindClient(
                connection: connection, environment: configuration.environment, logger: logger
            ) { event in
                sink(event, "logind")
            }
            do {
                try await client.start()
                bus.logind = client
                record(.logind, "live (session \(client.sessionID ?? "pending"))")
                for lock in [LogindClient.DelayLock.sleep, .shutdown] where initial || bus.wantedLocks.contains(lock) {
                    await takeDelayLock(lock.rawValue)
                }
            } catch {
                record(.logind, "unavailable: \(error)")
            }
        }
        if sources.contains(.timedated) {
            let client = TimedatedClient(connection: connection, logger: logger) { event in sink(event, "timedated") }
            do {
                let zone = try await client.start()
                bus.timedated = client
                record(.timedated, "live (\(zone))")
            } catch {
                record(.timedated, "unavailable: \(error)")
            }
        }
        if sources.contains(.lowMemoryMonitor) {
            let client = LowMemoryMonitorClient(connection: connection, logger: logger) { event in
                sink(event, "low-memory-monitor")
            }
            do {
                try await client.start()
                bus.lowMemory = client
                record(.lowMemoryMonitor, "live")
            } catch {
                record(.lowMemoryMonitor, "unavailable: \(error)")
            }
        }
        if sources.contains(.deviceConditions) {
            await startConditions(connection: connection, sink: sink)
        }
    }

    private func connectSessionBus(
        loop: EventLoop, sink: @escaping @Sendable (HostEvent, String) -> Void, initial: Bool
    ) async {
        let connection: BusConnection
        do {
            connection = try await BusConnection(
                configuration.sessionBus, loop: loop, description: "lifecycle-session",
                timeout: Self.connectTimeout)
        } catch {
            record(.screensaver, "unavailable: session bus \(configuration.sessionBus): \(error)")
            return
        }
        bus.session = connection
        watchDisconnect(connection, address: configuration.sessionBus, loop: loop, sink: sink, system: false)
        let client = ScreenSaverClient(connection: connection, logger: logger) { event in sink(event, "screensaver") }
        do {
            let present = try await client.start()
            bus.screensaver = client
            // The subscriptions follow the names' owners, so a screensaver that starts later is heard.
            record(
                .screensaver,
                present.isEmpty
                    ? "live (waiting for a screensaver to appear)"
                    : "live (\(present.map(\.busName).joined(separator: ", ")))")
        } catch {
            record(.screensaver, "unavailable: \(error)")
        }
    }

    /// When a bus vanishes: drop its clients, then reconnect with a ``Backoff`` (from 50 ms doubling
    /// up to 5 s, 40 attempts) and resync.
    ///
    /// The bus may come back before its services do (logind registers after the daemon restarts),
    /// so an attempt counts only when every client that was live before the disconnect is live
    /// again; otherwise the connection is closed and tried again later. The last attempt keeps
    /// whatever it got, and giving up is logged.
    private func watchDisconnect(
        _ connection: BusConnection, address: BusConnection.Address, loop: EventLoop,
        sink: @escaping @Sendable (HostEvent, String) -> Void, system: Bool
    ) {
        connection.addDisconnectHandler { [weak self, weak connection] in
            Task { @MainActor in
                guard let self, self.loop != nil else { return }
                // A connection the bridge already replaced or closed itself is not news.
                guard let connection, connection === (system ? self.bus.system : self.bus.session) else { return }
                self.logger.info("\(system ? "system" : "session") bus \(address) disconnected; reconnecting")
                let wanted = self.liveClients(system: system)
                self.dropClients(system: system)
                // The screensaver is unknown until the session bus is back: it stops counting as
                // a lock, and logind's word stands (the new client reports what it reads).
                if !system { sink(.locked(false), "screensaver") }
                let key = address.description
                self.bus.reconnecting[key]?.cancel()
                self.bus.reconnecting[key] = Task { @MainActor [weak self] in
                    var backoff = Backoff(initial: .milliseconds(50), maximum: .seconds(5))
                    let attempts = 40
                    for attempt in 1...attempts {
                        try? await Task.sleep(for: backoff.next())
                        guard let self, self.loop != nil, !Task.isCancelled else { return }
                        if system {
                            await self.connectSystemBus(loop: loop, sink: sink, initial: false)
                        } else {
                            await self.connectSessionBus(loop: loop, sink: sink, initial: false)
                        }
                        let connected = (system ? self.bus.system : self.bus.session) != nil
                        if connected && self.liveClients(system: system).isSuperset(of: wanted) { break }
                        if attempt == attempts {
                            self.logger.info(
                                """
                                gave up waiting for \(wanted.subtracting(self.liveClients(system: system)).map(\.rawValue).sorted()) \
                                on the \(system ? "system" : "session") bus after \(attempts) attempts
                                """)
                            break
                        }
                        if connected {
                            let stale = system ? self.bus.system : self.bus.session
                            self.dropClients(system: system)
                            stale?.close()
                        }
                    }
                    // A task replaced by a newer one must not remove the newer one's entry.
                    if !Task.isCancelled { self?.bus.reconnecting[key] = nil }
                }
            }
        }
    }

    /// The bus clients of one bus that are running now.
    private func liveClients(system: Bool) -> Set<Source> {
        var live: Set<Source> = []
        if system {
            if bus.logind != nil { live.insert(.logind) }
            if bus.timedated != nil { live.insert(.timedated) }
            if bus.lowMemory != nil { live.insert(.lowMemoryMonitor) }
            if bus.conditions != nil { live.insert(.deviceConditions) }
        } else if bus.screensaver != nil {
            live.insert(.screensaver)
        }
        return live
    }

    private func dropClients(system: Bool) {
        if system {
            bus.logind?.stop()
            bus.timedated?.stop()
            bus.lowMemory?.stop()
            bus.conditions?.stop()
            bus.conditionsReader?.cancel()
            bus.logind = nil
            bus.timedated = nil
            bus.lowMemory = nil
            bus.conditions = nil
            bus.conditionsReader = nil
            bus.system = nil
        } else {
            bus.screensaver?.stop()
            bus.screensaver = nil
            bus.session = nil
        }
    }

    /// Stops the bus clients (closing the delay-lock fds releases the locks) and the connections.
    func stopBusClients() {
        for task in bus.reconnecting.values { task.cancel() }
        bus.reconnecting.removeAll()
        let system = bus.system
        let session = bus.session
        dropClients(system: true)
        dropClients(system: false)
        system?.close()
        session?.close()
    }
}
