internal import CMosquitto
import Logging
import SystemdBus

/// An MQTT 3.1.1 client connection (libmosquitto) driven by a SystemdBus `EventLoop`.
///
/// The connection never creates a thread: every libmosquitto call for its client happens on the
/// loop thread the caller passes. The socket is an IO source of that loop (readable always,
/// writable only while libmosquitto has packets queued), a timer calls `mosquitto_loop_misc` about
/// every keepAlive/4 seconds (at least every second) for PINGREQ and timeouts, and connection
/// attempts are non-blocking (`mosquitto_connect_async`, `mosquitto_reconnect_async`; a host name
/// is resolved with a blocking `getaddrinfo` on the loop thread, so prefer addresses or a local
/// resolver). After a disconnect the old fd's watch is removed as libmosquitto reports it (before
/// a new socket can reuse the number), attempts follow with exponential backoff and jitter
/// (``BrokerConfiguration/minimumReconnectDelay`` doubling up to
/// ``BrokerConfiguration/maximumReconnectDelay``), and the new fd is watched.
///
/// ## Events
///
/// Set a handler with ``setEventHandler(_:)`` (called on the loop thread, in order) and/or read
/// ``events`` (one consumer; it finishes when the connection stops). Set handlers before
/// ``start()``.
///
/// ## Subscriptions and publishes
///
/// ``subscribe(_:qos:)`` is remembered and sent again after every CONNACK. A publish made while
/// not connected is queued (with the QoS 1 publishes still awaiting their PUBACK at most
/// ``BrokerConfiguration/maximumQueuedPublishes``; beyond, it fails with
/// ``BrokerError/Code/queueFull``) and handed to libmosquitto after the next CONNACK. A QoS 1
/// publish handed to libmosquitto stays with it until its PUBACK: libmosquitto sends it again
/// (DUP) after any reconnect, whether or not the session was present, so the connection never
/// sends it twice itself. Completion comes at PUBACK (QoS 1) or once written (QoS 0).
///
/// ## Acknowledgement gating
///
/// A message is acknowledged to the broker only after it is persisted locally or delivered.
/// libmosquitto queues a QoS 1 message's PUBACK *before* it calls the message callback; in
/// threaded mode nothing is written until this connection calls `mosquitto_loop_write`. So from
/// the moment a QoS 1 message is handed over until every ``BrokerAcknowledgement`` of the
/// connection is given, the connection writes nothing: no PUBACK, of that message or of a later
/// one, reaches the broker early. It goes on reading, so messages that arrive meanwhile are handed
/// over too and their holder can make them safe together (one group commit, not one `fsync` each);
/// the broker's in-flight window (QoS 1 messages without PUBACK, `max_inflight_messages`) bounds
/// how many. The last ``BrokerAcknowledgement/acknowledge()`` writes every queued PUBACK, in order.
///
/// While gated, nothing else is written either: publishes wait, and so does the PINGREQ that
/// `mosquitto_loop_misc` queues. A holder must therefore acknowledge well within 1.5 × keepAlive,
/// or the broker drops the connection; libmosquitto itself gives up after keepAlive without a
/// PINGRESP. Either way, and whenever the connection drops with acknowledgements outstanding,
/// the broker redelivers the unacknowledged messages on the next connection of the persistent
/// session (at least once: deduplicate by an id in the payload); the old acknowledgements then
/// do nothing. ``setMessageHandler(acknowledgingImmediately:)`` is for callers that need no gating.
public final class BrokerConnection: Sendable {
    /// The configuration it connects with.
    public let configuration: BrokerConfiguration
    /// The loop whose thread runs every libmosquitto call of this connection.
    public let loop: EventLoop
    /// The connection's events, for one async consumer; finishes when the connection stops
    /// (the newest 256 are buffered).
    public let events: AsyncStream<BrokerConnectionEvent>
    private let core: LoopBoundBox<ConnectionCore>

    /// Creates a connection; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - configuration: The broker and the client's settings.
    ///   - loop: The event loop to run on (the caller owns and shuts it down, after stopping this).
    ///   - logger: Where the connection and libmosquitto's own log (at debug) go.
    public init(configuration: BrokerConfiguration, loop: EventLoop, logger: Logger) {
        self.configuration = configuration
        self.loop = loop
        let (stream, continuation) = AsyncStream.makeStream(
            of: BrokerConnectionEvent.self, bufferingPolicy: .bufferingNewest(256))
        self.events = stream
        var logger = logger
        logger[metadataKey: "mqtt-client"] = "\(configuration.clientID)"
        let box = LoopBoundBox.makeBoxSendingValue(
            ConnectionCore(configuration: configuration, loop: loop, logger: logger, continuation: continuation),
            eventLoop: loop)
        // The core's way back to its box, for the closures it gives the loop; queued first, so it
        // is in place before anything else this connection hands the loop (start, handlers, stop).
        loop.perform { box.value.box = box }
        self.core = box
    }

    deinit {
        let core = core
        loop.perform { core.value.stop() }
    }

    /// Sets the handler of connection events, called on the loop thread.
    ///
    /// - Parameters:
    ///   - handler: Called with each event, in order; it must return quickly.
    public func setEventHandler(_ handler: @escaping @Sendable (BrokerConnectionEvent) -> Void) {
        let core = core
        loop.perform { core.value.eventHandler = handler }
    }

    /// Sets the handler of incoming messages, with acknowledgement gating.
    ///
    /// Called on the loop thread for each message, in order. For a QoS 1 message the connection
    /// stays gated until the acknowledgement is given (see "Acknowledgement gating" above).
    ///
    /// - Parameters:
    ///   - handler: Called with the message and its acknowledgement; it must return quickly and
    ///     call ``BrokerAcknowledgement/acknowledge()`` (now or later, from any thread) once the
    ///     message is safe.
    public func setMessageHandler(_ handler: @escaping @Sendable (BrokerMessage, BrokerAcknowledgement) -> Void) {
        let core = core
        loop.perform {
            core.value.messageHandler = handler
            core.value.gatesMessages = true
        }
    }

    /// Sets a handler of incoming messages that are acknowledged at once (no gating).
    ///
    /// - Parameters:
    ///   - handler: Called on the loop thread with each message, in order.
    public func setMessageHandler(acknowledgingImmediately handler: @escaping @Sendable (BrokerMessage) -> Void) {
        let core = core
        loop.perform {
            core.value.messageHandler = { message, _ in handler(message) }
            core.value.gatesMessages = false
        }
    }

    /// Starts connecting (and reconnecting whenever the connection drops, until ``stop()``).
    ///
    /// Suspends until the loop has set the client up, not until the connection is up.
    ///
    /// - Throws: ``BrokerError`` for an invalid configuration (keep-alive, delays, TLS files), a
    ///   client libmosquitto cannot create, or a second start; with
    ///   ``BrokerError/Code/libraryUnavailable`` if libmosquitto is not installed (it is loaded
    ///   here, on first use, not at process start).
    public func start() async throws {
        let core = core
        try await loop.run { try core.value.start() }
    }

    /// Disconnects cleanly (DISCONNECT, so the broker discards the Last Will) and ends the connection.
    ///
    /// Returns at once. Publishes still queued or awaiting their PUBACK fail with
    /// ``BrokerError/Code/stopped``. With acknowledgements outstanding, writing the DISCONNECT
    /// would first write their PUBACKs; the connection then closes without it instead, like
    /// ``abort()``, and the broker redelivers those messages.
    public func stop() {
        let core = core
        loop.perform { core.value.stop() }
    }

    /// Drops the socket without DISCONNECT (the broker publishes the Last Will) and ends the
    /// connection; returns at once. For tests and for a process about to end abruptly anyway.
    public func abort() {
        let core = core
        loop.perform { core.value.abort() }
    }

    /// Subscribes to a topic filter, now if connected and again after every (re)connect.
    ///
    /// - Parameters:
    ///   - filter: An MQTT topic filter (`+` and `#` wildcards allowed).
    ///   - qos: The maximum QoS to receive with: 0 or 1.
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/invalidArgument`` for an invalid filter or QoS,
    ///   ``BrokerError/Code/libraryUnavailable`` if libmosquitto is not installed.
    public func subscribe(_ filter: String, qos: Int = 1) throws {
        guard (0...1).contains(qos) else { throw BrokerError(.invalidArgument, "QoS must be 0 or 1") }
        let mosquitto = try MosquittoLibrary.functions()
        guard !filter.utf8.contains(0), mosquitto.sub_topic_check2(filter, filter.utf8.count) == 0,
            mosquitto.validate_utf8(filter, Int32(clamping: filter.utf8.count)) == 0
        else { throw BrokerError(.invalidArgument, "invalid topic filter \"\(filter)\"") }
        let core = core
        loop.perform { core.value.subscribe(filter, qos: Int32(qos)) }
    }

    /// Publishes a message; `completion` runs on the loop thread.
    ///
    /// - Parameters:
    ///   - topic: The topic (no wildcards).
    ///   - payload: The payload (at most 268,435,455 bytes).
    ///   - qos: 0 or 1.
    ///   - retain: Whether the broker keeps it as the topic's retained message.
    ///   - completion: Called with success at PUBACK (QoS 1) or once written (QoS 0); with a
    ///     ``BrokerError`` for an invalid topic or payload, a full queue, a stop first, or a
    ///     libmosquitto that is not installed.
    public func publish(
        topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false,
        completion: @escaping @Sendable (Result<Void, BrokerError>) -> Void
    ) {
        guard (0...1).contains(qos) else {
            return completion(.failure(BrokerError(.invalidArgument, "QoS must be 0 or 1")))
        }
        let mosquitto: cmosquitto_functions
        do { mosquitto = try MosquittoLibrary.functions() } catch { return completion(.failure(error)) }
        guard !topic.utf8.contains(0), mosquitto.pub_topic_check2(topic, topic.utf8.count) == 0,
            mosquitto.validate_utf8(topic, Int32(clamping: topic.utf8.count)) == 0
        else { return completion(.failure(BrokerError(.invalidArgument, "invalid topic \"\(topic)\""))) }
        guard payload.count <= 268_435_455 - 2 - topic.utf8.count - 2 else {
            return completion(.failure(BrokerError(.invalidArgument, "payload too large")))
        }
        let request = OutgoingPublish(
            sequence: 0, topic: topic, payload: payload, qos: Int32(qos), retain: retain, completion: completion)
        let core = core
        let accepted = loop.perform { core.value.publish(request) }
        if !accepted { completion(.failure(BrokerError(.stopped, "the event loop has shut down"))) }
    }

    /// Publishes a message and waits for its completion (PUBACK for QoS 1, written for QoS 0).
    ///
    /// - Parameters:
    ///   - topic: The topic (no wildcards).
    ///   - payload: The payload.
    ///   - qos: 0 or 1.
    ///   - retain: Whether the broker keeps it as the topic's retained message.
    /// - Throws: ``BrokerError`` as ``publish(topic:payload:qos:retain:completion:)`` reports it.
    public func publish(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            publish(topic: topic, payload: payload, qos: qos, retain: retain) { result in
                continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// How many acknowledgements of the current connection are outstanding (0: not gated).
    ///
    /// - Returns: The count, read on the loop thread.
    public func outstandingAcknowledgements() async throws -> Int {
        let core = core
        return try await loop.run { core.value.outstanding.count }
    }
}
