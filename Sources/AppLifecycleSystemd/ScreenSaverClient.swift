import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Follows the desktop's screensaver on the session bus and reports its lock as a host fact.
///
/// `ActiveChanged(b)` of `org.freedesktop.ScreenSaver` (KDE, Xfce, most desktops) and of
/// `org.gnome.ScreenSaver` (GNOME Shell) become ``AppLifecycle/HostEvent/locked(_:)``. Each signal is
/// accepted only from the current unique owner of its service's well-known name and with signature `b`;
/// the path is not checked, since desktops emit on `/ScreenSaver` as well as `/org/freedesktop/ScreenSaver`.
///
/// The two services describe one screen, so the client reports one fact: an event only when the
/// screensaver's state differs from the last one reported (GNOME Shell, which owns both names, emits
/// both signals for one lock, and that gives one event). At start `GetActive` is read from every
/// service present; an active screensaver is reported as `locked(true)`, an inactive one is remembered
/// but not reported (an unlocked screen at launch is not news).
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
    private let logger = Logger(label: "AppLifecycleSystemd.screensaver")
    private let state = Mutex(State())

    private struct State {
        var started = false
        var subscriptions: [BusSubscription] = []
        var active: Bool?
    }

    /// Creates a client; nothing happens on the bus until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A connection to the session bus (or a test bus).
    ///   - services: The services to follow; both by default.
    ///   - sink: Receives the host events, on the bus loop thread.
    public init(
        connection: BusConnection, services: [Service] = [.freedesktop, .gnome],
        sink: @escaping @Sendable (HostEvent) -> Void
    ) {
        self.connection = connection
        self.services = services
        self.sink = sink
    }

    /// The last known screensaver state, or `nil` before any was read.
    public var isActive: Bool? { state.withLock { $0.active } }

    /// Subscribes to every service's `ActiveChanged` and reads `GetActive` from those present.
    ///
    /// The subscriptions follow each name's owner, so a screensaver that starts later is heard too.
    ///
    /// - Returns: The services that have an owner now; empty when none is on the bus yet (the
    ///   subscriptions stay, so a screensaver that starts later is heard).
    /// - Throws: ``BusServiceError`` with ``BusServiceError/Code/busFailure`` when a subscription fails.
    @discardableResult
    public func start() async throws(BusServiceError) -> [Service] {
        guard state.withLock({ state -> Bool in defer { state.started = true }; return !state.started }) else {
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
                if try await connection.trackNameOwner(service.busName).currentOwner != nil { present.append(service) }
            }
        } catch {
            subscriptions.forEach { $0.cancel() }
            state.withLock { $0.started = false }
            throw BusServiceError.wrap(error, service: services.map(\.busName).joined(separator: ", "),
                                       message: "subscribe to ActiveChanged")
        }
        // The subscriptions follow each name's owner, so they stay even when no screensaver is on
        // the bus yet: one that starts later is heard.
        state.withLock { $0.subscriptions = subscriptions }
        guard !present.isEmpty else {
            logger.info("no screensaver on the bus yet; following \(services.map(\.busName)) for one to appear")
            return []
        }
        var anyActive: Bool?
        for service in present {
            do {
                let reply = try await connection.call(destination: service.busName, path: service.path,
                                                      interface: service.interface, member: "GetActive")
                guard let active = reply.first?.boolValue else {
                    logger.notice("\(service) GetActive returned \(reply); ignored")
                    continue
                }
                anyActive = (anyActive ?? false) || active
            } catch {
                logger.notice("\(service) GetActive failed: \(error)")
            }
        }
        if let anyActive {
            try? await connection.loop.run { [self] in
                let report = state.withLock { state -> Bool in
                    guard state.active == nil else { return false }
                    state.active = anyActive
                    return anyActive
                }
                if report { sink(.locked(true)) }
            }
        }
        logger.info("following \(present.map(\.busName)); active: \(anyActive.map(String.init) ?? "unknown")")
        return present
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
        let changed = state.withLock { state -> Bool in
            guard state.active != active else { return false }
            state.active = active
            return true
        }
        if changed {
            logger.debug("\(service) ActiveChanged(\(active))")
            sink(.locked(active))
        } else {
            logger.debug("\(service) ActiveChanged(\(active)): no change")
        }
    }
}
