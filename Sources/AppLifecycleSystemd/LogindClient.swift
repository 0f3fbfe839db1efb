import AppLifecycle
import Logging
import Synchronization
import SystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// Follows systemd-logind on the system bus and turns what it says into host facts.
///
/// What it reports, through the `sink` given at creation (called on the bus loop thread):
/// - Manager `PrepareForSleep(b)` → `AppLifecycle/HostEvent/sleeping(_:)`.
/// - Manager `PrepareForShutdown(b)` and `PrepareForShutdownWithMetadata(b, a{sv})` (systemd 255+)
///   → one `AppLifecycle/HostEvent/terminate(_:)` with `AppLifecycle/TerminationReason/shutdown`
///   per shutdown, whichever of the two signals arrives first; a `false` (shutdown cancelled) re-arms it.
/// - The app's session: the `Lock`/`Unlock` signals and the `LockedHint` property →
///   `AppLifecycle/HostEvent/locked(_:)`; the `Active` property → `AppLifecycle/HostEvent/sessionActive(_:)`.
///   Both are facts: an event is sent only when the fact changes (a `Lock` followed by `LockedHint=true`
///   gives one event). When a session is adopted its `LockedHint` and `Active` are read and reported
///   (locked first, then active), at start only what differs from "unknown", later only what changed.
///
/// Which session is the app's: `$XDG_SESSION_ID` (`GetSession(id)`); else the `Id` of logind's
/// `/org/freedesktop/login1/session/auto` object, then `GetSession(Id)` (signals are emitted on the
/// session's real path, never on `session/auto`); else the uid's session from `ListSessions`, the active
/// one first. A session is adopted only once its properties could be read. If none exists, the client
/// follows `SessionNew` and adopts the first new session with the wanted id (or, without
/// `$XDG_SESSION_ID`, of the wanted uid). Signals for any other session path are ignored.
///
/// Every signal is accepted only from the current unique owner of `org.freedesktop.login1` and with
/// the documented signature; anything else (a spoofed sender, a wrong signature, an unknown session) is
/// logged and dropped. When logind restarts (its name vanishes and reappears, or changes owner) the
/// client closes its now useless inhibitor fds, then on the new owner re-takes every delay lock it was
/// holding, re-reads `InhibitDelayMaxUSec`, re-resolves the session, reports the facts that changed and
/// calls `onResync`. When the bus itself goes away, the client closes its fds and stops; open a new
/// connection and a new client to come back.
///
/// Delay inhibitor locks (`Inhibit(what, who, why, "delay")`) are fds: ``takeDelayLock(what:who:why:)``
/// keeps the fd, ``releaseDelayLock(what:)`` closes it, which is the release.
public final class LogindClient: Sendable {
    /// The kind of delay lock the app can hold.
    public enum DelayLock: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Delays suspend and hibernation until the fd is closed (or `InhibitDelayMaxUSec` passed).
        case sleep
        /// Delays power-off and reboot until the fd is closed (or `InhibitDelayMaxUSec` passed).
        case shutdown

        /// The `what` argument of `Inhibit`: `sleep` or `shutdown`.
        public var description: String { rawValue }
    }

    /// What the client did after logind came back with a new owner.
    public struct Resync: Sendable, Equatable {
        /// The new unique owner of `org.freedesktop.login1`.
        public var owner: String
        /// The session path adopted, or `nil` if there is none yet (the client then follows `SessionNew`).
        public var sessionPath: String?
        /// The delay locks taken again on the new logind.
        public var retakenLocks: [DelayLock]
        /// The delay locks that could not be taken again (logged); they are no longer wanted.
        public var failedLocks: [DelayLock]
    }

    /// `org.freedesktop.login1`.
    public static let busName = "org.freedesktop.login1"
    /// `/org/freedesktop/login1`, the manager object.
    public static let managerPath = "/org/freedesktop/login1"
    /// `org.freedesktop.login1.Manager`.
    public static let managerInterface = "org.freedesktop.login1.Manager"
    /// `org.freedesktop.login1.Session`.
    public static let sessionInterface = "org.freedesktop.login1.Session"
    /// The object logind resolves to the caller's own session, for property reads only.
    public static let autoSessionPath = "/org/freedesktop/login1/session/auto"
    /// The `InhibitDelayMaxUSec` assumed when logind does not say (systemd's default, 5 s).
    public static let defaultInhibitDelayMaxUSec: UInt64 = 5_000_000

    /// The system bus connection the client uses.
    public let connection: BusConnection
    private let environment: [String: String]
    private let uid: UInt32
    private let sink: @Sendable (HostEvent) -> Void
    private let onResync: (@Sendable (Resync) -> Void)?
    private let logger: Logger
    private let state = Mutex(State())

    private enum Field: Hashable { case locked, active }

    private struct HeldLock {
        var descriptor: BusFileDescriptor?
        var who: String
        var why: String
    }

    private struct State {
        var phase = Phase.idle
        var subscriptions: [BusSubscription] = []
        var owner: String?
        var sessionPath: String?
        var sessionID: String?
        /// Session paths being read; the fields a signal set meanwhile win over the read values.
        var pending: [String: Set<Field>] = [:]
        var generation: UInt64 = 0
        var locked: Bool?
        var active: Bool?
        var shutdownPending = false
        var locks: [DelayLock: HeldLock] = [:]
        /// How many times each lock was released: a take whose `Inhibit` was in flight across a
        /// release closes the fd it gets, since the release came later.
        var releases: [DelayLock: UInt64] = [:]
        var inhibitDelayMaxUSec = LogindClient.defaultInhibitDelayMaxUSec
    }

    private enum Phase { case idle, starting, running, stopped }

    /// One read of a session object's properties.
    private struct SessionSnapshot: Sendable {
        var path: String
        var id: String
        var uid: UInt32?
        var active: Bool?
        var locked: Bool?
    }

    /// Creates a client; nothing happens on the bus until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A connection to the system bus (or a test bus).
    ///   - environment: The environment to read `XDG_SESSION_ID` from (pass it in; the client never reads
    ///     or changes the process environment itself).
    ///   - uid: The user whose session to look for when `XDG_SESSION_ID` and `session/auto` do not name one.
    ///   - onResync: Called after each resynchronisation with a new logind (not at start), on a task.
    ///   - logger: Where the client's diagnostics go (at info and below), tagged with `service`.
    ///   - sink: Receives the host events, on the bus loop thread.
    public init(
        connection: BusConnection, environment: [String: String], uid: UInt32 = UInt32(getuid()),
        onResync: (@Sendable (Resync) -> Void)? = nil, logger: Logger,
        sink: @escaping @Sendable (HostEvent) -> Void
    ) {
        self.connection = connection
        self.environment = environment
        self.uid = uid
        self.onResync = onResync
        self.sink = sink
        var logger = logger
        logger[metadataKey: "service"] = "\(LogindClient.busName)"
        self.logger = logger
    }

    // MARK: - State

    /// The object path of the adopted session, or `nil` while there is none.
    public var sessionPath: String? { state.withLock { $0.sessionPath } }
    /// The id of the adopted session (`c1`, `3`), or `nil` while there is none.
    public var sessionID: String? { state.withLock { $0.sessionID } }
    /// The last known locked fact of the session, or `nil` before it was read.
    public var isLocked: Bool? { state.withLock { $0.locked } }
    /// The last known `Active` property of the session, or `nil` before it was read.
    public var isSessionActive: Bool? { state.withLock { $0.active } }
    /// logind's `InhibitDelayMaxUSec`, the longest a delay lock may hold up sleep or shutdown, in
    /// microseconds; ``defaultInhibitDelayMaxUSec`` (5 s) if logind did not say.
    public var inhibitDelayMaxUSec: UInt64 { state.withLock { $0.inhibitDelayMaxUSec } }
    /// ``inhibitDelayMaxUSec`` as a `Duration`.
    public var inhibitDelayMax: Duration { .microseconds(Int64(clamping: inhibitDelayMaxUSec)) }

    // MARK: - Start and stop

    /// Subscribes to logind, reads `InhibitDelayMaxUSec`, finds and reads the app's session and reports it.
    ///
    /// Returns once the subscriptions are installed and the session is resolved (or known to be missing,
    /// in which case `SessionNew` is followed). Calling it again after success does nothing.
    ///
    /// - Throws: `BusServiceError` with `BusServiceError/Code/serviceUnavailable` when nobody owns
    ///   `org.freedesktop.login1`, or `BusServiceError/Code/busFailure` when the bus refuses a subscription.
    public func start() async throws(BusServiceError) {
        let proceed = state.withLock { state -> Bool in
            guard state.phase == .idle else { return false }
            state.phase = .starting
            return true
        }
        guard proceed else { return }
        do {
            try await subscribeAll()
        } catch {
            let subscriptions = state.withLock { state in
                state.phase = .idle
                defer { state.subscriptions.removeAll() }
                return state.subscriptions
            }
            subscriptions.forEach { $0.cancel() }
            throw BusServiceError.wrap(error, service: Self.busName, message: "subscribe to logind")
        }
        await readManagerProperties()
        _ = await resolveSession()
    }

    /// Cancels the subscriptions and closes every delay-lock fd (which releases the locks).
    ///
    /// Nothing is reported afterwards. Safe to call more than once.
    public func stop() {
        let (subscriptions, locks) = state.withLock { state in
            state.phase = .stopped
            defer {
                state.subscriptions.removeAll()
                state.locks.removeAll()
            }
            return (state.subscriptions, state.locks.values.compactMap(\.descriptor))
        }
        subscriptions.forEach { $0.cancel() }
        locks.forEach { $0.close() }
    }

    private func subscribeAll() async throws {
        let tracker = try await connection.trackNameOwner(Self.busName)
        guard let owner = tracker.currentOwner else {
            throw BusServiceError(
                code: .serviceUnavailable, service: Self.busName,
                message: "nobody owns \(Self.busName) on the bus")
        }
        state.withLock { $0.owner = owner }
        let name = Self.busName
        let manager = Self.managerPath
        let managerInterface = Self.managerInterface
        try await add(tracker.addOwnerChangeHandler { [weak self] in self?.ownerChanged($0) })
        try await add(
            connection.subscribe(
                sender: name, path: manager, interface: managerInterface,
                member: "PrepareForSleep", signature: "b"
            ) { [weak self] signal in
                guard let self, self.isRunning, let start = signal.arguments[0].boolValue else { return }
                self.logger.debug("PrepareForSleep(\(start))")
                self.sink(.sleeping(start))
            })
        try await add(
            connection.subscribe(
                sender: name, path: manager, interface: managerInterface,
                member: "PrepareForShutdown", signature: "b"
            ) { [weak self] signal in
                guard let start = signal.arguments[0].boolValue else { return }
                self?.shutdownSignal(start, member: signal.member)
            })
        try await add(
            connection.subscribe(
                sender: name, path: manager, interface: managerInterface,
                member: "PrepareForShutdownWithMetadata", signature: "ba{sv}"
            ) { [weak self] signal in
                guard let start = signal.arguments[0].boolValue else { return }
                self?.shutdownSignal(start, member: signal.member)
            })
        try await add(
            connection.subscribe(
                sender: name, path: manager, interface: managerInterface,
                member: "SessionNew", signature: "so"
            ) { [weak self] signal in
                guard let id = signal.arguments[0].stringValue, let path = signal.arguments[1].stringValue else {
                    return
                }
                self?.sessionNew(id: id, path: path)
            })
        try await add(
            connection.subscribe(
                sender: name, path: manager, interface: managerInterface,
                member: "SessionRemoved", signature: "so"
            ) { [weak self] signal in
                guard let path = signal.arguments[1].stringValue else { return }
                self?.sessionRemoved(path: path)
            })
        for (member, locked) in [("Lock", true), ("Unlock", false)] {
            try await add(
                connection.subscribe(
                    sender: name, path: nil, interface: Self.sessionInterface,
                    member: member, signature: ""
                ) { [weak self] signal in
                    self?.sessionFact(.locked, locked, path: signal.path, via: signal.member)
                })
        }
        try await add(
            connection.subscribe(
                sender: name, path: nil, interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged", signature: "sa{sv}as",
                arg0: Self.sessionInterface
            ) { [weak self] signal in
                guard let self else { return }
                let changed = signal.arguments[1].dictionaryValue ?? [:]
                if let value = changed["LockedHint"] {
                    if let locked = value.boolValue {
                        self.sessionFact(.locked, locked, path: signal.path, via: "LockedHint")
                    } else {
                        self.logger.info("ignored LockedHint of type \(value.unwrapped.signature) on \(signal.path)")
                    }
                }
                if let value = changed["Active"] {
                    if let active = value.boolValue {
                        self.sessionFact(.active, active, path: signal.path, via: "Active")
                    } else {
                        self.logger.info("ignored Active of type \(value.unwrapped.signature) on \(signal.path)")
                    }
                }
            })
        connection.addDisconnectHandler { [weak self] in self?.busDisconnected() }
        state.withLock { state in
            if state.phase == .starting { state.phase = .running }
        }
    }

    private func add(_ subscription: BusSubscription) {
        let keep = state.withLock { state -> Bool in
            guard state.phase != .stopped else { return false }
            state.subscriptions.append(subscription)
            return true
        }
        if !keep { subscription.cancel() }
    }

    private var isRunning: Bool { state.withLock { $0.phase == .running || $0.phase == .starting } }

    // MARK: - Manager signals (loop thread)

    private func shutdownSignal(_ start: Bool, member: String) {
        let emit = state.withLock { state -> Bool in
            guard state.phase == .running || state.phase == .starting else { return false }
            if !start {
                state.shutdownPending = false
                return false
            }
            defer { state.shutdownPending = true }
            return !state.shutdownPending
        }
        if emit {
            logger.info("\(member)(true): terminating for shutdown")
            sink(.terminate(.shutdown))
        } else {
            logger.debug("\(member)(\(start)): no new shutdown")
        }
    }

    private func sessionNew(id: String, path: String) {
        let wanted = state.withLock { $0.phase == .running && $0.sessionPath == nil }
        guard wanted else { return }
        guard Self.isValidSessionID(id), path.hasPrefix("/org/freedesktop/login1/session/") else {
            logger.info("ignored SessionNew with a bogus session \(id) at \(path)")
            return
        }
        if let wantedID = Self.sessionIDFromEnvironment(environment), wantedID != id {
            logger.debug("SessionNew \(id): not XDG_SESSION_ID \(wantedID)")
            return
        }
        Task {
            _ = await self.adopt(path: path) { [uid, environment] snapshot in
                snapshot.id == id && (Self.sessionIDFromEnvironment(environment) != nil || snapshot.uid == uid)
            }
        }
    }

    private func sessionRemoved(path: String) {
        let removed = state.withLock { state -> Bool in
            guard state.sessionPath == path else { return false }
            state.sessionPath = nil
            state.sessionID = nil
            state.generation += 1
            return true
        }
        if removed { logger.info("the app's session \(path) was removed; following SessionNew") }
    }

    // MARK: - Session facts (loop thread)

    private func sessionFact(_ field: Field, _ value: Bool, path: String, via source: String) {
        let changed = state.withLock { state -> Bool? in
            guard state.phase == .running || state.phase == .starting else { return nil }
            if state.pending[path] != nil {
                state.pending[path]?.insert(field)
            } else if state.sessionPath != path {
                return nil
            }
            switch field {
            case .locked:
                guard state.locked != value else { return false }
                state.locked = value
            case .active:
                guard state.active != value else { return false }
                state.active = value
            }
            return true
        }
        switch changed {
        case nil:
            logger.debug("ignored \(source) for \(path): not the app's session")
        case false?:
            logger.debug("\(source)=\(value) on \(path): no change")
        case true?:
            logger.debug("\(source)=\(value) on \(path)")
            sink(field == .locked ? .locked(value) : .sessionActive(value))
        }
    }

    // MARK: - Session resolution

    /// Finds the app's session with the documented strategies and adopts it; returns its path or `nil`.
    private func resolveSession() async -> String? {
        if let id = Self.sessionIDFromEnvironment(environment) {
            if let path = await sessionPath(forID: id, source: "XDG_SESSION_ID"),
                await adopt(path: path, accept: { $0.id == id })
            {
                return path
            }
        } else if let raw = environment["XDG_SESSION_ID"], !raw.isEmpty {
            logger.info("ignored XDG_SESSION_ID \(raw): not a valid session id")
        }
        if let id = await autoSessionID(), let path = await sessionPath(forID: id, source: "session/auto"),
            await adopt(path: path, accept: { $0.id == id })
        {
            return path
        }
        for path in await userSessionPaths() {
            if await adopt(path: path, accept: { [uid] in $0.uid == uid }) { return path }
        }
        logger.info("no logind session for uid \(uid) yet; following SessionNew")
        return nil
    }

    private func sessionPath(forID id: String, source: String) async -> String? {
        do {
            let reply = try await connection.call(
                destination: Self.busName, path: Self.managerPath,
                interface: Self.managerInterface, member: "GetSession",
                arguments: [.string(id)])
            guard case .objectPath(let path)? = reply.first else {
                logger.info("GetSession(\(id)) from \(source) returned \(reply); ignored")
                return nil
            }
            return path
        } catch {
            logger.info("GetSession(\(id)) from \(source) failed: \(error)")
            return nil
        }
    }

    private func autoSessionID() async -> String? {
        do {
            let value = try await connection.getProperty(
                destination: Self.busName, path: Self.autoSessionPath,
                interface: Self.sessionInterface, name: "Id")
            guard let id = value.stringValue, Self.isValidSessionID(id) else {
                logger.info("session/auto has a bogus Id \(value); ignored")
                return nil
            }
            return id
        } catch {
            logger.debug("session/auto is not readable: \(error)")
            return nil
        }
    }

    /// The uid's sessions from `ListSessions`, active ones first.
    private func userSessionPaths() async -> [String] {
        let reply: [BusValue]
        do {
            reply = try await connection.call(
                destination: Self.busName, path: Self.managerPath,
                interface: Self.managerInterface, member: "ListSessions")
        } catch {
            logger.info("ListSessions failed: \(error)")
            return []
        }
        guard reply.first?.signature == "a(susso)", let rows = reply.first?.arrayValue else {
            logger.info("ListSessions returned \(reply.map(\.signature)); ignored")
            return []
        }
        var candidates: [String] = []
        for row in rows {
            guard let fields = row.structValue, fields.count == 5, fields[1].uint32Value == uid,
                let path = fields[4].stringValue
            else { continue }
            candidates.append(path)
        }
        var active: [String] = []
        var inactive: [String] = []
        for path in candidates {
            let isActive = try? await connection.getProperty(
                destination: Self.busName, path: path,
                interface: Self.sessionInterface, name: "Active"
            ).boolValue
            if isActive == true { active.append(path) } else { inactive.append(path) }
        }
        return active + inactive
    }

    /// Reads a session object and, if `accept` agrees and nothing newer was adopted, makes it the app's
    /// session and reports the facts that changed.
    private func adopt(path: String, accept: @escaping @Sendable (SessionSnapshot) -> Bool) async -> Bool {
        guard path.hasPrefix("/org/freedesktop/login1/session/"), path != Self.autoSessionPath else {
            logger.info("ignored session path \(path)")
            return false
        }
        let (generation, owner) = state.withLock { state -> (UInt64, String?) in
            state.generation += 1
            state.pending[path] = state.pending[path] ?? []
            return (state.generation, state.owner)
        }
        let snapshot = await readSession(path: path)
        let accepted = snapshot.map(accept) ?? false
        if let snapshot, !accepted {
            logger.info(
                "session \(snapshot.id) at \(path) (uid \(snapshot.uid.map(String.init) ?? "?")) is not the app's; ignored"
            )
        }
        // Apply and report on the loop thread, so the reports are ordered with the signal handlers.
        let applied =
            (try? await connection.loop.run { [self] () -> Bool in
                let events = state.withLock { state -> [HostEvent]? in
                    let touched = state.pending.removeValue(forKey: path) ?? []
                    guard accepted, let snapshot, state.phase == .running || state.phase == .starting,
                        state.owner == owner, state.generation == generation || state.sessionPath == nil
                    else { return nil }
                    state.sessionPath = path
                    state.sessionID = snapshot.id
                    var events: [HostEvent] = []
                    if let locked = snapshot.locked, !touched.contains(.locked), state.locked != locked {
                        state.locked = locked
                        events.append(.locked(locked))
                    }
                    if let active = snapshot.active, !touched.contains(.active), state.active != active {
                        state.active = active
                        events.append(.sessionActive(active))
                    }
                    return events
                }
                guard let events else { return false }
                logger.info("adopted session \(snapshot?.id ?? "?") at \(path); reporting \(events)")
                events.forEach(sink)
                return true
            }) ?? false
        return applied || (accepted && state.withLock { $0.sessionPath == path })
    }

    private func readSession(path: String) async -> SessionSnapshot? {
        do {
            let properties = try await connection.getAllProperties(
                destination: Self.busName, path: path,
                interface: Self.sessionInterface)
            guard let id = properties["Id"]?.stringValue, Self.isValidSessionID(id) else {
                logger.info("session object \(path) has no valid Id; ignored")
                return nil
            }
            return SessionSnapshot(
                path: path, id: id, uid: properties["User"]?.structValue?.first?.uint32Value,
                active: properties["Active"]?.boolValue, locked: properties["LockedHint"]?.boolValue)
        } catch {
            logger.info("cannot read session \(path): \(error)")
            return nil
        }
    }

    private func readManagerProperties() async {
        do {
            let value = try await connection.getProperty(
                destination: Self.busName, path: Self.managerPath,
                interface: Self.managerInterface, name: "InhibitDelayMaxUSec")
            guard let usec = value.uint64Value, usec > 0 else {
                logger.info("ignored InhibitDelayMaxUSec \(value); keeping \(inhibitDelayMaxUSec) µs")
                return
            }
            state.withLock { $0.inhibitDelayMaxUSec = usec }
        } catch {
            logger.debug("InhibitDelayMaxUSec not readable (\(error)); assuming \(Self.defaultInhibitDelayMaxUSec) µs")
            state.withLock { $0.inhibitDelayMaxUSec = Self.defaultInhibitDelayMaxUSec }
        }
    }

    /// `XDG_SESSION_ID` if it is set and a valid logind session id.
    static func sessionIDFromEnvironment(_ environment: [String: String]) -> String? {
        guard let id = environment["XDG_SESSION_ID"], isValidSessionID(id) else { return nil }
        return id
    }

    /// logind's rule (`session_id_valid`): non-empty, ASCII letters and digits only.
    static func isValidSessionID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 64
            && id.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            }
    }

    // MARK: - Delay locks

    /// Takes a delay inhibitor lock (`Inhibit(what, who, why, "delay")`) and keeps its fd.
    ///
    /// Holding it, logind waits for ``releaseDelayLock(what:)`` (or ``inhibitDelayMaxUSec``) before it
    /// sleeps or shuts down. Does nothing if the lock is already held. The client re-takes it by itself
    /// after a logind restart. A release called while this call waits for logind's reply wins:
    /// the fd that arrives is closed at once and the lock is not held.
    ///
    /// - Parameters:
    ///   - what: `sleep` or `shutdown`.
    ///   - who: A human-readable name of the app, shown by `systemd-inhibit --list`.
    ///   - why: Why the app delays, shown by `systemd-inhibit --list`.
    /// - Throws: `BusServiceError`: `BusServiceError/Code/notStarted` before ``start()``,
    ///   `BusServiceError/Code/busFailure` if logind refuses, `BusServiceError/Code/invalidReply` if it
    ///   sends no fd.
    public func takeDelayLock(what: DelayLock, who: String, why: String) async throws(BusServiceError) {
        let proceed = state.withLock { state -> (take: Bool, releases: UInt64, owner: String?)? in
            guard state.phase == .running else { return nil }
            return (state.locks[what]?.descriptor?.isOpen != true, state.releases[what, default: 0], state.owner)
        }
        guard let proceed else {
            throw BusServiceError(code: .notStarted, service: Self.busName, message: "take the \(what) delay lock")
        }
        guard proceed.take else { return }
        let descriptor = try await inhibit(what, who: who, why: why)
        enum Outcome { case kept, dropped, ownerChanged }
        let (outcome, stale) = state.withLock { state -> (Outcome, BusFileDescriptor?) in
            guard state.phase == .running, state.releases[what, default: 0] == proceed.releases else {
                return (.dropped, descriptor)
            }
            // logind changed owner while the call was out: the fd is the old instance's.
            guard state.owner == proceed.owner else { return (.ownerChanged, descriptor) }
            let old = state.locks[what]?.descriptor
            state.locks[what] = HeldLock(descriptor: descriptor, who: who, why: why)
            return (.kept, old)
        }
        stale?.close()
        switch outcome {
        case .kept:
            logger.debug("took the \(what) delay lock (\(descriptor))")
        case .dropped:
            logger.debug(
                "dropped the \(what) delay lock logind just gave: released (or stopped) while Inhibit was in flight")
        case .ownerChanged:
            logger.info("logind changed owner while Inhibit(\(what)) was out; taking the lock from the new one")
            try await takeDelayLock(what: what, who: who, why: why)
        }
    }

    /// Releases a delay lock by closing its fd; does nothing if it is not held.
    ///
    /// - Parameters:
    ///   - what: `sleep` or `shutdown`.
    public func releaseDelayLock(what: DelayLock) {
        let held = state.withLock { state in
            state.releases[what, default: 0] &+= 1
            return state.locks.removeValue(forKey: what)
        }
        if let descriptor = held?.descriptor, descriptor.isOpen {
            descriptor.close()
            logger.debug("released the \(what) delay lock")
        }
    }

    /// Whether the client holds an open delay-lock fd of this kind.
    ///
    /// - Parameters:
    ///   - what: `sleep` or `shutdown`.
    public func holdsDelayLock(what: DelayLock) -> Bool {
        state.withLock { $0.locks[what]?.descriptor?.isOpen == true }
    }

    private func inhibit(_ what: DelayLock, who: String, why: String) async throws(BusServiceError) -> BusFileDescriptor
    {
        let reply: [BusValue]
        do {
            reply = try await connection.call(
                destination: Self.busName, path: Self.managerPath,
                interface: Self.managerInterface, member: "Inhibit",
                arguments: [.string(what.rawValue), .string(who), .string(why), .string("delay")])
        } catch {
            throw BusServiceError.wrap(error, service: Self.busName, message: "Inhibit(\(what), delay)")
        }
        guard reply.count == 1, let descriptor = reply[0].fileDescriptor, descriptor.isOpen else {
            throw BusServiceError(
                code: .invalidReply, service: Self.busName,
                message: "Inhibit(\(what), delay) returned \(reply.map(\.signature)), not an fd")
        }
        return descriptor
    }

    // MARK: - logind restart and bus loss

    private func ownerChanged(_ change: NameOwnerChange) {
        let (running, stale) = state.withLock { state -> (Bool, [BusFileDescriptor]) in
            guard state.phase == .running || state.phase == .starting else { return (false, []) }
            state.owner = change.newOwner
            state.sessionPath = nil
            state.sessionID = nil
            state.pending.removeAll()
            state.generation += 1
            state.shutdownPending = false
            var stale: [BusFileDescriptor] = []
            for key in state.locks.keys {
                if let descriptor = state.locks[key]?.descriptor { stale.append(descriptor) }
                state.locks[key]?.descriptor = nil
            }
            return (true, stale)
        }
        guard running else { return }
        stale.forEach { $0.close() }
        guard let owner = change.newOwner else {
            logger.info("logind vanished from the bus; waiting for it to come back")
            return
        }
        logger.info("logind has a new owner \(owner); resynchronising")
        Task { await self.resync(owner: owner) }
    }

    private func resync(owner: String) async {
        var retaken: [DelayLock] = []
        var failed: [DelayLock] = []
        let wanted = state.withLock { $0.locks.filter { $0.value.descriptor == nil } }
        for what in DelayLock.allCases {
            guard let lock = wanted[what] else { continue }
            do {
                let descriptor = try await inhibit(what, who: lock.who, why: lock.why)
                let kept = state.withLock { state -> Bool in
                    guard state.owner == owner, state.locks[what] != nil, state.locks[what]?.descriptor == nil else {
                        return false
                    }
                    state.locks[what]?.descriptor = descriptor
                    return true
                }
                if kept { retaken.append(what) } else { descriptor.close() }
            } catch {
                logger.info("could not re-take the \(what) delay lock: \(error)")
                state.withLock { state in
                    if state.locks[what]?.descriptor == nil { state.locks[what] = nil }
                }
                failed.append(what)
            }
        }
        guard state.withLock({ $0.owner == owner && $0.phase == .running }) else { return }
        await readManagerProperties()
        let path = await resolveSession()
        onResync?(Resync(owner: owner, sessionPath: path, retakenLocks: retaken, failedLocks: failed))
    }

    private func busDisconnected() {
        let locks = state.withLock { state in
            state.phase = .stopped
            state.subscriptions.removeAll()
            defer { state.locks.removeAll() }
            return state.locks.values.compactMap(\.descriptor)
        }
        locks.forEach { $0.close() }
        logger.info("the system bus went away; logind facts are no longer followed")
    }
}
