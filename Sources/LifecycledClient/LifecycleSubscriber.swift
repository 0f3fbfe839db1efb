import AppLifecycle
import FoundationEssentials
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus

/// Follows the lifecycle notifications and state changes of the apps `lifecycled` hosts, from
/// any process.
///
/// It subscribes to lifecycled's `Notification` and `StateChanged` signals (optionally only
/// those of one app, with an `arg0` match), accepting them only from the current owner of
/// `org.applifecycle.Lifecycled1`. A signal with the wrong signature, or whose userInfo does
/// not decode, is logged and dropped.
///
/// ## Three ways to receive
///
/// - **Closures** (``addHandler(_:)``): called on the bus loop's thread, in bus order; return quickly.
/// - **Async sequence** (``events(bufferingNewest:)``): a bounded buffer that keeps the newest
///   events: when a slow consumer lets it fill up, the *oldest* undelivered event is dropped.
/// - **Typed notifications** (``repost(into:)``): each `Notification` signal is posted, by name
///   with its userInfo, into a `LifecycleNotificationCenter` on the main actor, with a
///   ``RemoteApplication`` as object; the center's bridging makes typed observers work, so
///   `addObserver(for: Application.DidBecomeActiveMessage.self)` sees remote apps become active.
///
/// ## Daemon restarts
///
/// The sender check follows the name's owner, so after lifecycled restarts the subscriber
/// delivers the new daemon's signals. It reports the gap (``Event/daemonVanished``,
/// ``Event/daemonAppeared(owner:)``) and then resynchronises with `ListApps`
/// (``Event/resynced(_:)``), since changes made while it was away were never signalled.
public final class LifecycleSubscriber: Sendable {
    /// One thing the subscriber saw.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// An app posted a lifecycle notification (`Notification` signal).
        case notification(appID: String, name: String, userInfo: UserInfo)
        /// An app changed state (`StateChanged` signal); states as the daemon spelt them.
        case stateChanged(appID: String, previous: String, state: String)
        /// What the display server shows of an app changed (`WindowsChanged` signal): its window
        /// state (`activated`, `visible`, `hidden`, `closed`) and its windows, one description each.
        case windowsChanged(appID: String, windowState: String, windows: [String])
        /// lifecycled left the bus.
        case daemonVanished
        /// lifecycled (re)appeared with this unique name.
        case daemonAppeared(owner: String)
        /// The apps and their states, read with `ListApps` after the daemon reappeared.
        case resynced([LifecycledApp])

        /// A one-line summary.
        public var description: String {
            switch self {
            case .notification(let app, let name, let info): "\(app) \(name)\(info.isEmpty ? "" : " \(info)")"
            case .stateChanged(let app, let previous, let state): "\(app) \(previous) → \(state)"
            case .windowsChanged(let app, let state, let windows):
                "\(app) windows \(state)\(windows.isEmpty ? "" : ": " + windows.joined(separator: ", "))"
            case .daemonVanished: "lifecycled vanished"
            case .daemonAppeared(let owner): "lifecycled appeared as \(owner)"
            case .resynced(let apps): "resynced \(apps.count) apps"
            }
        }
    }

    /// The object remote notifications are posted with by ``repost(into:)``: one per app id.
    public final class RemoteApplication: Sendable, CustomStringConvertible {
        /// The app's id.
        public let appID: String

        /// Creates the stand-in of a remote app.
        ///
        /// Normally obtained from ``LifecycleSubscriber/remoteApplication(_:)``, which returns
        /// the same object for the same id, so observers can filter by it.
        public init(appID: String) { self.appID = appID }

        /// The app id.
        public var description: String { appID }
    }

    /// A handler registration; cancel it to stop deliveries.
    public final class Registration: Sendable {
        private let onCancel: Mutex<(@Sendable () -> Void)?>

        init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

        /// Stops deliveries to this handler. Calling it again does nothing.
        public func cancel() { onCancel.withLock { $0.take() }?() }
    }

    /// The connection the subscriber listens on.
    public let connection: BusConnection
    /// The app id it follows, or `nil` for every app.
    public let appID: String?

    private let ownedLoop: EventLoop?
    private let state = Mutex(State())
    private let logger: Logger

    private struct State {
        var handlers: [(id: UInt64, handler: @Sendable (Event) -> Void)] = []
        var nextID: UInt64 = 1
        var subscriptions: [BusSubscription] = []
        var remoteApplications: [String: RemoteApplication] = [:]
        var closed = false
    }

    /// Connects to a bus and subscribes.
    ///
    /// The subscriber owns the connection and its loop; ``close()`` ends both.
    ///
    /// - Parameters:
    ///   - address: The bus lifecycled is on (default: the session bus).
    ///   - appID: Follow only this app; `nil` for all.
    ///   - logger: Where dropped signals and failed resyncs are told (at info).
    /// - Throws: `BusError` when the bus cannot be reached or the matches cannot be installed,
    ///   `ApplicationError` for an invalid app id.
    public static func connect(
        to address: BusConnection.Address = .session, appID: String? = nil, logger: Logger
    ) async throws -> LifecycleSubscriber {
        let loop = try EventLoop(name: "lifecycle-subscriber")
        do {
            let connection = try await BusConnection(
                address, loop: loop, description: "lifecycle-subscriber", timeout: .seconds(25))
            return try await LifecycleSubscriber(connection: connection, appID: appID, logger: logger, ownedLoop: loop)
        } catch {
            loop.shutdown()
            throw error
        }
    }

    /// Subscribes on an existing connection (which stays the caller's).
    ///
    /// Returns once the matches are installed: every signal emitted afterwards is seen.
    ///
    /// - Parameters:
    ///   - connection: An open connection to the bus lifecycled is on.
    ///   - appID: Follow only this app; `nil` for all.
    ///   - logger: Where dropped signals and failed resyncs are told (at info).
    /// - Throws: `BusError` when the matches cannot be installed, `ApplicationError` for an invalid app id.
    public convenience init(connection: BusConnection, appID: String? = nil, logger: Logger) async throws {
        try await self.init(connection: connection, appID: appID, logger: logger, ownedLoop: nil)
    }

    private init(connection: BusConnection, appID: String?, logger: Logger, ownedLoop: EventLoop?) async throws {
        if let appID, !LifecycledProtocol.isValidAppID(appID) {
            throw ApplicationError(.invalidInput, "'\(appID)' is not a valid app id")
        }
        self.connection = connection
        self.appID = appID
        self.logger = logger
        self.ownedLoop = ownedLoop
        do {
            try await start()
        } catch {
            close()
            throw error
        }
    }

    private func start() async throws {
        let tracker = try await connection.trackNameOwner(LifecycledProtocol.busName)
        let ownerHandler = try await tracker.addOwnerChangeHandler { [weak self] change in
            self?.ownerChanged(change)
        }
        remember(ownerHandler)
        let logger = self.logger
        let notifications = try await connection.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Signal.notification.name, signature: "ssa{sv}", arg0: appID
        ) { [weak self] signal in
            guard let app = signal.arguments[0].stringValue, let name = signal.arguments[1].stringValue else { return }
            guard LifecycledProtocol.isValidAppID(app), !name.isEmpty,
                name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength
            else {
                logger.info("dropped Notification with app id '\(app)' and name '\(name)': invalid")
                return
            }
            do {
                let userInfo = try UserInfoBusCodec.decodeUserInfo(signal.arguments[2])
                self?.dispatch(.notification(appID: app, name: name, userInfo: userInfo))
            } catch {
                logger.info("dropped Notification \(name) of \(app): \(error)")
            }
        }
        remember(notifications)
        let states = try await connection.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Signal.stateChanged.name, signature: "sss", arg0: appID
        ) { [weak self] signal in
            guard let app = signal.arguments[0].stringValue, let previous = signal.arguments[1].stringValue,
                let state = signal.arguments[2].stringValue
            else { return }
            self?.dispatch(.stateChanged(appID: app, previous: previous, state: state))
        }
        remember(states)
        let windows = try await connection.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface,
            member: LifecycledProtocol.Signal.windowsChanged.name, signature: "ssas", arg0: appID
        ) { [weak self] signal in
            guard let app = signal.arguments[0].stringValue, let state = signal.arguments[1].stringValue,
                let list = signal.arguments[2].arrayValue
            else { return }
            self?.dispatch(.windowsChanged(appID: app, windowState: state, windows: list.compactMap(\.stringValue)))
        }
        remember(windows)
    }

    private func remember(_ subscription: BusSubscription) {
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.subscriptions.append(subscription) }
            return state.closed
        }
        if closed { subscription.cancel() }
    }

    // MARK: Receiving

    /// Adds a handler called with every event from now on, on the bus loop's thread, in bus order.
    ///
    /// The handler must return quickly (hand long work to a task).
    ///
    /// - Parameters:
    ///   - handler: Called with each event.
    /// - Returns: The registration; cancel it to stop.
    @discardableResult
    public func addHandler(_ handler: @escaping @Sendable (Event) -> Void) -> Registration {
        let id = state.withLock { state -> UInt64 in
            let id = state.nextID
            state.nextID += 1
            state.handlers.append((id, handler))
            return id
        }
        return Registration { [weak self] in
            self?.state.withLock { $0.handlers.removeAll { $0.id == id } }
        }
    }

    /// The events from now on as an `AsyncSequence` with a bounded buffer.
    ///
    /// The buffer holds at most `limit` undelivered events; when it is full, the oldest one is
    /// dropped to make room (the consumer sees the latest state of things rather than stalling
    /// the bus). The handler is removed when iteration ends or the stream is dropped.
    ///
    /// - Parameters:
    ///   - limit: The buffer's capacity (at least 1).
    public func events(bufferingNewest limit: Int = 256) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(max(1, limit)))
        let registration = addHandler { event in continuation.yield(event) }
        continuation.onTermination = { _ in registration.cancel() }
        return stream
    }

    /// Re-posts every remote notification into a center, by name, on the main actor, in order.
    ///
    /// The object is ``remoteApplication(_:)`` of the sending app. Typed observers of the center
    /// receive the typed message when its userInfo decodes. State changes are not re-posted
    /// (the apps' own `ApplicationStateDidChangeNotification` arrives as a notification).
    /// At most 1024 notifications wait for the main actor; beyond that the oldest is dropped.
    ///
    /// - Parameters:
    ///   - center: The center to post into.
    /// - Returns: The registration; cancel it to stop.
    @MainActor
    public func repost(into center: LifecycleNotificationCenter) -> Registration {
        let (stream, continuation) = AsyncStream<(String, String, UserInfo)>.makeStream(
            bufferingPolicy: .bufferingNewest(1024))
        let registration = addHandler { event in
            if case .notification(let app, let name, let userInfo) = event { continuation.yield((app, name, userInfo)) }
        }
        let task = Task { @MainActor [weak self, weak center] in
            for await (app, name, userInfo) in stream {
                guard let self, let center else { return }
                center.post(
                    name: LifecycleNotification.Name(name), object: self.remoteApplication(app), userInfo: userInfo)
            }
        }
        return Registration {
            registration.cancel()
            continuation.finish()
            task.cancel()
        }
    }

    /// The stand-in object of a remote app: the same object for the same id.
    public func remoteApplication(_ appID: String) -> RemoteApplication {
        state.withLock { state in
            if let existing = state.remoteApplications[appID] { return existing }
            let object = RemoteApplication(appID: appID)
            state.remoteApplications[appID] = object
            return object
        }
    }

    /// Reads every known app and its state (`ListApps`).
    ///
    /// - Throws: `BusError` (for example `ServiceUnknown` when lifecycled is not running).
    public func listApps() async throws -> [LifecycledApp] {
        let reply = try await connection.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.listApps.name)
        return LifecycledApp.list(from: reply.first)
    }

    /// Cancels the subscriptions; closes the connection and loop if the subscriber opened them.
    ///
    /// Calling it again does nothing.
    public func close() {
        let subscriptions = state.withLock { state -> [BusSubscription] in
            guard !state.closed else { return [] }
            state.closed = true
            state.handlers.removeAll()
            defer { state.subscriptions.removeAll() }
            return state.subscriptions
        }
        for subscription in subscriptions { subscription.cancel() }
        if let ownedLoop {
            connection.close()
            ownedLoop.shutdown()
        }
    }

    private func dispatch(_ event: Event) {
        let handlers = state.withLock { $0.handlers.map(\.handler) }
        for handler in handlers { handler(event) }
    }

    private func ownerChanged(_ change: NameOwnerChange) {
        guard let owner = change.newOwner else {
            dispatch(.daemonVanished)
            return
        }
        dispatch(.daemonAppeared(owner: owner))
        Task { [weak self] in
            guard let self else { return }
            do {
                let apps = try await self.listApps()
                // Handlers run on the loop thread, in bus order: deliver the resync there too.
                try await self.connection.loop.run { [self] in self.dispatch(.resynced(apps)) }
            } catch {
                self.logger.info("resync after lifecycled restart failed: \(error)")
            }
        }
    }
}
