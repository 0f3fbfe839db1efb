import CSystemd
import Logging
import Synchronization

/// Follows which unique connection currently owns a well-known name.
///
/// sd-bus does not resolve well-known names when it matches signals, and anyone on the bus
/// may emit a signal that *claims* to come from `org.freedesktop.login1`'s path and interface.
/// The tracker asks the bus daemon for the owner (`GetNameOwner`) once its
/// `NameOwnerChanged` match is in place, then follows every change, accepting
/// `NameOwnerChanged` only from the bus daemon itself. Subscriptions use it to accept a
/// signal only from the current owner.
///
/// Get one with ``BusConnection/trackNameOwner(_:)``; there is one tracker per name per
/// connection. Owner-change handlers let a client resynchronise when a service restarts
/// (old owner → `nil` → new owner) or is replaced (old owner → new owner).
public final class NameOwnerTracker: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `owner`/readiness live in a Mutex; `handlers`,
    // `nextHandlerID` and `match` are read and written only on the loop thread.

    /// The tracked well-known name.
    public let name: String
    private let state = Mutex<State>(State())
    private var handlers: [(id: UInt64, handler: @Sendable (NameOwnerChange) -> Void)] = []
    private var nextHandlerID: UInt64 = 1
    var match: BusSubscription?
    private let connection: WeakConnection
    private let logger: Logger

    private struct State {
        var owner: String?
        var ready = false
        var failure: BusError?
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    init(name: String, connection: BusConnection) {
        self.name = name
        self.connection = WeakConnection(connection)
        self.logger = connection.logger
    }

    /// The unique name that owns ``name`` now, or `nil` if nobody does.
    public var currentOwner: String? { state.withLock { $0.owner } }

    /// Registers a handler for owner changes.
    ///
    /// Called on the loop thread, in bus order, before any signal from the new owner is
    /// delivered to subscriptions.
    ///
    /// - Parameters:
    ///   - handler: Called with each change (appear, vanish, or replacement).
    /// - Returns: The subscription; cancel it to remove the handler.
    public func addOwnerChangeHandler(_ handler: @escaping @Sendable (NameOwnerChange) -> Void) async throws
        -> BusSubscription
    {
        guard let connection = connection.connection else { throw BusError.notConnected }
        let id = try await connection.loop.run { [self] () -> UInt64 in
            let id = nextHandlerID
            nextHandlerID += 1
            handlers.append((id, handler))
            return id
        }
        return BusSubscription(
            connection: connection,
            onCancel: { [self] in
                handlers.removeAll { $0.id == id }
            })
    }

    // MARK: Loop-thread internals

    func waitUntilReady() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let result = state.withLock { state -> Result<Void, BusError>? in
                if let failure = state.failure { return .failure(failure) }
                if state.ready { return .success(()) }
                state.waiters.append(continuation)
                return nil
            }
            if let result { continuation.resume(with: result.mapError { $0 as any Error }) }
        }
    }

    /// The initial owner from `GetNameOwner`; the tracker becomes ready.
    func setInitialOwner(_ owner: String?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.owner = owner
            state.ready = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        logger.debug("owner of \(name) is \(owner ?? "(none)")")
        for waiter in waiters { waiter.resume() }
    }

    func fail(_ error: BusError) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.failure = error
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// Handles a `NameOwnerChanged` message already verified to come from the bus daemon.
    func ownerChanged(old: String?, new: String?) {
        let previous = state.withLock { state -> String? in
            let previous = state.owner
            state.owner = new
            return previous
        }
        let change = NameOwnerChange(name: name, oldOwner: old ?? previous, newOwner: new)
        logger.debug("owner change \(change)")
        for entry in handlers { entry.handler(change) }
    }
}

extension BusConnection {
    /// Returns the tracker of a well-known name's owner, creating it on first use.
    ///
    /// Returns once the initial owner is known, so ``NameOwnerTracker/currentOwner`` is valid.
    ///
    /// - Parameters:
    ///   - name: A well-known bus name, for example `org.freedesktop.login1`.
    /// - Throws: ``BusError`` if the match cannot be installed or `GetNameOwner` fails.
    public func trackNameOwner(_ name: String) async throws -> NameOwnerTracker {
        let tracker = try await loop.run { [self] () throws -> NameOwnerTracker in
            guard isOpen else { throw BusError.notConnected }
            if let tracker = onLoop.value.trackers[name] { return tracker }
            let tracker = NameOwnerTracker(name: name, connection: self)
            onLoop.value.trackers[name] = tracker
            startTrackingOnLoop(tracker)
            return tracker
        }
        try await tracker.waitUntilReady()
        return tracker
    }

    private func startTrackingOnLoop(_ tracker: NameOwnerTracker) {
        let name = tracker.name
        let rule = MatchRule.build(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged", arg0: name
        )
        let logger = self.logger
        addRawMatchOnLoop(
            rule,
            handler: { [weak tracker] message in
                guard let tracker else { return }
                // Only the bus daemon can send as org.freedesktop.DBus; anything else is a spoof.
                let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
                guard sender == "org.freedesktop.DBus" else {
                    logger.debug("dropped NameOwnerChanged from \(sender ?? "?"): not the bus daemon")
                    return
                }
                guard let signal = BusConnection.decodeSignal(message, logger: logger), signal.signature == "sss",
                    signal.arguments[0].stringValue == name
                else { return }
                let old = signal.arguments[1].stringValue.flatMap { $0.isEmpty ? nil : $0 }
                let new = signal.arguments[2].stringValue.flatMap { $0.isEmpty ? nil : $0 }
                tracker.ownerChanged(old: old, new: new)
            },
            installed: { [self] result in
                switch result {
                case .failure(let error):
                    onLoop.value.trackers[name] = nil
                    tracker.fail(error)
                case .success(let subscription):
                    tracker.match = subscription
                    startCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                        interface: "org.freedesktop.DBus", member: "GetNameOwner", arguments: [.string(name)]
                    ) { [self] reply in
                        switch reply {
                        case .success(let values):
                            tracker.setInitialOwner(values.first?.stringValue)
                        case .failure(let error) where error.name == BusError.Name.nameHasNoOwner:
                            tracker.setInitialOwner(nil)
                        case .failure(let error):
                            onLoop.value.trackers[name] = nil
                            subscription.cancel()
                            tracker.fail(error)
                        }
                    }
                }
            })
    }
}
