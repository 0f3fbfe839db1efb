import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// A client of the desktop's notification server, `org.freedesktop.Notifications` on the session bus.
///
/// ``notify(_:timeout:)`` shows a banner; ``events`` reports what the user did with it: `ActionInvoked`
/// (the key `default` is a click on the banner itself), `ActivationToken` (sent before
/// `ActionInvoked` by servers that support it, for the compositor to focus the app) and
/// `NotificationClosed`. Each signal is accepted only from the current owner of
/// `org.freedesktop.Notifications` (a peer that merely emits one with that interface is ignored),
/// and only with the specification's signature.
///
/// A server that is not running but D-Bus activatable is started by `Notify`; ``isAvailable(timeout:)``
/// says whether either holds, so a caller can keep a notification instead of losing it.
package final class DesktopNotificationClient: Sendable {
    /// The server's well-known name, also its interface.
    package static let busName = "org.freedesktop.Notifications"
    /// The server's object.
    package static let objectPath = "/org/freedesktop/Notifications"

    /// A banner to show: `Notify`'s arguments.
    package struct Banner: Sendable, Hashable {
        /// `app_name`.
        package var appName: String
        /// `replaces_id`: the server id of the banner it replaces, or 0.
        package var replacesID: UInt32 = 0
        /// `app_icon`: an icon name or `file://` URI, or empty.
        package var appIcon = ""
        /// `summary`.
        package var summary: String
        /// `body`.
        package var body: String
        /// `actions`: (key, label) pairs; the key `default` is the click on the banner.
        package var actions: [(key: String, label: String)] = []
        /// `hints`: `desktop-entry`, `urgency`, `sound-name`, …
        package var hints: [String: BusValue] = [:]
        /// `expire_timeout` in ms: -1 the server's default, 0 never.
        package var expireTimeout: Int32 = -1

        /// Creates a banner.
        package init(appName: String, summary: String, body: String) {
            self.appName = appName
            self.summary = summary
            self.body = body
        }

        /// Compares every argument.
        package static func == (lhs: Banner, rhs: Banner) -> Bool {
            lhs.appName == rhs.appName && lhs.replacesID == rhs.replacesID && lhs.appIcon == rhs.appIcon
                && lhs.summary == rhs.summary && lhs.body == rhs.body
                && lhs.actions.map(\.key) == rhs.actions.map(\.key)
                && lhs.actions.map(\.label) == rhs.actions.map(\.label) && lhs.hints == rhs.hints
                && lhs.expireTimeout == rhs.expireTimeout
        }

        /// Hashes the summary and body.
        package func hash(into hasher: inout Hasher) {
            hasher.combine(summary)
            hasher.combine(body)
        }
    }

    /// What the server reported.
    package enum Event: Sendable, Equatable {
        /// `ActionInvoked(id, key)`.
        case actionInvoked(id: UInt32, key: String)
        /// `ActivationToken(id, token)`.
        case activationToken(id: UInt32, token: String)
        /// `NotificationClosed(id, reason)`: 1 expired, 2 dismissed, 3 closed by a call, 4 undefined.
        case closed(id: UInt32, reason: UInt32)
        /// The server's owner changed (`nil`: it left the bus, and its banners with it).
        case serverChanged(owner: String?)
    }

    /// The session bus connection.
    package let connection: BusConnection
    /// The server's events, in the bus's order (one consumer).
    package let events: AsyncStream<Event>
    private let sink: AsyncStream<Event>.Continuation
    private let state = Mutex<[BusSubscription]>([])
    private let tracker = Mutex<NameOwnerTracker?>(nil)
    /// Whether the server (by unique name) parses bodies as markup (`GetCapabilities` has `body-markup`).
    private let markup = Mutex<(owner: String, parses: Bool)?>(nil)
    private let logger: Logger

    /// Creates a client; nothing happens on the bus until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A session bus connection.
    ///   - logger: Where the client's diagnostics go (at debug), tagged with `service`.
    package init(connection: BusConnection, logger: Logger) {
        self.connection = connection
        (events, sink) = AsyncStream<Event>.makeStream()
        var logger = logger
        logger[metadataKey: "service"] = "org.freedesktop.Notifications"
        self.logger = logger
    }

    /// Subscribes to the server's signals and follows its owner.
    ///
    /// - Throws: `BusServiceError` when a subscription cannot be installed.
    package func start() async throws(BusServiceError) {
        let sink = self.sink
        do {
            let tracker = try await connection.trackNameOwner(Self.busName)
            self.tracker.withLock { $0 = tracker }
            var subscriptions: [BusSubscription] = []
            subscriptions.append(
                try await tracker.addOwnerChangeHandler { change in
                    sink.yield(.serverChanged(owner: change.newOwner))
                })
            subscriptions.append(
                try await connection.subscribe(
                    sender: Self.busName, path: Self.objectPath, interface: Self.busName, member: "ActionInvoked",
                    signature: "us"
                ) { signal in
                    guard case .uint32(let id) = signal.arguments[0], let key = signal.arguments[1].stringValue
                    else { return }
                    sink.yield(.actionInvoked(id: id, key: key))
                })
            subscriptions.append(
                try await connection.subscribe(
                    sender: Self.busName, path: Self.objectPath, interface: Self.busName, member: "ActivationToken",
                    signature: "us"
                ) { signal in
                    guard case .uint32(let id) = signal.arguments[0], let token = signal.arguments[1].stringValue
                    else { return }
                    sink.yield(.activationToken(id: id, token: token))
                })
            subscriptions.append(
                try await connection.subscribe(
                    sender: Self.busName, path: Self.objectPath, interface: Self.busName,
                    member: "NotificationClosed", signature: "uu"
                ) { signal in
                    guard case .uint32(let id) = signal.arguments[0], case .uint32(let reason) = signal.arguments[1]
                    else { return }
                    sink.yield(.closed(id: id, reason: reason))
                })
            state.withLock { $0 = subscriptions }
        } catch {
            throw BusServiceError.wrap(error, service: Self.busName, message: "follow the notification server")
        }
    }

    /// The server's unique name now, or `nil` when none runs.
    package var serverOwner: String? { tracker.withLock { $0?.currentOwner } }

    /// Whether a banner can be shown: a server runs, or one is D-Bus activatable.
    ///
    /// - Parameters:
    ///   - timeout: How long the activatable-names call may take.
    package func isAvailable(timeout: Duration = .seconds(5)) async -> Bool {
        if serverOwner != nil { return true }
        return (try? await connection.activatableNames(timeout: timeout).contains(Self.busName)) ?? false
    }

    /// Shows a banner (`Notify`), starting an activatable server.
    ///
    /// - Returns: The server's id for it.
    /// - Throws: `BusServiceError` when the call fails or the reply is not a `u`.
    package func notify(_ banner: Banner, timeout: Duration = .seconds(10)) async throws(BusServiceError) -> UInt32 {
        var actions: [String] = []
        for (key, label) in banner.actions { actions += [key, label] }
        // A server that parses bodies as markup would garble or drop `&` and `<` in plain text.
        let body = await parsesMarkup() ? Self.escapedMarkup(banner.body) : banner.body
        let reply: [BusValue]
        do {
            reply = try await connection.call(
                destination: Self.busName, path: Self.objectPath, interface: Self.busName, member: "Notify",
                arguments: [
                    .string(banner.appName), .uint32(banner.replacesID), .string(banner.appIcon),
                    .string(banner.summary), .string(body), .stringArray(actions), .vardict(banner.hints),
                    .int32(banner.expireTimeout),
                ], timeout: timeout)
        } catch {
            throw BusServiceError.wrap(error, service: Self.busName, message: "Notify")
        }
        guard reply.count == 1, case .uint32(let id) = reply[0] else {
            throw BusServiceError(
                code: .invalidReply, service: Self.busName,
                message: "Notify returned \(BusValue.signature(of: reply)), not u")
        }
        return id
    }

    /// Announces an app's badge: `com.canonical.Unity.LauncherEntry.Update(application://<id>.desktop,
    /// {count, count-visible})`, from an object path of the app's own, as KDE Plasma, Ubuntu Dock
    /// and Dash to Dock expect.
    ///
    /// - Parameters:
    ///   - count: The badge; 0 hides it.
    ///   - appID: The app's desktop-file id.
    ///   - connection: The session bus connection to emit on.
    package static func announceBadge(_ count: Int, appID: String, on connection: BusConnection) throws {
        let path = "/org/applifecycle/LauncherEntry/" + appID.replacing(".", with: "_").replacing("-", with: "_")
        try connection.emitSignal(
            path: path, interface: "com.canonical.Unity.LauncherEntry", member: "Update",
            arguments: [
                .string("application://\(appID).desktop"),
                .vardict(["count": .int64(Int64(count)), "count-visible": .bool(count != 0)]),
            ])
    }

    /// Whether the current server parses bodies as markup, asked once per server (`GetCapabilities`).
    func parsesMarkup() async -> Bool {
        let owner = serverOwner
        if let owner, let known = markup.withLock({ $0 }), known.owner == owner { return known.parses }
        let reply = try? await connection.call(
            destination: Self.busName, path: Self.objectPath, interface: Self.busName, member: "GetCapabilities",
            timeout: .seconds(5))
        var parses = false
        if let first = reply?.first, case .array(_, let capabilities) = first {
            parses = capabilities.contains { $0.stringValue == "body-markup" }
        }
        if let owner = owner ?? serverOwner { markup.withLock { $0 = (owner, parses) } }
        return parses
    }

    /// Text with the five markup characters escaped, for a server with `body-markup`.
    package static func escapedMarkup(_ text: String) -> String {
        var result = ""
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }

    /// Withdraws a banner (`CloseNotification`); errors are logged, not thrown (it may be gone already).
    package func close(_ id: UInt32) {
        let reply = connection.send(
            destination: Self.busName, path: Self.objectPath, interface: Self.busName, member: "CloseNotification",
            arguments: [.uint32(id)])
        let logger = self.logger
        Task {
            do { _ = try await reply.value() } catch { logger.debug("CloseNotification(\(id)): \(error)") }
        }
    }

    /// Stops following the server; ``events`` finishes.
    package func stop() {
        let subscriptions = state.withLock { state in
            defer { state.removeAll() }
            return state
        }
        for subscription in subscriptions { subscription.cancel() }
        tracker.withLock { $0 = nil }
        sink.finish()
    }
}
