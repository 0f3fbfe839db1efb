import BrokerLink
import FleetProtocol
import FoundationEssentials
import Glibc
import Logging
import ServiceLifecycle
import Synchronization
import SystemdBus

/// The gateway's side of the broker: one ``BrokerConnection`` on a SystemdBus event loop that
/// feeds the ``RegistrationTable`` and publishes accepted messages.
///
/// On every CONNACK the table starts a resync (``RegistrationTable/beginResync()``): the
/// subscription to `applifecycle/v1/+/registrations/+` is sent again and the broker sends every
/// retained record; ``settleDelay`` later the records not seen again are dropped. A publish waits
/// for its PUBACK, at most ``publishTimeout`` (the connection queues publishes while it
/// reconnects; the app server gets 503 rather than a request that hangs).
///
/// As a `Service` (``run()``) it is connected from the start of the service group until its
/// graceful shutdown; the group runs it before the ``GatewayServer``, so it stops after the
/// server has finished the requests in flight, whose publishes need it.
final class BrokerPushLink: PushPublisher, Service {
    /// How long after CONNACK the retained registrations count as all received.
    static let settleDelay: Duration = .seconds(2)
    /// How long a publish may wait for its PUBACK before the request gets 503.
    static let publishTimeout: Duration = .seconds(10)

    private let connection: BrokerConnection
    private let registrations: RegistrationTable
    private let logger: Logger
    private let metrics: GatewayMetrics
    private let status = Mutex(BrokerStatus.connecting)
    /// Counts connections, so a settle timer of an earlier one does nothing.
    private let connectionCount = Atomic<UInt64>(0)
    /// When the last registration message arrived (monotonic nanoseconds): the resync ends once
    /// they have stopped for ``settleDelay``, however long the retained burst of a large fleet takes.
    private let lastRegistration = Atomic<UInt64>(0)

    /// The broker's URL, for messages.
    private let brokerURL: String

    /// Creates the link; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: The broker and the gateway's credentials.
    ///   - loop: The loop the connection runs on (the caller shuts it down after ``stop()``).
    ///   - registrations: The table to keep up to date.
    ///   - logger: The gateway's log.
    ///   - metrics: Where the connection's state and the number of registrations are recorded.
    init(
        configuration: BrokerConfiguration, loop: EventLoop, registrations: RegistrationTable, logger: Logger,
        metrics: GatewayMetrics = GatewayMetrics()
    ) {
        self.connection = BrokerConnection(configuration: configuration, loop: loop, logger: logger)
        self.brokerURL = configuration.url
        self.registrations = registrations
        self.logger = logger
        self.metrics = metrics
        metrics.brokerConnected(false)
        metrics.registrations(registrations.count)
    }

    /// The connection's state.
    var brokerStatus: BrokerStatus { status.withLock { $0 } }

    /// Subscribes and starts connecting (and reconnecting until ``stop()``).
    ///
    /// - Throws: ``BrokerError`` for a configuration the connection refuses.
    func start() async throws {
        connection.setEventHandler { [self] event in handle(event) }
        connection.setMessageHandler(acknowledgingImmediately: { [self] message in handle(message) })
        try connection.subscribe(FleetTopics.allRegistrations, qos: 1)
        try await connection.start()
    }

    /// Disconnects cleanly (DISCONNECT); returns at once.
    func stop() {
        status.withLock { $0 = .disconnected }
        metrics.brokerConnected(false)
        connection.stop()
    }

    /// Connects (``start()``), stays connected (reconnecting as needed) until the group's graceful
    /// shutdown or cancellation, then disconnects (``stop()``).
    ///
    /// - Throws: ``BrokerError`` for a configuration the connection refuses.
    func run() async throws {
        try await start()
        try? await gracefulShutdown()
        stop()
    }

    private func handle(_ event: BrokerConnectionEvent) {
        switch event {
        case .connected(let sessionPresent):
            let number = connectionCount.add(1, ordering: .relaxed).newValue
            registrations.beginResync()
            status.withLock { $0 = .connected }
            metrics.brokerConnected(true)
            logger.notice("broker connected", metadata: ["session-present": "\(sessionPresent)"])
            lastRegistration.store(Self.monotonicNanoseconds(), ordering: .relaxed)
            Task { [self] in
                let quiet = UInt64(Self.settleDelay.components.seconds) * 1_000_000_000
                while true {
                    try? await Task.sleep(for: Self.settleDelay)
                    guard connectionCount.load(ordering: .relaxed) == number, brokerStatus == .connected else { return }
                    if Self.monotonicNanoseconds() - lastRegistration.load(ordering: .relaxed) >= quiet { break }
                }
                let dropped = registrations.finishResync()
                metrics.registrations(registrations.count)
                logger.info(
                    "registrations loaded",
                    metadata: ["registrations": "\(registrations.count)", "dropped": "\(dropped)"])
            }
        case .connectionRefused(let error):
            status.withLock { $0 = .connecting }
            metrics.brokerConnected(false)
            logger.error(
                "\(error.explanation(broker: brokerURL, userOption: "username and password-file"))",
                metadata: ["error": "\(error)"])
        case .disconnected(.lost(let error)):
            status.withLock { $0 = .connecting }
            metrics.brokerConnected(false)
            logger.warning(
                "broker connection lost, retrying: \(error.explanation(broker: brokerURL, userOption: "username and password-file"))",
                metadata: ["error": "\(error)"])
        case .disconnected:
            status.withLock { $0 = .disconnected }
            metrics.brokerConnected(false)
        }
    }

    private func handle(_ message: BrokerMessage) {
        guard let topic = FleetTopics.parse(message.topic), topic.kind == .registration, let token = topic.key else {
            return logger.notice("unexpected message ignored", metadata: ["topic": "\(message.topic)"])
        }
        lastRegistration.store(Self.monotonicNanoseconds(), ordering: .relaxed)
        let change = registrations.apply(device: topic.device, token: token, payload: message.payload)
        metrics.registrations(registrations.count)
        let metadata: Logger.Metadata = [
            "device": "\(topic.device)", "token": "\(PushGateway.shortened(token))", "retained": "\(message.retain)",
        ]
        switch change {
        case .added, .updated, .removed:
            logger.info("registration \(change)", metadata: metadata)
        case .removedUnknown:
            logger.debug("removal of an unknown registration", metadata: metadata)
        case .conflict(let owner):
            logger.warning(
                "registration ignored: the token belongs to another device",
                metadata: metadata.merging(["owner": "\(owner)"]) { $1 })
        case .rejected(let reason):
            logger.warning("registration rejected", metadata: metadata.merging(["reason": "\(reason)"]) { $1 })
        }
    }

    func publish(_ message: OutgoingPush) async throws {
        let topic = try FleetTopics(device: message.device).push
        let payload = try message.envelope.jsonPayload()
        let once = OneShotContinuation()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            once.set(continuation)
            let timeout = Task {
                try await Task.sleep(for: Self.publishTimeout)
                once.resume(with: .failure(PublishTimedOut()))
            }
            connection.publish(topic: topic, payload: payload, qos: 1, retain: false) { result in
                once.resume(with: result.mapError { $0 as any Error })
                timeout.cancel()
            }
        }
    }
}

extension BrokerPushLink {
    /// Hands the message to the connection; `completion` runs on its loop thread at the PUBACK
    /// (no timeout here: the caller has its own).
    func publish(_ message: OutgoingPush, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        let topic: String
        let payload: [UInt8]
        do {
            topic = try FleetTopics(device: message.device).push
            payload = try message.envelope.jsonPayload()
        } catch {
            completion(.failure(error))
            return
        }
        connection.publish(topic: topic, payload: payload, qos: 1, retain: false) { result in
            completion(result.mapError { $0 as any Error })
        }
    }
}

/// The broker did not acknowledge a publish in time (it may still deliver it later).
struct PublishTimedOut: Error, CustomStringConvertible {
    var description: String { "no PUBACK within \(BrokerPushLink.publishTimeout)" }
}

/// A continuation resumed by whichever of two racing callbacks comes first.
private final class OneShotContinuation: Sendable {
    private let continuation = Mutex<CheckedContinuation<Void, any Error>?>(nil)

    func set(_ continuation: CheckedContinuation<Void, any Error>) {
        self.continuation.withLock { $0 = continuation }
    }

    func resume(with result: Result<Void, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }

}

extension BrokerPushLink {
    /// `CLOCK_MONOTONIC` now, in nanoseconds.
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
