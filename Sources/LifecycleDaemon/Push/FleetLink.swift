import AppLifecycle
import BrokerLink
import FleetProtocol
import FoundationEssentials
import LifecycledProtocol
import Logging
import SystemdBus

/// lifecycled's connection to the fleet's MQTT broker (libmosquitto on lifecycled's event loop).
///
/// - A persistent session (`clean_session=false`, a stable client id) and QoS 1, so the broker
///   queues pushes while the device is offline.
/// - Presence: a retained `offline` Last Will on `…/<device>/presence`, a retained `online`
///   after every CONNACK.
/// - Pushes on `…/<device>/push` reach ``onPush`` in order, each with its acknowledgement: the
///   broker gets the PUBACK only once the distributor has written the push to disk.
/// - The apps' states (retained, per app) and lifecycle notifications (not retained) are
///   published under the device's topic, so an operator sees the fleet.
@MainActor
final class FleetLink {
    let configuration: FleetConfiguration
    let topics: FleetTopics
    let connection: BrokerConnection
    private(set) var isConnected = false
    /// A push arrived (or a message on the push topic that is not one: `nil`).
    var onPush: @MainActor (PushEnvelope?, BrokerMessage, BrokerAcknowledgement) -> Void = { _, _, ack in
        ack.acknowledge()
    }
    /// The broker accepted a connection (after `online` was queued).
    var onConnected: @MainActor () -> Void = {}
    private let logger: Logger
    private var task: Task<Void, Never>?

    private enum Incoming: Sendable {
        case event(BrokerConnectionEvent)
        case message(BrokerMessage, BrokerAcknowledgement)
    }

    init(configuration: FleetConfiguration, loop: EventLoop, logger: Logger) throws {
        self.configuration = configuration
        self.topics = try FleetTopics(device: configuration.deviceID)
        var broker = configuration.broker
        broker.will = BrokerWill(topic: topics.presence, payload: FleetTopics.offline, qos: 1, retain: true)
        self.connection = BrokerConnection(configuration: broker, loop: loop, logger: logger)
        self.logger = logger
    }

    func start() async throws {
        let (stream, continuation) = AsyncStream<Incoming>.makeStream()
        connection.setEventHandler { continuation.yield(.event($0)) }
        connection.setMessageHandler { message, acknowledgement in
            continuation.yield(.message(message, acknowledgement))
        }
        try connection.subscribe(topics.push, qos: 1)
        task = Task { @MainActor [weak self] in
            for await item in stream {
                guard let self else { return }
                self.handle(item)
            }
        }
        try await connection.start()
        logger.info(
            "fleet: device \(configuration.deviceID), broker \(configuration.broker.url) as \(configuration.broker.username ?? "-")"
        )
    }

    func stop() {
        // A clean stop is not a crash: the device says so itself rather than through the Will.
        connection.publish(topic: topics.presence, payload: FleetTopics.offline, qos: 1, retain: true) { _ in }
        connection.stop()
        task?.cancel()
    }

    private func handle(_ item: Incoming) {
        switch item {
        case .event(.connected(let sessionPresent)):
            isConnected = true
            logger.info("fleet: connected to \(configuration.broker.url) (session present: \(sessionPresent))")
            connection.publish(topic: topics.presence, payload: FleetTopics.online, qos: 1, retain: true) {
                [logger] result in
                if case .failure(let error) = result { logger.warning("fleet: cannot publish presence: \(error)") }
            }
            onConnected()
        case .event(.connectionRefused(let error)):
            isConnected = false
            logger.warning(
                "fleet: \(error.explanation(broker: configuration.broker.url, userOption: "username and password-file in [broker] of lifecycled.conf"))"
            )
        case .event(.disconnected(.lost(let error))):
            isConnected = false
            logger.notice(
                "fleet: disconnected, retrying: \(error.explanation(broker: configuration.broker.url, userOption: "username and password-file in [broker] of lifecycled.conf"))"
            )
        case .event(.disconnected(let reason)):
            isConnected = false
            logger.notice("fleet: disconnected (\(reason))")
        case .message(let message, let acknowledgement):
            guard message.topic == topics.push else {
                acknowledgement.acknowledge()
                return
            }
            do {
                onPush(try PushEnvelope.decode(message.payload), message, acknowledgement)
            } catch {
                logger.warning("fleet: dropped a malformed push (\(message.payload.count) bytes): \(error)")
                onPush(nil, message, acknowledgement)
            }
        }
    }

    /// Publishes with QoS 1; the completion comes on the main actor.
    func publish(
        _ topic: String, _ payload: [UInt8], retain: Bool,
        completion: @escaping @MainActor @Sendable (Result<Void, BrokerError>) -> Void = { _ in }
    ) {
        connection.publish(topic: topic, payload: payload, qos: 1, retain: retain) { result in
            Task { @MainActor in completion(result) }
        }
    }

    /// An app's state, retained: `{"app":…,"state":…,"at":<unix ms>}`.
    func publishState(_ id: String, _ state: ApplicationState) {
        guard let topic = try? topics.appState(id) else { return }
        let record: UserInfo = ["app": .string(id), "state": .string(state.rawValue), "at": .int(Self.now())]
        publish(topic, Array(record.json.utf8), retain: true)
    }

    /// An app's lifecycle notification, not retained: `{"app":…,"name":…,"at":<unix ms>}`
    /// (never its userInfo, which is the app's own business).
    func publishNotification(_ id: String, _ name: String) {
        guard let topic = try? topics.appNotifications(id) else { return }
        let record: UserInfo = ["app": .string(id), "name": .string(name), "at": .int(Self.now())]
        publish(topic, Array(record.json.utf8), retain: false)
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Mirrors one of lifecycled's broadcast signals into the fleet: `StateChanged` as the app's
    /// retained state, `Notification` as its notification.
    func mirror(_ member: String, _ arguments: [BusValue]) {
        guard arguments.count >= 3, let id = arguments[0].stringValue else { return }
        switch member {
        case LifecycledProtocol.Signal.stateChanged.name:
            if let state = arguments[2].stringValue.flatMap(ApplicationState.init(rawValue:)) {
                publishState(id, state)
            }
        case LifecycledProtocol.Signal.notification.name:
            if let name = arguments[1].stringValue { publishNotification(id, name) }
        default:
            break
        }
    }
}
