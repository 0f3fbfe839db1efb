import CSystemd
import Glibc
import Logging
import Synchronization

/// A connection to a D-Bus bus through sd-bus, driven by an ``EventLoop``.
///
/// Open it on the system bus, the user's session bus, or any address; it attaches to the
/// loop (`sd_bus_attach_event`) and all its I/O happens there. The sd-bus object is confined
/// to the loop thread: every public method may be called from any thread or task and hops to
/// the loop; every handler you pass is called on the loop thread.
///
/// Signals are received through ``subscribe(sender:path:interface:member:signature:arg0:handler:)``,
/// which verifies that the sender is the *current* owner of a well-known name; raw
/// ``addMatch(_:handler:)`` does not verify anything.
///
/// When the bus goes away (the daemon stops or restarts), the connection closes itself,
/// pending calls fail with ``BusError/Name/noReply`` or ``BusError/Name/disconnected``, and the
/// handlers registered with ``addDisconnectHandler(_:)`` run; open a new connection to
/// reconnect. Call ``close()`` when done (it is also done on ``EventLoop/shutdown()``).
public final class BusConnection: Sendable {
    // Sendable without a proof of its own: the sd-bus object and everything else only the loop
    // thread may touch is in `onLoop` (a LoopBoundBox); the rest is immutable or synchronized.

    /// Where to connect.
    public enum Address: Sendable, Equatable, CustomStringConvertible {
        /// The system bus; honours `DBUS_SYSTEM_BUS_ADDRESS` (`sd_bus_open_system`).
        case system
        /// The user's session bus; honours `DBUS_SESSION_BUS_ADDRESS` (`sd_bus_open_user`).
        case session
        /// A bus daemon at an explicit address, for example `unix:path=/tmp/x/bus`.
        case address(String)

        /// `system`, `session` or the address.
        public var description: String {
            switch self {
            case .system: "system"
            case .session: "session"
            case .address(let address): address
            }
        }
    }

    /// The loop the connection runs on.
    public let loop: EventLoop
    /// Where the connection was opened.
    public let address: Address
    /// The connection's unique name on the bus, for example `:1.42`.
    public let uniqueName: String
    let logger: Logger

    /// The sd-bus object; `nil` once closed. Loop thread only (asserted: it lives in ``onLoop``).
    var bus: OpaquePointer? {
        get { onLoop.value.bus }
        set { onLoop.value.bus = newValue }
    }
    private let open = Atomic<Bool>(true)
    /// Credentials of unique names already asked about. A unique name is never reused while the
    /// bus runs, and a connection's uid and pid cannot change, so an answer stays true; bounded.
    private let credentialsCache = CredentialsCache()
    /// State only the loop thread touches (checked on every access).
    let onLoop: LoopBoundBox<LoopState>
    /// Awaited before each credentials look-up (tests hold a peer's look-up back with it).
    private let credentialsLookUpGate = Mutex<(@Sendable (String) async -> Void)?>(nil)

    /// What the connection keeps for the loop thread alone.
    struct LoopState {
        /// The sd-bus object; `nil` once closed.
        var bus: OpaquePointer?
        /// The message filter (disconnects, held-back `Properties` calls).
        var filter: FilterBox?
        /// The loop shutdown hook that closes the connection.
        var hookID: UInt64 = 0
        /// One name-owner tracker per followed name.
        var trackers: [String: NameOwnerTracker] = [:]
        /// Run once when the peer closes the connection.
        var disconnectHandlers: [@Sendable () -> Void] = []
        /// `Properties` calls dispatched again after their sender's look-up (sender and cookie).
        var redispatched: Set<String> = []
        /// The exported objects, kept alive while they are on the bus.
        var exported: [ObjectIdentifier: ExportedObject] = [:]
    }

    /// Opens a connection and attaches it to a loop without blocking a thread while the bus answers.
    ///
    /// Waiting for `Hello` synchronously would block the caller, and the loop thread every other
    /// connection shares, up to sd-bus's 25 s if the bus daemon accepts but does not answer (it is
    /// starting, stopped, or overloaded); there is no such initializer. This one starts the
    /// connection (socket and authentication run on the loop), then suspends until a first call
    /// to the bus daemon (`GetId`, queued behind `Hello`) is answered, so the unique name is known.
    /// If the loop shuts down meanwhile, the bus is closed and the open fails at once.
    ///
    /// - Parameters:
    ///   - address: The bus to connect to.
    ///   - loop: The loop that will run the connection.
    ///   - description: A name for the connection in sd-bus debug output and logs.
    ///   - timeout: How long the bus may take to accept the connection.
    /// - Throws: ``BusError`` if the bus cannot be reached, authentication fails, or the bus
    ///   does not answer within `timeout` (``BusError/Name/noReply``); `CancellationError`.
    public init(_ address: Address, loop: EventLoop, description: String? = nil, timeout: Duration) async throws {
        self.loop = loop
        self.address = address
        self.onLoop = .makeBoxSendingValue(LoopState(), eventLoop: loop)
        var logger = Logger(label: "SystemdBus")
        logger[metadataKey: "bus"] = "\(address)"
        let connecting: ConnectingBus
        do {
            connecting = try await loop.run {
                ConnectingBus(
                    try BusConnection.startOnLoop(address, event: loop.event, description: description), loop: loop)
            }
        } catch let error as BusError where error != .loopShutDown {
            throw BusError.connectionFailed(to: address, underlying: error)
        }
        let uniqueName: String
        do {
            // sd-bus's own call timeout does not run while the connection authenticates (its auth
            // timeout does, at 25 s or more), so the deadline is a racing sleep.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try await BusConnection.call(
                        loop: loop, bus: { connecting.pointer }, destination: "org.freedesktop.DBus",
                        path: "/org/freedesktop/DBus",
                        interface: "org.freedesktop.DBus", member: "GetId", arguments: [], timeout: nil)
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    throw BusError(
                        name: BusError.Name.noReply,
                        message: "the \(address) bus did not accept the connection within \(timeout)", errno: ETIMEDOUT)
                }
                defer { group.cancelAll() }
                try await group.next()
            }
            // Hello was answered before GetId, so this no longer blocks.
            uniqueName = try await loop.run { () throws -> String in
                guard let bus = connecting.pointer, sd_bus_is_open(bus) > 0 else { throw BusError.notConnected }
                return try BusConnection.uniqueNameOnLoop(bus)
            }
        } catch {
            // A refused perform means the loop shut down, and its hook closed the bus already.
            _ = loop.perform { connecting.close() }
            if let error = error as? BusError, error != .loopShutDown {
                throw BusError.connectionFailed(to: address, underlying: error)
            }
            throw error
        }
        self.uniqueName = uniqueName
        logger[metadataKey: "unique-name"] = "\(uniqueName)"
        self.logger = logger
        // One loop turn takes the bus over and installs the filter with the connection's own
        // shutdown hook, so no shutdown or disconnect falls between the two.
        try await loop.run { [self] in
            bus = connecting.handOver()
            do {
                // A disconnect before the filter existed would go unseen: check, then install.
                guard let bus, sd_bus_is_open(bus) > 0 else { throw BusError.notConnected }
                try installFilterOnLoop()
            } catch {
                if let bus { sd_bus_flush_close_unref(bus) }
                bus = nil
                open.store(false, ordering: .releasing)
                throw error
            }
        }
        self.logger.debug("connected")
    }

    deinit {
        // Normally closed explicitly or by a disconnect; as a safety net, close on the loop. The
        // closure keeps the box, not `self`; filter and hook only hold weak references, so nothing
        // calls back into `self`.
        let onLoop = self.onLoop
        loop.perform {
            if let bus = onLoop.value.bus {
                onLoop.value.bus = nil
                sd_bus_flush_close_unref(bus)
            }
        }
    }

    /// Whether the connection is still open.
    public var isOpen: Bool { open.load(ordering: .acquiring) }

    /// Closes the connection: flushes queued messages, frees every slot (pending calls fail,
    /// subscriptions and exported objects end) and releases the bus.
    ///
    /// Returns at once; the close runs on the loop thread after everything handed to the loop
    /// before it (signals emitted, properties announced), so nothing sent before `close()` is lost.
    /// ``isOpen`` turns `false` when it has run. Disconnect handlers do not run for an explicit
    /// close. Safe to call more than once, from any thread, also after the loop shut down (whose
    /// shutdown closed the connection already).
    public func close() {
        loop.perform { [self] in closeOnLoop(disconnected: false) }
    }

    /// Registers a handler that runs once, on the loop thread, when the bus disconnects.
    ///
    /// It fires when the peer closes the connection (for example the bus daemon stops), not
    /// on ``close()``. If the connection is already closed, the handler runs soon on the loop.
    ///
    /// - Parameters:
    ///   - handler: Called on the loop thread after the connection has been closed.
    public func addDisconnectHandler(_ handler: @escaping @Sendable () -> Void) {
        loop.perform { [self] in
            if isOpen { onLoop.value.disconnectHandlers.append(handler) } else { handler() }
        }
    }

    // MARK: - Method calls

    /// Calls a method and returns the reply's values.
    ///
    /// The call is asynchronous (`sd_bus_call_async`); the task suspends until the reply,
    /// an error reply, the timeout, or cancellation (the pending call is then dropped).
    ///
    /// - Parameters:
    ///   - destination: The bus name to call (well-known or unique); `nil` for a peer connection.
    ///   - path: The object path.
    ///   - interface: The interface, or `nil` to let the peer pick.
    ///   - member: The method name.
    ///   - arguments: The arguments, in order; their signatures make the call's signature.
    ///   - timeout: How long to wait for the reply; `nil` uses sd-bus's default (25 s).
    /// - Returns: The reply's values (empty for a method without output).
    /// - Throws: ``BusError`` with the peer's error name and message on an error reply,
    ///   ``BusError/Name/noReply`` on timeout, `CancellationError` when the task is cancelled.
    public func call(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [BusValue] = [], timeout: Duration? = nil
    ) async throws -> [BusValue] {
        try await BusConnection.call(
            loop: loop, bus: { [self] in isOpen ? bus : nil }, destination: destination, path: path,
            interface: interface, member: member, arguments: arguments, timeout: timeout)
    }

    /// Sends a method call without waiting for its reply, and returns the reply to await later.
    ///
    /// The call is handed to the loop before this returns, in order with every other hand-over
    /// from the calling thread, so calls sent one after another from one thread leave in that order
    /// and a peer that answers in order answers them in that order: a caller can pipeline many
    /// calls instead of waiting a round trip for each. Never waits for the loop thread.
    ///
    /// - Parameters:
    ///   - destination: The bus name to call (well-known or unique); `nil` for a peer connection.
    ///   - path: The object path.
    ///   - interface: The interface, or `nil` to let the peer pick.
    ///   - member: The method name.
    ///   - arguments: The arguments, in order.
    ///   - timeout: How long the reply may take; `nil` uses sd-bus's default (25 s).
    /// - Returns: The pending reply; it fails with `Disconnected` when the loop has stopped.
    @discardableResult
    public func send(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [BusValue] = [], timeout: Duration? = nil
    ) -> BusPendingReply {
        let reply = BusPendingReply()
        let accepted = loop.perform { [self] in
            startCall(
                destination: destination, path: path, interface: interface, member: member,
                arguments: arguments, timeout: timeout
            ) { reply.complete($0) }
        }
        if !accepted { reply.complete(.failure(BusError.loopShutDown)) }
        return reply
    }

    /// The body of ``call(destination:path:interface:member:arguments:timeout:)`` for the bus
    /// that `bus` returns on the loop thread (`nil`: not connected).
    private static func call(
        loop: EventLoop, bus: @escaping @Sendable () -> OpaquePointer?, destination: String?, path: String,
        interface: String?, member: String, arguments: [BusValue], timeout: Duration?
    ) async throws -> [BusValue] {
        let state = CallState()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[BusValue], any Error>) in
                guard state.install(continuation) else { return }
                let accepted = loop.perform {
                    let box = startCall(
                        on: bus(), destination: destination, path: path, interface: interface, member: member,
                        arguments: arguments, timeout: timeout
                    ) { result in state.finish(result.mapError { $0 as any Error }) }
                    if state.isCancelled { box?.destroySlot() } else { state.box = box }
                }
                if !accepted { state.finish(.failure(BusError.loopShutDown)) }
            }
        } onCancel: {
            state.finish(.failure(CancellationError()))
            loop.perform { state.box?.destroySlot() }
        }
    }

    /// Starts an asynchronous call; `completion` runs exactly once on the loop thread. Loop thread only.
    @discardableResult
    func startCall(
        destination: String?, path: String, interface: String?, member: String,
        arguments: [BusValue], timeout: Duration? = nil,
        completion: @escaping (Result<[BusValue], BusError>) -> Void
    ) -> PendingCallBox? {
        loop.assertInEventLoop()
        return BusConnection.startCall(
            on: isOpen ? bus : nil, destination: destination, path: path, interface: interface,
            member: member, arguments: arguments, timeout: timeout, completion: completion)
    }

    /// Starts an asynchronous call on a bus (`nil`: not connected, which `completion` is told).
    /// Loop thread only.
    private static func startCall(
        on bus: OpaquePointer?, destination: String?, path: String, interface: String?, member: String,
        arguments: [BusValue], timeout: Duration?, completion: @escaping (Result<[BusValue], BusError>) -> Void
    ) -> PendingCallBox? {
        guard let bus else {
            completion(.failure(.notConnected))
            return nil
        }
        var message: OpaquePointer?
        let r = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard r >= 0, let message else {
            completion(.failure(BusError(errno: r, context: "new method call \(interface ?? "").\(member)")))
            return nil
        }
        defer { sd_bus_message_unref(message) }
        do {
            try BusMessageCodec.append(arguments, to: message)
        } catch {
            completion(.failure(error))
            return nil
        }
        let box = PendingCallBox(completion: completion)
        let userdata = box.retainedUserdata()
        var slot: OpaquePointer?
        let usec =
            timeout.map {
                UInt64(max(1, $0.components.seconds * 1_000_000 + $0.components.attoseconds / 1_000_000_000_000))
            } ?? 0
        let sent = sd_bus_call_async(
            bus, &slot, message,
            { reply, userdata, _ in
                let box: PendingCallBox = SlotBox.from(userdata)
                box.complete(BusConnection.decodeReply(reply!))
                return 1
            }, userdata, usec)
        guard sent >= 0, let slot else {
            SlotBox.releaseUserdata(userdata)
            completion(
                .failure(
                    BusError(errno: sent, context: "call \(interface ?? "").\(member) on \(destination ?? "peer")")))
            return nil
        }
        box.adopt(slot)
        return box
    }

    /// Turns a reply message into values or the error it carries.
    static func decodeReply(_ reply: OpaquePointer) -> Result<[BusValue], BusError> {
        if sd_bus_message_is_method_error(reply, nil) > 0 {
            if let error = sd_bus_message_get_error(reply) {
                return .failure(BusError(error, fallbackErrno: sd_bus_message_get_errno(reply)))
            }
            return .failure(BusError(name: BusError.Name.failed, message: "error reply", errno: 0))
        }
        do {
            return .success(try BusMessageCodec.readAll(from: reply))
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Signals

    /// Emits a signal from this connection.
    ///
    /// Never waits for the loop thread: the signal is handed to the loop and sent there, in the
    /// order of every other hand-over from the calling thread (signals, property changes, calls,
    /// ``close()``). A failure there (an argument sd-bus refuses, the connection closed meanwhile)
    /// is logged.
    ///
    /// - Parameters:
    ///   - path: The object path the signal comes from.
    ///   - interface: The interface of the signal.
    ///   - member: The signal name.
    ///   - arguments: The signal's arguments.
    ///   - destination: A unique or well-known name for a unicast signal, or `nil` to broadcast.
    /// - Throws: `BusError/notConnected` when the connection is already closed,
    ///   `BusError/loopShutDown` when its loop has stopped.
    public func emitSignal(
        path: String, interface: String, member: String, arguments: [BusValue] = [], destination: String? = nil
    ) throws {
        guard isOpen else { throw BusError.notConnected }
        let accepted = loop.perform { [self] in
            do {
                try emitSignalOnLoop(
                    path: path, interface: interface, member: member, arguments: arguments, destination: destination)
            } catch {
                logger.info("could not emit \(interface).\(member): \(error)")
            }
        }
        guard accepted else { throw BusError.loopShutDown }
    }

    /// Builds and queues a signal. Loop thread only.
    func emitSignalOnLoop(
        path: String, interface: String, member: String, arguments: [BusValue], destination: String?
    ) throws {
        loop.assertInEventLoop()
        guard let bus, isOpen else { throw BusError.notConnected }
        var message: OpaquePointer?
        try BusError.check(
            sd_bus_message_new_signal(bus, &message, path, interface, member), "new signal \(interface).\(member)")
        defer { sd_bus_message_unref(message) }
        if let destination {
            try BusError.check(sd_bus_message_set_destination(message, destination), "set destination")
        }
        try BusMessageCodec.append(arguments, to: message!)
        try BusError.check(sd_bus_send(bus, message, nil), "send signal \(interface).\(member)")
    }

    /// Adds a raw match rule; every matching message is decoded and handed to `handler`.
    ///
    /// No sender verification happens here: prefer
    /// ``subscribe(sender:path:interface:member:signature:arg0:handler:)``. Returns once the
    /// bus daemon has installed the rule, so no matching message sent afterwards is missed.
    ///
    /// - Parameters:
    ///   - rule: A D-Bus match rule, for example `type='signal',interface='org.example.X'`.
    ///   - handler: Called on the loop thread for each matching message.
    /// - Returns: The subscription; cancel it to remove the rule.
    /// - Throws: ``BusError`` if the rule is invalid or the daemon refuses it.
    public func addMatch(_ rule: String, handler: @escaping @Sendable (BusSignal) -> Void) async throws
        -> BusSubscription
    {
        try await addRawMatch(rule) { [logger] message in
            if let signal = BusConnection.decodeSignal(message, logger: logger) { handler(signal) }
        }
    }

    /// Installs a match whose handler gets the raw message on the loop thread.
    func addRawMatch(_ rule: String, handler: @escaping @Sendable (OpaquePointer) -> Void) async throws
        -> BusSubscription
    {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<BusSubscription, any Error>) in
            let accepted = loop.perform { [self] in
                addRawMatchOnLoop(rule, handler: handler) { continuation.resume(with: $0.mapError { $0 as any Error }) }
            }
            if !accepted { continuation.resume(throwing: BusError.loopShutDown) }
        }
    }

    /// Installs a match; `installed` runs once on the loop thread. Loop thread only.
    func addRawMatchOnLoop(
        _ rule: String, handler: @escaping @Sendable (OpaquePointer) -> Void,
        installed: @escaping (Result<BusSubscription, BusError>) -> Void
    ) {
        loop.assertInEventLoop()
        guard let bus, isOpen else {
            installed(.failure(.notConnected))
            return
        }
        let box = MatchBox(handler: handler)
        let subscription = BusSubscription(connection: self, box: box)
        box.installed = { result in installed(result.map { subscription }) }
        let userdata = box.retainedUserdata()
        var slot: OpaquePointer?
        let r = sd_bus_add_match_async(
            bus, &slot, rule,
            { message, userdata, _ in
                let box: MatchBox = SlotBox.from(userdata)
                box.handler(message!)
                return 0
            },
            { reply, userdata, _ in
                let box: MatchBox = SlotBox.from(userdata)
                if case .failure(let error) = BusConnection.decodeReply(reply!) {
                    box.finishInstall(.failure(error))
                    box.destroySlot()
                } else {
                    box.finishInstall(.success(()))
                }
                return 0
            }, userdata)
        guard r >= 0, let slot else {
            SlotBox.releaseUserdata(userdata)
            installed(.failure(BusError(errno: r, context: "add match \(rule)")))
            return
        }
        box.adopt(slot)
    }

    /// Decodes a signal message into a ``BusSignal``; `nil` (logged) if it cannot be read.
    static func decodeSignal(_ message: OpaquePointer, logger: Logger) -> BusSignal? {
        func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) } }
        do {
            let arguments = try BusMessageCodec.readAll(from: message)
            var signal = BusSignal(
                sender: string(sd_bus_message_get_sender(message)) ?? "",
                path: string(sd_bus_message_get_path(message)) ?? "",
                interface: string(sd_bus_message_get_interface(message)) ?? "",
                member: string(sd_bus_message_get_member(message)) ?? "",
                arguments: arguments,
                destination: string(sd_bus_message_get_destination(message))
            )
            signal.signature = BusMessageCodec.signature(of: message)
            return signal
        } catch {
            logger.info("dropped an undecodable message: \(error)")
            return nil
        }
    }

    // MARK: - Names and credentials

    /// The reply of ``requestName(_:flags:)``.
    public enum RequestNameReply: UInt32, Sendable {
        /// The connection now owns the name.
        case primaryOwner = 1
        /// Someone else owns it; the connection is queued.
        case inQueue = 2
        /// Someone else owns it and queueing was refused.
        case exists = 3
        /// The connection already owned the name.
        case alreadyOwner = 4
    }

    /// Flags for ``requestName(_:flags:)`` (`DBUS_NAME_FLAG_*`).
    public struct RequestNameFlags: OptionSet, Sendable {
        /// The raw flag bits.
        public let rawValue: UInt32
        /// Creates flags from raw bits.
        ///
        /// - Parameters:
        ///   - rawValue: The `DBUS_NAME_FLAG_*` bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Let another connection take the name over with `replaceExisting`.
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        /// Take the name over if the owner allowed replacement.
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        /// Fail instead of queueing when the name is taken.
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    /// Requests a well-known name (`org.freedesktop.DBus.RequestName`).
    ///
    /// - Parameters:
    ///   - name: The well-known name, for example `org.example.App`.
    ///   - flags: How to behave if the name is taken; defaults to `doNotQueue`.
    /// - Returns: What the daemon did.
    /// - Throws: ``BusError`` (for example `AccessDenied` when the bus policy forbids owning it).
    @discardableResult
    public func requestName(_ name: String, flags: RequestNameFlags = [.doNotQueue]) async throws -> RequestNameReply {
        let reply = try await callDaemon("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard let code = reply.first?.uint32Value, let result = RequestNameReply(rawValue: code) else {
            throw BusError(name: BusError.Name.failed, message: "unexpected RequestName reply \(reply)", errno: EBADMSG)
        }
        return result
    }

    /// Releases a well-known name (`org.freedesktop.DBus.ReleaseName`).
    ///
    /// - Parameters:
    ///   - name: The well-known name.
    /// - Returns: `true` if the name was released, `false` if this connection did not own it.
    /// - Throws: ``BusError`` on failure.
    @discardableResult
    public func releaseName(_ name: String) async throws -> Bool {
        let reply = try await callDaemon("ReleaseName", [.string(name)])
        return reply.first?.uint32Value == 1
    }

    /// Returns the unique name that currently owns a name (`GetNameOwner`), or `nil`.
    ///
    /// - Parameters:
    ///   - name: A well-known name.
    ///   - timeout: How long the bus daemon may take to answer; `nil` uses sd-bus's default (25 s).
    /// - Throws: ``BusError`` on failure other than "no owner".
    public func nameOwner(_ name: String, timeout: Duration? = nil) async throws -> String? {
        do {
            return try await callDaemon("GetNameOwner", [.string(name)], timeout: timeout).first?.stringValue
        } catch let error as BusError where error.name == BusError.Name.nameHasNoOwner {
            return nil
        }
    }

    /// Returns the credentials of a peer (`GetConnectionCredentials`).
    ///
    /// Use the unique name of a message's sender (``BusSignal/sender``,
    /// ``BusMethodCall/sender``) to check who is calling.
    ///
    /// - Parameters:
    ///   - sender: A unique (or well-known) bus name.
    /// - Returns: The uid, pid and groups the daemon reports.
    /// - Throws: ``BusError``, for example `NameHasNoOwner` if the peer is gone.
    public func credentials(of sender: String) async throws -> BusCredentials {
        let unique = sender.hasPrefix(":")
        if unique, let cached = credentialsCache[sender] { return cached }
        if let gate = credentialsLookUpGate.withLock({ $0 }) { await gate(sender) }
        let reply = try await callDaemon("GetConnectionCredentials", [.string(sender)])
        let credentials = BusConnection.credentials(sender, from: reply)
        if unique { credentialsCache[sender] = credentials }
        return credentials
    }

    /// The credentials of a peer if they are known already (asked before and cached), else `nil`.
    ///
    /// For the few sd-bus callbacks that must answer synchronously (property getters and setters):
    /// they never ask the bus daemon themselves. The connection's filter holds back a `Properties`
    /// call whose sender is not known yet, looks the sender up asynchronously, and dispatches the call
    /// again once the answer is in (``screenPropertiesCall(_:)``).
    ///
    /// - Parameters:
    ///   - sender: The unique name of the caller.
    func cachedCredentials(of sender: String) -> BusCredentials? {
        credentialsCache[sender]
    }

    /// Screens a `Properties` call to an object with an access check: held back until its sender's
    /// credentials are known, then dispatched again (`sd_bus_enqueue_for_read`), and refused at
    /// once with the check's error when the check refuses the sender. Loop thread only.
    ///
    /// Refused here, before sd-bus looks at it, so that every `Properties` method is refused alike:
    /// a `Set` of a read-only property would otherwise answer `PropertyReadOnly`, and a `GetAll` of an
    /// interface without properties an empty dictionary, to a caller the object does not serve.
    ///
    /// The loop never waits for the bus daemon: the look-up is an asynchronous call, and other
    /// messages are dispatched meanwhile. A look-up that fails still re-dispatches the call once;
    /// the check then finds no credentials and refuses.
    ///
    /// - Returns: `true` when the call was taken (held, or answered with the refusal).
    func screenPropertiesCall(_ message: OpaquePointer) -> Bool {
        loop.preconditionInEventLoop()
        guard sd_bus_message_is_method_call(message, "org.freedesktop.DBus.Properties", nil) > 0,
            let sender = sd_bus_message_get_sender(message).map({ String(cString: $0) }), sender.hasPrefix(":"),
            let path = sd_bus_message_get_path(message).map({ String(cString: $0) })
        else { return false }
        let checks = onLoop.value.exported.values.filter { $0.path == path }.compactMap(\.interface.propertyAccessCheck)
        guard !checks.isEmpty else { return false }
        var cookie: UInt64 = 0
        _ = sd_bus_message_get_cookie(message, &cookie)
        let key = "\(sender) \(cookie)"
        // Known, or the look-up has been tried (the second time round): refuse now or let it through.
        if credentialsCache[sender] != nil || onLoop.value.redispatched.remove(key) != nil {
            let credentials = credentialsCache[sender]
            for check in checks {
                do throws(BusError) {
                    try check(credentials)
                } catch {
                    logger.info("refused a Properties call on \(path) to \(sender): \(error.message)")
                    var reply = sd_bus_error()
                    _ = sd_bus_error_set(&reply, error.name, error.message)
                    let r = sd_bus_reply_method_error(message, &reply)
                    sd_bus_error_free(&reply)
                    if r < 0 { logger.debug("could not send the refusal: \(BusError(errno: r))") }
                    return true
                }
            }
            return false
        }
        sd_bus_message_ref(message)
        let held = SendablePointer(message)
        Task { [self] in
            _ = try? await credentials(of: sender)
            let accepted = loop.perform { [self] in
                defer { sd_bus_message_unref(held.pointer) }
                guard let bus, isOpen else { return }
                onLoop.value.redispatched.insert(key)
                let r = sd_bus_enqueue_for_read(bus, held.pointer)
                if r < 0 {
                    onLoop.value.redispatched.remove(key)
                    logger.info("could not dispatch a held Properties call again: \(BusError(errno: r))")
                }
            }
            // A stopped loop has freed the bus; the message goes with it.
            if !accepted { logger.debug("loop shut down while a Properties call waited for its sender's credentials") }
        }
        return true
    }

    /// Makes every credentials look-up of this connection await `gate` with the peer's name first.
    ///
    /// For tests that show what happens while a look-up is slow; `nil` removes the gate.
    ///
    /// - Parameters:
    ///   - gate: Awaited before a look-up is sent; return to let it go.
    package func setCredentialsLookUpGate(_ gate: (@Sendable (String) async -> Void)?) {
        credentialsLookUpGate.withLock { $0 = gate }
    }

    static func credentials(_ sender: String, from reply: [BusValue]) -> BusCredentials {
        let dict = reply.first?.dictionaryValue ?? [:]
        let groups = dict["UnixGroupIDs"]?.arrayValue?.compactMap(\.uint32Value)
        return BusCredentials(
            uniqueName: sender, uid: dict["UnixUserID"]?.uint32Value, pid: dict["ProcessID"]?.uint32Value,
            groupIDs: groups
        )
    }

    func callDaemon(_ member: String, _ arguments: [BusValue], timeout: Duration? = nil) async throws -> [BusValue] {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: member, arguments: arguments, timeout: timeout)
    }

    // MARK: - Loop-thread internals

    /// Starts a bus and attaches it to the loop; authentication and `Hello` go on in the
    /// loop's iterations. Loop thread only.
    private static func startOnLoop(_ address: Address, event: OpaquePointer, description: String?) throws
        -> OpaquePointer
    {
        var bus: OpaquePointer?
        switch address {
        case .system:
            try BusError.check(sd_bus_open_system(&bus), "sd_bus_open_system")
        case .session:
            try BusError.check(sd_bus_open_user(&bus), "sd_bus_open_user")
        case .address(let text):
            try BusError.check(sd_bus_new(&bus), "sd_bus_new")
            do {
                try BusError.check(sd_bus_set_address(bus, text), "sd_bus_set_address \(text)")
                try BusError.check(sd_bus_set_bus_client(bus, 1), "sd_bus_set_bus_client")
                try BusError.check(sd_bus_start(bus), "sd_bus_start \(text)")
            } catch {
                sd_bus_unref(bus)
                throw error
            }
        }
        guard let bus else { throw BusError(errno: ENOMEM, context: "sd_bus_open") }
        do {
            if let description { _ = sd_bus_set_description(bus, description) }
            try BusError.check(sd_bus_attach_event(bus, event, 0), "sd_bus_attach_event")
            return bus
        } catch {
            sd_bus_flush_close_unref(bus)
            throw error
        }
    }

    /// The unique name; blocks until `Hello` is answered if it has not been. Loop thread only.
    private static func uniqueNameOnLoop(_ bus: OpaquePointer) throws -> String {
        var name: UnsafePointer<CChar>?
        try BusError.check(sd_bus_get_unique_name(bus, &name), "sd_bus_get_unique_name")
        return name.map { String(cString: $0) } ?? ""
    }

    private func installFilterOnLoop() throws {
        loop.assertInEventLoop()
        guard let bus else { throw BusError.notConnected }
        let box = FilterBox(connection: self)
        let userdata = box.retainedUserdata()
        var slot: OpaquePointer?
        let r = sd_bus_add_filter(
            bus, &slot,
            { message, userdata, _ in
                let box: FilterBox = SlotBox.from(userdata)
                guard let connection = box.connection, let message else { return 0 }
                if sd_bus_message_is_signal(message, "org.freedesktop.DBus.Local", "Disconnected") > 0 {
                    // Do not free the bus inside its own callback: finish on the next iteration.
                    connection.loop.perform { connection.closeOnLoop(disconnected: true) }
                    return 0
                }
                return connection.screenPropertiesCall(message) ? 1 : 0
            }, userdata)
        guard r >= 0, let slot else {
            SlotBox.releaseUserdata(userdata)
            throw BusError(errno: r, context: "sd_bus_add_filter")
        }
        box.adopt(slot)
        onLoop.value.filter = box
        let weakSelf = WeakConnection(self)
        onLoop.value.hookID = loop.addShutdownHook { weakSelf.connection?.closeOnLoop(disconnected: false) }
    }

    func closeOnLoop(disconnected: Bool) {
        loop.assertInEventLoop()
        guard let bus else { return }
        open.store(false, ordering: .releasing)
        if disconnected { logger.info("bus disconnected") } else { logger.debug("closing") }
        self.bus = nil
        loop.removeShutdownHook(onLoop.value.hookID)
        onLoop.value.filter = nil
        onLoop.value.trackers.removeAll()
        onLoop.value.exported.removeAll()
        // Frees every floating slot: pending calls fail, matches and objects are removed.
        sd_bus_flush_close_unref(bus)
        let handlers = onLoop.value.disconnectHandlers
        onLoop.value.disconnectHandlers.removeAll()
        if disconnected { for handler in handlers { handler() } }
    }
}
