import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Follows the desktop's screensaver on the session bus and reports its lock as a host fact.
///
/// `ActiveChanged(b)` of `org.freedesktop.ScreenSaver` (KDE, Xfce, most desktops) and of
/// `org.gnome.ScreenSaver` (GNOME Shell) become `AppLifecycle/HostEvent/locked(_:)`. Each signal is
/// accepted only from the current unique owner of its service's well-known name and with signature `b`;
/// the path is not checked, since desktops emit on `/ScreenSaver` as well as `/org/freedesktop/ScreenSaver`.
///
/// The two services describe one screen, so the client reports one fact, active when any service
/// is: an event only when that differs from the last one reported (GNOME Shell, which owns both
/// names, emits both signals for one lock, and that gives one event). At start `GetActive` is read
/// from every service present and the result reported, active or not. A service whose owner leaves
/// the bus no longer counts as active (a restarted screensaver starts inactive and does not say
/// so); a new owner's `GetActive` is read.
public final class ScreenSaverClient: Sendable {
    /// One screensaver D-Bus service.
    public struct Service: Sendable, Hashable, CustomStringConvertible {
        /// The well-known bus name, for example `org.freedesktop.ScreenSaver`.
        public var busName: String
        /// The object `GetActive` is called on.
        public var path: String
        /// The interface of `GetActive` and `ActiveChanged`.
        public var interface: String

        /// Creates a service description.
        ///
        /// - Parameters:
        ///   - busName: The well-known bus name.
        ///   - path: The object path for `GetActive`.
        ///   - interface: The interface of `GetActive` and `ActiveChanged`.
        public init(busName: String, path: String, interface: String) {
            self.busName = busName
            self.path = path
            self.interface = interface
        }

        /// `org.freedesktop.ScreenSaver` at `/org/freedesktop/ScreenSaver`.
        public static let freedesktop = Service(
            busName: "org.freedesktop.ScreenSaver", path: "/org/freedesktop/ScreenSaver",
            interface: "org.freedesktop.ScreenSaver")
        /// `org.gnome.ScreenSaver` at `/org/gnome/ScreenSaver`.
        public static let gnome = Service(
            busName: "org.gnome.ScreenSaver", path: "/org/gnome/ScreenSaver", interface: "org.gnome.ScreenSaver")

        /// The bus name.
        public var description: String { busName }
    }

    /// The session bus connection the client uses.
    public let connection: BusConnection
    /// The services the client follows.
    public let services: [Service]
    private let sink: @Sendable (HostEvent) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var started = false
        var subscriptions: [BusSubscription] = []
        /// Each service's last known state, by bus name.
        var activeByService: [String: Bool] = [:]
        /// The fact last reported (any service active), `nil` before the first.
        var active: Bool?

        /// Records one service's state; returns the fact to report if it changed.
        mutating func record(_ value: Bool, for service: String) -> Bool? {
            activeByService[service] = value
            let combined = activeByService.values.contains(true)
            guard combined != active else { return nil }
            active = combined
            return combined
        }
    }

    /// Creates a client; nothing happens on the bus until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A connection to the session bus (or a test bus).
    ///   - services: The services to follow; both by default.
    ///   - logger: Where the client's diagnostics go (at info and below), tagged with `service`.
    ///   - sink: Receives the host events, on the bus loop thread.
    public init(
        connection: BusConnection, services: [Service] = [.freedesktop, .gnome], logger: Logger,
        sink: @escaping @Sendable (HostEvent) -> Void
    ) {
        self.connection = connection
        self.services = services
        self.sink = sink
        var logger = logger
        logger[metadataKey: "service"] = "screensaver"
        self.logger = logger
    }

    /// The last known screensaver state, or `nil` before any was read.
    public var isActive: Bool? { state.withLock { $0.active } }

    /// Subscribes to every service's `ActiveChanged` and reads `GetActive` from those present.
    ///
    /// The subscriptions follow each name's owner, so a screensaver that starts later is heard too.
    ///
    /// - Returns: The services that have an owner now; empty when none is on the bus yet (the
    ///   subscriptions stay, so a screensaver that starts later is heard).
    /// - Throws: `BusServiceError` with `BusServiceError/Code/busFailure` when a subscription fails.
    @discardableResult
    public func start() async throws(BusServiceError) -> [Service] {
        guard
            state.withLock({ state -> Bool in
                defer { state.started = true }
                return !state.started
            })
        else {
            return []
        }
        var present: [Service] = []
        var subscriptions: [BusSubscription] = []
        do {
            for service in services {
                let subscription = try await connection.subscribe(
                    sender: service.busName, path: nil, interface: service.interface, member: "ActiveChanged",
                    signature: "b"
                ) { [weak self] signal in
                    guard let active = signal.arguments[0].boolValue else { return }
                    self?.report(active, from: service.busName)
                }
                subscriptions.append(subscription)
                let tracker = try await connection.trackNameOwner(service.busName)
                subscriptions.append(
                    try await tracker.addOwnerChangeHandler { [weak self] change in
                        self?.ownerChanged(change, of: service)
                    })
                if tracker.currentOwner != nil { present.append(service) }
            }
        } catch {
            subscriptions.forEach { $0.cancel() }
            state.withLock { $0.started = false }
            throw BusServiceError.wrap(
                error, service: services.map(\.busName).joined(separator: ", "),
                message: "subscribe to ActiveChanged")
        }
        // The subscriptions follow each name's owner, so they stay even when no screensaver is on
        // the bus yet: one that starts later is heard.
        state.withLock { $0.subscriptions = subscriptions }
        guard !present.isEmpty else {
            logger.info("no screensaver on the bus yet; following \(services.map(\.busName)) for one to appear")
            return []
        }
        var read: [String: Bool] = [:]
        for service in present {
            if let active = await readActive(service) { read[service.busName] = active }
        }
        if !read.isEmpty {
            try? await connection.loop.run { [self, read] in
                // A signal that came meanwhile is newer than what was read: it wins.
                let fact = state.withLock { state -> Bool? in
                    for (service, value) in read where state.activeByService[service] == nil {
                        state.activeByService[service] = value
                    }
                    guard state.active == nil else { return nil }
                    let combined = state.activeByService.values.contains(true)
                    state.active = combined
                    return combined
                }
                if let fact { sink(.locked(fact)) }
            }
        }
        logger.info(
            "following \(present.map(\.busName)); active: \(read.isEmpty ? "unknown" : String(read.values.contains(true)))"
        )
        return present
    }

    /// `GetActive` of one service, or `nil` (logged) when it cannot be read.
    private func readActive(_ service: Service) async -> Bool? {
        do {
            let reply = try await connection.call(
                destination: service.busName, path: service.path,
                interface: service.interface, member: "GetActive")
            guard let active = reply.first?.boolValue else {
                logger.info("\(service) GetActive returned \(reply); ignored")
                return nil
            }
            return active
        } catch {
            logger.info("\(service) GetActive failed: \(error)")
            return nil
        }
    }

    /// A service's owner left (it no longer counts as active) or a new one came (its state is read).
    /// Loop thread.
    private func ownerChanged(_ change: NameOwnerChange, of service: Service) {
        guard change.newOwner != nil else {
            logger.info("\(service) left the bus; it no longer counts as active")
            report(false, from: service.busName)
            return
        }
        Task { [weak self] in
            guard let self, let active = await self.readActive(service) else { return }
            try? await self.connection.loop.run { self.report(active, from: service.busName) }
        }
    }

    /// Cancels the subscriptions. Safe to call more than once.
    public func stop() {
        let subscriptions = state.withLock { state in
            defer { state.subscriptions.removeAll() }
            return state.subscriptions
        }
        subscriptions.forEach { $0.cancel() }
    }

    private func report(_ active: Bool, from service: String) {
        if let fact = state.withLock({ $0.record(active, for: service) }) {
            logger.debug("\(service) ActiveChanged(\(active))")
            sink(.locked(fact))
        } else {
            logger.debug("\(service) ActiveChanged(\(active)): no change")
        }
    }
}
