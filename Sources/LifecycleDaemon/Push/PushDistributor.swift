import AppLifecycle
import BrokerLink
import DurableState
import FleetProtocol
import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus

/// lifecycled as a UnifiedPush distributor: `org.unifiedpush.Distributor.applifecycle` with
/// `org.unifiedpush.Distributor2` and `…1` at `/org/unifiedpush/Distributor`, for every
/// UnifiedPush app on the session bus, hosted or not.
///
/// - `Register` gives the connector an endpoint `<endpoint-url>/push/<160 random bits>`; the
///   registration is kept in `push-registrations.json` and published retained to the broker
///   (`…/<device>/registrations/<token>`) so every gateway knows where the token lives. The
///   connector's `NewEndpoint` follows once the broker has the record (its PUBACK).
/// - A push from the broker for an app whose connector is on the bus (its name has an owner), with
///   nothing of that registration waiting before it and the device's state allowing it, is handed
///   to that connection at once (``deliverDirectly(_:to:owner:acknowledgement:)``): nothing is
///   written, and the broker gets the PUBACK once the connector answered the `Message`. Until then
///   the broker holds the push, and sends it again after a reconnect; the connector recognises the
///   id (``UnifiedPushClient``'s `RecentMessageIDs`).
/// - Every other push (the app must be launched, is unreachable, or answered with an error; the
///   urgency rule holds it back; others of the registration wait before it) is written to
///   `push-queue.json` before the broker gets its PUBACK, then delivered by calling the connector's
///   `Message` on the app's name: a suspended hosted app is resumed first, a hosted app that is
///   not running is launched in the background for it, any other is D-Bus-activated. Undelivered
///   pushes wait (bounded, persisted) until the app is reachable, retried when its name gets an
///   owner and with a backoff.
/// - The urgency rule of the specification holds pushes back by the device's state
///   (``DeliveryConditions``).
@MainActor
final class PushDistributor {
    unowned let daemon: LifecycleDaemon
    let connection: BusConnection
    private(set) var fleet: FleetLink?
    private var registrations: [String: PushRegistration] = [:]
    /// How many registrations are held (all services together).
    var registrationCount: Int { registrations.count }
    /// How many pushes wait in the queue (not those the broker keeps for a full queue).
    var queuedCount: Int { queue.pending.count }
    /// What happened to pushes since the start (``PushCounters``).
    private(set) var counters = PushCounters()
    /// `Message` calls that failed or timed out since the start (each is retried).
    var failedDeliveries: Int { counters.failedDeliveries }
    private var queue = PushQueue()
    private let registrationsFile: GroupCommitFile
    private let queueFile: GroupCommitFile
    private var objects: [ExportedObject] = []
    private var tasks: [Task<Void, Never>] = []
    private var ownerChanges: BusSubscription?
    private var conditionsSource: DeliveryConditionsSource?
    /// Registrations with a delivery on its way.
    private var delivering: Set<String> = []
    /// The delivery under way for each endpoint token, awaited by ``stop()``.
    private var deliveries: [String: Task<Void, Never>] = [:]
    /// Whether `lifecycled.conf` configures a fleet (``startDelivering(loop:)`` does nothing otherwise).
    private var isFleetConfigured = false
    /// Set by ``stop()``: nothing new is delivered, retried or launched.
    private var isStopping = false
    /// Registrations waiting for a retry, and their backoff.
    private var backoff: [String: Backoff] = [:]
    private var retryTasks: [String: Task<Void, Never>] = [:]
    /// Failed delivery attempts in a row, per registration.
    private var failures: [String: Int] = [:]
    /// Registrations published to the broker (their NewEndpoint may go out).
    private var published: Set<String> = []
    /// Registrations whose connector waits for a `NewEndpoint` (sent after the record's PUBACK).
    private var endpointPending: Set<String> = []
    /// Pushes that arrived while their queue was full, with their unsent PUBACKs: the broker keeps
    /// them (and sends no more than its in-flight window) until there is room. Only of the current
    /// broker connection: after a reconnect the broker sends them again.
    private var heldForRoom: [(push: PushEnvelope, acknowledgement: BrokerAcknowledgement)] = []
    /// The unique name that owns each registered service's name, as last seen (at its `Register`,
    /// at a delivery, from `NameOwnerChanged`). A service absent here takes the queued path, which
    /// asks the bus. A stale entry costs one `Message` that fails, then the queued path.
    private var owners: [String: String] = [:]
    /// Pushes handed straight to a running app (``deliverDirectly(_:to:owner:acknowledgement:)``),
    /// by id, with the acknowledgements given once the app accepted it (a redelivery of one while
    /// it is under way adds its own).
    private var direct: [String: [BrokerAcknowledgement]] = [:]
    /// The direct deliveries under way, by push id, awaited by ``stop()``.
    private var directDeliveries: [String: Task<Void, Never>] = [:]
    /// Pushes for running apps that arrived while ``directWindow`` deliveries were under way, in
    /// order, unacknowledged: the broker holds them, and its in-flight window bounds this list.
    private var waitingForWindow: [(push: PushEnvelope, acknowledgement: BrokerAcknowledgement)] = []
    var conditions = DeliveryConditions() {
        didSet { if conditions != oldValue { deliverAll() } }
    }
    let logger: Logger

    /// How long one `Message` call may take (the app may be launched for it).
    static let messageTimeout: Duration = .seconds(30)
    /// How long a running app's connector may take to answer a `Message` handed to it directly.
    ///
    /// Short, because the broker connection writes nothing while a push waits for its PUBACK: not
    /// the PUBACKs of pushes to other apps, not a PINGREQ (the smallest keepalive is 5 s; the broker
    /// drops the connection after 1.5 times it). An app that takes longer gets the push through the
    /// queue (written, then acknowledged) and is sent it again; its connector recognises the id.
    static let directMessageTimeout: Duration = .seconds(2)
    /// The most `Message` calls handed directly and not answered yet, all apps together: below
    /// the connector's queue of calls (64) and the bus's limit of pending replies per connection
    /// (dbus-daemon's default: 128), which refuse calls past them.
    static let directWindow = 32
    /// The most registrations one service may hold.
    static let maximumRegistrationsPerService = 16
    /// The longest `description` kept.
    static let maximumDescriptionLength = 256
    /// After this many failed attempts in a row, a registration's pushes wait for its service's
    /// name to get an owner instead of a timer (no polling for an app that is gone).
    static let attemptsBeforeWaitingForOwner = 6

    init(daemon: LifecycleDaemon, connection: BusConnection, stateDirectory: String, logger: Logger) {
        self.daemon = daemon
        self.connection = connection
        self.logger = logger
        let directory = URL(fileURLWithPath: stateDirectory, isDirectory: true)
        registrationsFile = GroupCommitFile(
            url: directory.appendingPathComponent("push-registrations.json"), logger: logger)
        queueFile = GroupCommitFile(url: directory.appendingPathComponent("push-queue.json"), logger: logger)
        queue.capacity = daemon.configuration.pushQueueCapacity
        loadState()
    }

    // MARK: Start and stop

    /// Makes the broker link (not connected yet) when configured, exports the distributor and owns
    /// its name: from here a connector's `Register` is answered as it will be for the whole run.
    ///
    /// lifecycled calls this before it takes `org.applifecycle.Lifecycled1`, so an app launched or
    /// registered through that name (the call that D-Bus-activated lifecycled is handed over the
    /// moment it owns the name) finds the distributor when it registers for remote notifications.
    /// Nothing is delivered and nothing is launched until ``startDelivering(loop:)``.
    func serve(fleetConfiguration: FleetConfiguration?, loop: EventLoop) async {
        isFleetConfigured = fleetConfiguration != nil
        if let fleetConfiguration {
            do {
                let fleet = try FleetLink(configuration: fleetConfiguration, loop: loop, logger: logger)
                fleet.onPush = { [weak self] envelope, message, acknowledgement in
                    self?.received(envelope, message, acknowledgement)
                }
                fleet.onConnected = { [weak self] in
                    // Held PUBACKs of the old connection are moot: the broker sends those pushes again.
                    self?.heldForRoom.removeAll()
                    self?.waitingForWindow.removeAll()
                    self?.republishRegistrations()
                }
                // A registration taken before the link connects is published once it does.
                self.fleet = fleet
            } catch {
                logger.error("push: cannot make the broker link: \(error)")
            }
        } else {
            logger.notice(
                "push: no lifecycled.conf with a [broker] and [push]; registrations are refused (ACTION_REQUIRED)")
        }
        for interface in [UnifiedPush.distributor2, UnifiedPush.distributor1] {
            let methods = Self.methods(of: interface)
            // No properties, but org.freedesktop.DBus.Properties answers for them all the same:
            // another uid gets AccessDenied there too, as from every method.
            let policy = daemon.policy
            var exported = ExportedInterface(
                name: interface, methods: methods.map(\.declaration),
                propertyAccessCheck: { credentials throws(BusError) in
                    try policy.check(credentials, member: "org.freedesktop.DBus.Properties")
                })
            exported.callDelivery = .inOrder
            exported.maximumPendingCalls = 128
            do {
                let object = try await connection.export(exported, at: UnifiedPush.distributorPath)
                objects.append(object)
                tasks.append(
                    object.serve(self, methods: methods, whenGone: "lifecycled is stopping") {
                        distributor, call throws(BusError) in
                        // The same rule as every Lifecycled1 method: an endpoint is a door into this
                        // user's broker account, so another uid on a shared bus gets AccessDenied
                        // before anything is looked at.
                        try distributor.daemon.policy.check(
                            call.credentials, member: "\(call.interface).\(call.member)")
                    })
            } catch {
                logger.error("push: cannot export \(interface): \(error)")
            }
        }
        do {
            ownerChanges = try await connection.subscribe(
                sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "NameOwnerChanged", signature: "sss"
            ) { [weak self] signal in
                guard let name = signal.arguments[0].stringValue, !name.hasPrefix(":") else { return }
                let owner = signal.arguments[2].stringValue ?? ""
                Task { @MainActor in self?.ownerChanged(name, to: owner) }
            }
            let reply = try await connection.requestName(UnifiedPush.lifecycledDistributorName, flags: [.doNotQueue])
            if reply == .primaryOwner || reply == .alreadyOwner {
                logger.info("push: serving \(UnifiedPush.lifecycledDistributorName)")
            } else {
                logger.warning("push: \(UnifiedPush.lifecycledDistributorName) is owned by another process")
            }
        } catch {
            logger.error("push: cannot serve \(UnifiedPush.lifecycledDistributorName): \(error)")
        }
    }

    /// Connects to the broker (pushes start arriving), follows the urgency rule's facts, and sends
    /// the pushes kept from before a restart: once lifecycled serves its interface and may launch apps.
    func startDelivering(loop: EventLoop) async {
        // Without a fleet nothing arrives to deliver, and the device's conditions are not followed.
        guard isFleetConfigured else { return }
        if let fleet {
            do {
                try await fleet.start()
            } catch {
                logger.error("push: cannot start the broker link: \(error)")
            }
        }
        // The urgency rule's facts (UPower, NetworkManager), followed off the start path.
        let source = DeliveryConditionsSource(logger: logger) { [weak self] in self?.conditions = $0 }
        conditionsSource = source
        let systemBus = daemon.configuration.systemBus
        Task { @MainActor in await source.start(systemBus: systemBus, loop: loop) }
        // Pushes persisted before a restart go out now.
        deliverAll()
    }

    /// Writes the queue and the registrations as they are now (at shutdown).
    func flush() async {
        _ = await saveQueue()
        _ = await saveRegistrations()
    }

    /// Stops delivering and waits for the deliveries under way to end, so that nothing of the
    /// distributor runs once the daemon has said it stopped.
    ///
    /// ``stopAbruptly()``, then the deliveries it cancelled are awaited: a `Message` already sent is
    /// not waited for (it counts as delivered: it may have reached the app; at most once), and each
    /// delivery's outcome is recorded for the last write.
    func stop() async {
        let underWay = Array(deliveries.values) + Array(directDeliveries.values)
        stopAbruptly()
        for delivery in underWay { await delivery.value }
    }

    /// Stops at once: no more deliveries, the distributor's objects leave the bus, the fleet link
    /// disconnects. Deliveries under way end on their own (a crash-like stop, for teardown).
    func stopAbruptly() {
        isStopping = true
        tasks.forEach { $0.cancel() }
        retryTasks.values.forEach { $0.cancel() }
        deliveries.values.forEach { $0.cancel() }
        directDeliveries.values.forEach { $0.cancel() }
        objects.forEach { $0.unexport() }
        objects.removeAll()
        ownerChanges?.cancel()
        conditionsSource?.stop()
        fleet?.stop()
    }

    // MARK: State files

    /// The largest `push-registrations.json` read (16 per service; a registration is well under 1 KiB).
    static let maximumRegistrationsFileSize = 16 << 20
    /// The largest `push-queue.json` read: 2,000 pushes of at most 4 KiB each (in base64, with their
    /// fields) and 1,024 remembered ids fit in a quarter of it.
    static let maximumQueueFileSize = 64 << 20

    /// Reads a state file with a bound; `nil` when there is none. One that cannot be read is set aside.
    private func readStateFile(_ url: URL, limit: Int) -> Data? {
        do {
            return try AtomicFile.read(from: url, limit: limit)
        } catch {
            if error.code == .notFound { return nil }
            setAside(url, because: "\(error)")
            return nil
        }
    }

    /// Sets an unusable state file aside (``AtomicFile/setAside(_:reason:)``), with a log line.
    private func setAside(_ url: URL, because problem: String) {
        if let kept = AtomicFile.setAside(url) {
            logger.error("push: \(url.path) is unusable (\(problem)); kept as \(kept), a new one is started")
        } else {
            logger.error("push: \(url.path) is unusable (\(problem)) and cannot be set aside; it will be replaced")
        }
    }

    private func loadState() {
        let decoder = JSONDecoder()
        if let data = readStateFile(registrationsFile.url, limit: Self.maximumRegistrationsFileSize) {
            do {
                for registration in try decoder.decode([PushRegistration].self, from: data) {
                    registrations[registration.endpointToken] = registration
                }
            } catch {
                setAside(registrationsFile.url, because: "\(error)")
            }
        }
        if let data = readStateFile(queueFile.url, limit: Self.maximumQueueFileSize) {
            do {
                queue = try decoder.decode(PushQueue.self, from: data)
                queue.capacity = daemon.configuration.pushQueueCapacity
                // At most once: what was on its way to an app when lifecycled stopped is not sent again.
                for id in queue.settleHandedOver() {
                    logger.notice("push: \(id) was being handed over when lifecycled stopped; not delivered again")
                }
                logger.info("push: \(queue.pending.count) undelivered push(es) from before")
            } catch {
                setAside(queueFile.url, because: "\(error)")
            }
        }
    }

    private func saveRegistrations() async -> Bool {
        await registrationsFile.persist { [weak self] in
            let list = (self?.registrations.values.sorted { $0.created < $1.created }) ?? []
            return (try? JSONEncoder().encode(list)) ?? Data("[]".utf8)
        }
    }

    private func saveQueue(afterWrite: (@Sendable () -> Void)? = nil) async -> Bool {
        await queueFile.persist(
            { [weak self] in (try? JSONEncoder().encode(self?.queue ?? PushQueue())) ?? Data() }, afterWrite: afterWrite
        )
    }

    // MARK: The distributor's methods

    /// The typed methods of one version of the distributor interface; both answer through
    /// ``register(service:token:description:vapid:version:caller:)`` and ``unregister(connectorToken:caller:)``.
    private static func methods(of interface: String) -> [ExportedMethod<PushDistributor>] {
        if interface == UnifiedPush.distributor2 {
            return [
                ExportedMethod("Register", arguments: [String: BusValue].self, results: [String: BusValue].self) {
                    distributor, call, options in
                    let (success, reason) = try await distributor.register(
                        service: options["service"]?.stringValue ?? "", token: options["token"]?.stringValue ?? "",
                        description: options["description"]?.stringValue, vapid: options["vapid"]?.stringValue,
                        version: 2, caller: call.sender)
                    var reply: [String: BusValue] = ["success": .string(success)]
                    if let reason { reply["reason"] = .string(reason) }
                    return reply
                },
                ExportedMethod("Unregister", arguments: [String: BusValue].self, results: ()) {
                    distributor, call, options in
                    try await distributor.unregister(
                        connectorToken: options["token"]?.stringValue ?? "", caller: call.sender)
                },
            ]
        }
        return [
            ExportedMethod(
                "Register", arguments: (String.self, String.self, String.self), results: (String.self, String.self)
            ) { distributor, call, service, token, description in
                let (success, reason) = try await distributor.register(
                    service: service, token: token, description: description, vapid: nil, version: 1,
                    caller: call.sender)
                return (success, reason ?? "")
            },
            ExportedMethod("Unregister", arguments: String.self, results: ()) { distributor, call, token in
                try await distributor.unregister(connectorToken: token, caller: call.sender)
            },
        ]
    }

    /// A valid D-Bus well-known name (the connector's `service`).
    static func isValidServiceName(_ name: String) -> Bool {
        let elements = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 255 && elements.count >= 2
            && elements.allSatisfy { element in
                guard let first = element.first, !first.isNumber else { return false }
                return element.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
            }
    }

    private func register(
        service: String, token: String, description: String?, vapid: String?, version: Int, caller: String?
    ) async throws -> (String, String?) {
        guard Self.isValidServiceName(service) else {
            throw BusError(
                name: BusError.Name.invalidArgs, message: "service '\(service.prefix(80))' is not a bus name")
        }
        guard !token.isEmpty, token.utf8.count <= UnifiedPush.maximumTokenLength else {
            throw BusError(name: BusError.Name.invalidArgs, message: "token must be 1 to 100 bytes")
        }
        if let description, description.utf8.count > Self.maximumDescriptionLength {
            throw BusError(
                name: BusError.Name.invalidArgs,
                message: "description must be at most \(Self.maximumDescriptionLength) bytes")
        }
        if let vapid, !PushRegistrationRecord.isValidVAPIDKey(vapid) {
            throw BusError(
                name: BusError.Name.invalidArgs, message: "vapid is not a base64url uncompressed P-256 public key")
        }
        try await checkCallerOwns(service, caller: caller)
        if let caller { owners[service] = caller }
        guard let fleet else {
            logger.notice("push: refused \(service): no broker is configured")
            return (UnifiedPush.registrationFailed, UnifiedPush.FailureReason.actionRequired.rawValue)
        }
        var registration: PushRegistration
        var changed = true
        if let existing = registrations.values.first(where: { $0.service == service && $0.connectorToken == token }) {
            registration = existing
            changed = existing.vapid != vapid || existing.version != version || existing.description != description
            registration.vapid = vapid
            registration.version = version
            registration.description = description
        } else {
            guard registrations.values.filter({ $0.service == service }).count < Self.maximumRegistrationsPerService
            else {
                logger.warning("push: refused \(service): \(Self.maximumRegistrationsPerService) registrations already")
                return (UnifiedPush.registrationFailed, UnifiedPush.FailureReason.internalError.rawValue)
            }
            registration = PushRegistration(
                endpointToken: PushRegistration.makeEndpointToken(), connectorToken: token, service: service,
                description: description, vapid: vapid, version: version, created: FleetLink.now())
        }
        registrations[registration.endpointToken] = registration
        let saved = changed ? await saveRegistrations() : true
        guard saved else {
            return (UnifiedPush.registrationFailed, UnifiedPush.FailureReason.internalError.rawValue)
        }
        logger.info("push: \(service) registered (endpoint token …\(registration.endpointToken.suffix(4)))")
        let endpointToken = registration.endpointToken
        if changed || !published.contains(endpointToken) {
            endpointPending.insert(endpointToken)
            publishRegistration(registration, fleet: fleet)
        } else {
            // Already known to the broker: the endpoint goes out at once, after this reply.
            Task { @MainActor [weak self] in self?.sendNewEndpoint(endpointToken) }
        }
        return (UnifiedPush.registrationSucceeded, nil)
    }

    private func publishRegistration(_ registration: PushRegistration, fleet: FleetLink) {
        let record = PushRegistrationRecord(
            token: registration.endpointToken, app: registration.service, vapid: registration.vapid,
            created: registration.created)
        guard let topic = try? fleet.topics.registration(registration.endpointToken) else { return }
        let token = registration.endpointToken
        fleet.publish(topic, Array(record.encoded()), retain: true) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success:
                self.published.insert(token)
                if self.endpointPending.remove(token) != nil { self.sendNewEndpoint(token) }
            case .failure(let error):
                self.logger.warning("push: cannot publish the registration of …\(token.suffix(4)): \(error)")
            }
        }
    }

    /// On every (re)connect: the broker may have lost retained records (no persistence), and the
    /// ones registered while offline were never published.
    private func republishRegistrations() {
        guard let fleet else { return }
        for registration in registrations.values.sorted(by: { $0.created < $1.created }) {
            publishRegistration(registration, fleet: fleet)
        }
        // The apps' retained states, as they are now; no connector is called for any of this (a
        // reconnect must not start every app).
        for app in daemon.registry.all where app.state != .notRunning { fleet.publishState(app.id, app.state) }
    }

    private func unregister(connectorToken: String, caller: String?) async throws {
        let candidates = registrations.values.filter { $0.connectorToken == connectorToken }
        guard !candidates.isEmpty else { return }
        for registration in candidates {
            let owner = try? await connection.nameOwner(registration.service)
            if let caller, owner == caller {
                await drop(registration, notify: true)
                return
            }
        }
        throw BusError(
            name: "org.freedesktop.DBus.Error.AccessDenied",
            message: "only the owner of the registration's service may unregister it")
    }

    private func drop(_ registration: PushRegistration, notify: Bool) async {
        registrations[registration.endpointToken] = nil
        published.remove(registration.endpointToken)
        queue.drop(token: registration.endpointToken)
        admitHeld()
        _ = await saveRegistrations()
        _ = await saveQueue()
        if let fleet, let topic = try? fleet.topics.registration(registration.endpointToken) {
            // An empty retained message removes the record: gateways answer 404 from now on.
            fleet.publish(topic, [], retain: true)
        }
        logger.info("push: \(registration.service) unregistered")
        guard notify else { return }
        let arguments: [BusValue] =
            registration.version == 2
            ? [.vardict(["token": .string(registration.connectorToken)])] : [.string(registration.connectorToken)]
        _ = try? await callConnector(of: registration, "Unregistered", arguments, timeout: .seconds(5))
    }

    /// Calls the connector of `registration` back (`NewEndpoint`, `Unregistered`): a stopped hosted
    /// app is resumed for the call and not stopped while it is out (it would otherwise time out
    /// unread). `Message` has its own path (``deliver(_:to:)``): it is marked on disk first.
    private func callConnector(
        of registration: PushRegistration, _ member: String, _ arguments: [BusValue], timeout: Duration
    ) async throws {
        let result: Result<Void, any Error> = await daemon.withCallOutstanding(
            to: registration.service,
            {
                await daemon.resumeForCall(registration.service)
                do {
                    _ = try await connection.call(
                        destination: registration.service, path: UnifiedPush.connectorPath,
                        interface: registration.connectorInterface, member: member, arguments: arguments,
                        timeout: timeout)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }, reachedApp: { (try? $0.get()) != nil })
        try result.get()
    }

    /// Only the connection that owns `service` may register or unregister it.
    private func checkCallerOwns(_ service: String, caller: String?) async throws {
        let owner = try? await connection.nameOwner(service)
        guard let caller, owner == caller else {
            throw BusError(
                name: "org.freedesktop.DBus.Error.AccessDenied",
                message: "only the owner of \(service) may register or unregister it")
        }
    }

    private func sendNewEndpoint(_ endpointToken: String) {
        guard let registration = registrations[endpointToken], let fleet else { return }
        let endpoint = fleet.configuration.endpointURL + "/push/" + endpointToken
        let arguments: [BusValue] =
            registration.version == 2
            ? [.vardict(["token": .string(registration.connectorToken), "endpoint": .string(endpoint)])]
            : [.string(registration.connectorToken), .string(endpoint)]
        // A lost one comes again when the connector next registers (every start of the app).
        Task { @MainActor [weak self] in
            do {
                try await self?.callConnector(of: registration, "NewEndpoint", arguments, timeout: .seconds(10))
            } catch {
                self?.logger.notice("push: NewEndpoint to \(registration.service) failed: \(error)")
            }
        }
    }

    // MARK: Pushes from the broker

    private func received(_ envelope: PushEnvelope?, _ message: BrokerMessage, _ acknowledgement: BrokerAcknowledgement)
    {
        guard let envelope else {
            acknowledgement.acknowledge()
            return
        }
        guard registrations[envelope.token] != nil else {
            counters.dropped += 1
            logger.notice(
                "push: dropped \(envelope.id): token …\(envelope.token.suffix(4)) is not registered here",
                metadata: counters.metadata)
            acknowledgement.acknowledge()
            return
        }
        counters.received += 1
        logger.debug("push: \(envelope.id) received", metadata: counters.metadata)
        var arrived = envelope
        // The device's clock decides expiry from here on: a gateway clock ahead of it must not
        // keep a push alive longer than its TTL.
        arrived.received = min(envelope.received, FleetLink.now())
        if direct[envelope.id] != nil {
            // The broker sent it again (a reconnect) while its first copy is with the app: this
            // copy's PUBACK waits for the same answer.
            direct[envelope.id]?.append(acknowledgement)
            return
        }
        if !waitingForWindow.isEmpty || directDeliveries.count >= Self.directWindow {
            waitingForWindow.append((arrived, acknowledgement))
            return
        }
        dispatch(arrived, acknowledgement)
    }

    /// The direct path for a push to a running app, else the queued one; an expired push takes
    /// neither (the broker may hold one past its TTL while the device is offline).
    private func dispatch(_ push: PushEnvelope, _ acknowledgement: BrokerAcknowledgement) {
        if push.expiresAt < FleetLink.now() - PushQueue.expiryGraceMilliseconds {
            counters.expired += 1
            logger.notice(
                "push: \(push.id) expired (TTL \(push.ttl) s) before it could be delivered", metadata: counters.metadata
            )
            acknowledgement.acknowledge()
            return
        }
        if !queue.contains(push.id), let registration = registrations[push.token],
            let owner = directOwner(for: push, of: registration)
        {
            deliverDirectly(push, to: registration, owner: owner, acknowledgement: acknowledgement)
            return
        }
        enqueue(push, acknowledgement)
    }

    /// Dispatches the pushes that waited for room in ``directWindow``, in order.
    private func dispatchWaiting() {
        while !waitingForWindow.isEmpty, directDeliveries.count < Self.directWindow, !isStopping {
            let (push, acknowledgement) = waitingForWindow.removeFirst()
            if direct[push.id] != nil {
                direct[push.id]?.append(acknowledgement)
            } else {
                dispatch(push, acknowledgement)
            }
        }
    }

    /// The queued path: the push is written to `push-queue.json`, then acknowledged, then delivered.
    private func enqueue(_ arrived: PushEnvelope, _ acknowledgement: BrokerAcknowledgement) {
        let envelope = arrived
        switch queue.add(arrived) {
        case .duplicate:
            logger.info("push: \(envelope.id) again (a redelivery); delivered once already or pending")
            // Its first copy may still be on its way to the disk: acknowledged once the queue is written.
            persistThenAcknowledge(acknowledgement, envelope.id, deliver: nil)
            return
        case .replaced(let old):
            logger.info("push: \(envelope.id) replaces \(old) (same topic)")
        case .full:
            // Nothing acknowledged is dropped to make room: without its PUBACK the broker keeps
            // this push, and sends at most its in-flight window more until the queue drains.
            if heldForRoom.isEmpty {
                logger.warning(
                    "push: the queue is full (\(queue.capacity) pushes for this device's apps); the broker keeps \(envelope.id) and what follows until apps take some"
                )
            }
            heldForRoom.append((arrived, acknowledgement))
            return
        case .added:
            break
        }
        persistThenAcknowledge(acknowledgement, envelope.id, deliver: envelope.token)
    }

    /// Takes in the held pushes that fit now (after a delivery, an expiry or an unregistration).
    private func admitHeld() {
        guard !heldForRoom.isEmpty else { return }
        var stillHeld: [(push: PushEnvelope, acknowledgement: BrokerAcknowledgement)] = []
        for held in heldForRoom {
            guard registrations[held.push.token] != nil else {
                held.acknowledgement.acknowledge()
                continue
            }
            switch queue.add(held.push) {
            case .full:
                stillHeld.append(held)
            case .duplicate:
                persistThenAcknowledge(held.acknowledgement, held.push.id, deliver: nil)
            case .added, .replaced:
                persistThenAcknowledge(held.acknowledgement, held.push.id, deliver: held.push.token)
            }
        }
        heldForRoom = stillHeld
    }

    /// The PUBACK leaves only once the queue is on disk. A failed write is tried again (1 s, 2 s, …
    /// 30 s); meanwhile the acknowledgement is held, so the broker keeps the push (and, if the
    /// connection drops, sends it again).
    private func persistThenAcknowledge(_ acknowledgement: BrokerAcknowledgement, _ id: String, deliver token: String?)
    {
        Task { @MainActor [weak self] in
            var backoff = Backoff.stateWrite
            // Once stopping, an unwritten push stays unacknowledged: the broker sends it again.
            while let self, !self.isStopping {
                if await self.saveQueue() {
                    acknowledgement.acknowledge()
                    if let token { self.deliverNext(token) }
                    return
                }
                let delay = backoff.next()
                self.logger.error("push: \(id) could not be written; trying again in \(delay)")
                try? await Task.sleep(for: delay)
            }
        }
    }

    // MARK: Direct delivery to a running app

    /// The unique name to hand `push` to directly, or `nil` when it takes the queued path: the app's
    /// connector must be on the bus (its owner known), the device's state must allow the push's
    /// urgency, and nothing of the registration may wait in the queue or be on its way from it (so
    /// a registration's pushes keep their order).
    private func directOwner(for push: PushEnvelope, of registration: PushRegistration) -> String? {
        let token = registration.endpointToken
        guard !isStopping, conditions.allows(push.urgency), !delivering.contains(token), retryTasks[token] == nil,
            queue.next(for: token) == nil
        else { return nil }
        return owners[registration.service]
    }

    /// Hands a push to a running app's connector without writing it anywhere; the broker gets the
    /// PUBACK once the connector answered.
    ///
    /// Several may be under way at once, to one app or many: D-Bus keeps the order of the calls
    /// from one connection to another, and the broker keeps the PUBACKs in order (libmosquitto
    /// queues each PUBACK as it reads the message; ``BrokerConnection`` writes them once every
    /// message read so far is acknowledged, so the broker's in-flight window is the pipeline).
    /// A connector that answers with an error, or not within ``directMessageTimeout``, sends the
    /// push to the queue: written, acknowledged, and delivered again from there (a connector that
    /// had it after all recognises its id). When lifecycled stops first, the push is left
    /// unacknowledged: the broker keeps it and sends it again to the next lifecycled.
    private func deliverDirectly(
        _ push: PushEnvelope, to registration: PushRegistration, owner: String,
        acknowledgement: BrokerAcknowledgement
    ) {
        direct[push.id] = [acknowledgement]
        directDeliveries[push.id] = Task { @MainActor [weak self] in
            guard let self else { return }
            let outcome = await self.daemon.withCallOutstanding(
                to: registration.service, { await self.handOver(push, to: registration, owner: owner) },
                reachedApp: { $0 == .accepted })
            self.directDeliveries[push.id] = nil
            let acknowledgements = self.direct.removeValue(forKey: push.id) ?? []
            defer { self.dispatchWaiting() }
            switch outcome {
            case .accepted:
                self.queue.recordDelivered(push.id)
                acknowledgements.forEach { $0.acknowledge() }
                self.counters.delivered += 1
                // At debug: an info line per push would cost the direct path more than its write did.
                self.logger.debug(
                    "push: \(push.id) delivered to \(registration.service)", metadata: self.counters.metadata)
            case .stopping:
                self.logger.info(
                    "push: \(push.id) to \(registration.service): lifecycled is stopping before its answer; not acknowledged, so the broker sends it again"
                )
            case .mayHaveReachedTheApp:
                // No answer in time, or the connection broke after the call went out: the
                // connector may have it. At most once, as on the queued path: it counts as
                // delivered, written so before the PUBACK so that no redelivery sends it again.
                self.queue.recordDelivered(push.id)
                self.counters.delivered += 1
                for acknowledgement in acknowledgements {
                    self.persistThenAcknowledge(acknowledgement, push.id, deliver: nil)
                }
            case .refused:
                guard !self.isStopping else { return }
                guard self.registrations[push.token] != nil else {
                    // Unregistered while the call was out: nothing would deliver it from the queue.
                    self.counters.dropped += 1
                    self.logger.notice(
                        "push: dropped \(push.id): its registration ended while it was on its way",
                        metadata: self.counters.metadata)
                    acknowledgements.forEach { $0.acknowledge() }
                    return
                }
                // The queue's path from here: written, acknowledged, delivered (or launched for).
                for acknowledgement in acknowledgements { self.enqueue(push, acknowledgement) }
            }
        }
    }

    private enum DirectOutcome {
        case accepted
        /// No answer in time, or the connection broke after the call went out.
        case mayHaveReachedTheApp
        /// An error answer, or the call could not go out.
        case refused
        case stopping
    }

    private func handOver(_ push: PushEnvelope, to registration: PushRegistration, owner: String) async
        -> DirectOutcome
    {
        // A hosted app that lifecycled stopped (suspended) is resumed first.
        _ = await daemon.prepareForPush(registration.service, nameOwned: true)
        guard !Task.isCancelled else { return .stopping }
        let reply = connection.send(
            destination: owner, path: UnifiedPush.connectorPath, interface: registration.connectorInterface,
            member: "Message", arguments: messageArguments(push, registration), timeout: Self.directMessageTimeout)
        do {
            _ = try await reply.value()
            return .accepted
        } catch is CancellationError {
            return .stopping
        } catch {
            if let error = error as? BusError,
                [BusError.Name.serviceUnknown, BusError.Name.nameHasNoOwner].contains(error.name)
            {
                if owners[registration.service] == owner { owners[registration.service] = nil }
            }
            if Self.mayHaveReachedTheApp(error) {
                logger.warning(
                    "push: \(push.id) to \(registration.service): \(error); it may have reached the app, so it is not sent again"
                )
                return .mayHaveReachedTheApp
            }
            logger.notice("push: \(push.id) to \(registration.service): \(error); queued instead")
            return .refused
        }
    }

    /// The `Message` call's arguments for a registration's connector version.
    private func messageArguments(_ push: PushEnvelope, _ registration: PushRegistration) -> [BusValue] {
        registration.version == 2
            ? [
                .vardict([
                    "token": .string(registration.connectorToken), "message": UnifiedPush.byteArray(push.body),
                    "id": .string(push.id),
                ])
            ] : [.string(registration.connectorToken), UnifiedPush.byteArray(push.body), .string(push.id)]
    }

    /// A name changed hands: the owners' record follows, and a registered service that appeared
    /// gets its waiting pushes.
    private func ownerChanged(_ name: String, to owner: String) {
        guard !owner.isEmpty else {
            owners[name] = nil
            return
        }
        if registrations.values.contains(where: { $0.service == name }) { owners[name] = owner }
        serviceAppeared(name)
    }

    // MARK: Delivery

    private func deliverAll() {
        for token in queue.waitingTokens { deliverNext(token) }
    }

    private func serviceAppeared(_ name: String) {
        for registration in registrations.values where registration.service == name {
            backoff[registration.endpointToken] = nil
            failures[registration.endpointToken] = nil
            retryTasks.removeValue(forKey: registration.endpointToken)?.cancel()
            deliverNext(registration.endpointToken)
        }
    }

    private func deliverNext(_ endpointToken: String) {
        guard !isStopping, !delivering.contains(endpointToken), retryTasks[endpointToken] == nil else { return }
        let expired = queue.dropExpired(nowMilliseconds: FleetLink.now())
        for push in expired {
            counters.expired += 1
            logger.notice(
                "push: \(push.id) expired (TTL \(push.ttl) s) before it could be delivered", metadata: counters.metadata
            )
        }
        if !expired.isEmpty {
            Task { _ = await saveQueue() }
            admitHeld()
        }
        guard let registration = registrations[endpointToken] else { return }
        // The oldest push the device's state allows; held ones do not block more urgent ones.
        let conditions = self.conditions
        guard let push = queue.next(for: endpointToken, where: { conditions.allows($0.urgency) }) else {
            if let held = queue.next(for: endpointToken) {
                logger.info("push: \(held.id) (\(held.urgency.rawValue)) waits: \(conditions)")
            }
            return
        }
        delivering.insert(endpointToken)
        deliveries[endpointToken] = Task { @MainActor [weak self] in
            guard let self else { return }
            let outcome = await self.deliver(push, to: registration)
            self.delivering.remove(endpointToken)
            self.deliveries[endpointToken] = nil
            if self.isStopping {
                // Recorded, for the last write before the daemon goes; nothing new starts.
                if outcome == .delivered { self.queue.complete(push.id) }
                return
            }
            switch outcome {
            case .delivered:
                self.backoff[endpointToken] = nil
                self.failures[endpointToken] = nil
                self.queue.complete(push.id)
                Task { _ = await self.saveQueue() }
                self.admitHeld()
                self.deliverNext(endpointToken)
            case .launched:
                // Its name's owner change delivers it; it may have come already.
                if (try? await self.connection.nameOwner(registration.service)) != nil {
                    self.deliverNext(endpointToken)
                } else {
                    self.scheduleRetry(endpointToken, after: .seconds(10))
                }
            case .failed:
                let failures = (self.failures[endpointToken] ?? 0) + 1
                self.failures[endpointToken] = failures
                if failures < Self.attemptsBeforeWaitingForOwner {
                    self.scheduleRetry(endpointToken)
                } else {
                    self.logger.notice(
                        "push: \(registration.service) unreachable \(failures) times; its pushes wait for it to appear")
                }
            }
        }
    }

    private func scheduleRetry(_ endpointToken: String, after fixedDelay: Duration? = nil) {
        guard !isStopping else { return }
        let delay = fixedDelay ?? backoff[endpointToken, default: .delivery].next()
        retryTasks[endpointToken] = Task { @MainActor [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled, let self else { return }
            self.retryTasks[endpointToken] = nil
            self.deliverNext(endpointToken)
        }
    }

    /// Whether a failed `Message` call may still have reached the connector: a timeout or a
    /// broken connection, as opposed to an error answer (which proves it was not taken).
    static func mayHaveReachedTheApp(_ error: any Error) -> Bool {
        guard let error = error as? BusError else { return true }
        return [BusError.Name.noReply, BusError.Name.disconnected, "org.freedesktop.DBus.Error.Timeout"].contains(
            error.name)
    }

    private enum DeliveryOutcome {
        case delivered
        /// The app was launched for it: the push goes out once the app owns its name.
        case launched
        case failed
    }

    /// One `Message` call; the app is resumed or launched first when lifecycled hosts it.
    ///
    /// While it runs, the daemon does not suspend the app (``LifecycleDaemon/withCallOutstanding(to:_:reachedApp:)``):
    /// an app that finishes the previous push and reports `suspended` would otherwise be stopped
    /// with this `Message` unread, until its 30 s timeout. The push is marked handed over, and
    /// that written, before the call goes out: a SIGKILL from here on does not deliver it twice.
    private func deliver(_ push: PushEnvelope, to registration: PushRegistration) async -> DeliveryOutcome {
        await daemon.withCallOutstanding(
            to: registration.service, { await deliverWhileOutstanding(push, to: registration) },
            reachedApp: { $0 == .delivered })
    }

    private func deliverWhileOutstanding(_ push: PushEnvelope, to registration: PushRegistration) async
        -> DeliveryOutcome
    {
        let owner = try? await connection.nameOwner(registration.service)
        owners[registration.service] = owner
        // Stopping: no app is launched or resumed for a push any more.
        guard !Task.isCancelled else { return .failed }
        guard await daemon.prepareForPush(registration.service, nameOwned: owner != nil) else {
            logger.info("push: \(push.id) waits for \(registration.service) to start")
            return .launched
        }
        let arguments = messageArguments(push, registration)
        let connection = connection
        let interface = registration.connectorInterface
        let timeout = Self.messageTimeout
        let send: @Sendable (String) -> BusPendingReply = { destination in
            connection.send(
                destination: destination, path: UnifiedPush.connectorPath, interface: interface, member: "Message",
                arguments: arguments, timeout: timeout)
        }
        // To a running connector: marked and written first, then sent to that very connection (its
        // unique name), so the mark covers exactly one recipient. The Message leaves from the
        // writer's thread the moment the mark is on disk (no hop through the main actor, which may
        // be busy encoding the next write): a SIGKILL between the two is what would lose it, and
        // that gap is kept as short as the machine allows. To a name with no owner: sent to the
        // name (D-Bus activation may start the app) without a mark, since such a call mostly fails,
        // and a mark taken back after a failure could be lost with a SIGKILL in between.
        let reply: BusPendingReply
        if let owner {
            queue.markHandedOver(push.id)
            let sent = SentMessage()
            guard await saveQueue(afterWrite: { sent.reply = send(owner) }), let pending = sent.reply else {
                queue.unmarkHandedOver(push.id)
                counters.failedDeliveries += 1
                logger.error(
                    "push: \(push.id) stays queued: the queue could not be written before handing it over",
                    metadata: counters.metadata)
                return .failed
            }
            reply = pending
        } else {
            reply = send(registration.service)
        }
        do {
            _ = try await reply.value()
            counters.delivered += 1
            logger.info("push: \(push.id) delivered to \(registration.service)", metadata: counters.metadata)
            return .delivered
        } catch {
            if owner != nil {
                // No answer in time, or the connection broke after the call went out: the
                // connector may have it. At most once: it counts as delivered.
                if error is CancellationError {
                    counters.delivered += 1
                    logger.info(
                        "push: \(push.id) to \(registration.service): lifecycled is stopping before its answer; it may have reached the app, so it is not sent again"
                    )
                    return .delivered
                }
                if Self.mayHaveReachedTheApp(error) {
                    counters.delivered += 1
                    logger.warning(
                        "push: \(push.id) to \(registration.service): \(error); it may have reached the app, so it is not sent again"
                    )
                    return .delivered
                }
                // An error answer (the connector refused it, or it left the bus): the mark is
                // taken back on disk, then the push is tried again.
                queue.unmarkHandedOver(push.id)
                _ = await saveQueue()
            }
            counters.failedDeliveries += 1
            logger.notice(
                "push: \(push.id) not delivered to \(registration.service) yet: \(error)", metadata: counters.metadata)
            return .failed
        }
    }
}

/// The reply of a `Message` sent from the queue writer's thread, handed back to the main actor.
private final class SentMessage: Sendable {
    private let pending = Mutex<BusPendingReply?>(nil)

    var reply: BusPendingReply? {
        get { pending.withLock { $0 } }
        set { pending.withLock { $0 = newValue } }
    }
}
