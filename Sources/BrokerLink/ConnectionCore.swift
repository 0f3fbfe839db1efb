internal import CMosquitto
import Glibc
import Logging
import SystemdBus

/// The state and libmosquitto handle of one ``BrokerConnection``, on its loop thread only.
///
/// It lives in a `LoopBoundBox`, so every access from Swift checks the loop thread; libmosquitto
/// reaches it through the userdata pointer of its callbacks, which run synchronously inside the
/// libmosquitto calls this type makes, hence on the loop thread too (the client runs in
/// `mosquitto_threaded_set` mode and nobody calls `mosquitto_loop_start`, so libmosquitto has no
/// thread of its own). No `@unchecked Sendable` is needed: the class is not `Sendable` at all.
///
/// The rule of every entry point (an IO or timer event, a call handed over by the public API):
/// make the libmosquitto calls, then ``settle()``, which reconciles the fd watch with the socket
/// libmosquitto now has, processes a disconnect the callbacks recorded, and only then runs the
/// user's handlers (collected in `deferred`), so no user code runs inside libmosquitto.
final class ConnectionCore {
    enum Phase {
        /// Created, not started.
        case idle
        /// A socket exists (or is being opened) and no CONNACK has accepted it yet.
        case connecting
        /// CONNACK 0 received on the current socket.
        case connected
        /// Between two attempts: no socket, the retry timer armed.
        case waitingToRetry
        /// `stop()` queued a DISCONNECT and waits for it to be written.
        case stopping
        /// Over: the handle is destroyed.
        case stopped
    }

    let configuration: BrokerConfiguration
    let loop: EventLoop
    let logger: Logger
    let continuation: AsyncStream<BrokerConnectionEvent>.Continuation
    /// The box holding this core, for the `@Sendable` closures given to the loop (weak: the box
    /// holds the core).
    weak var box: LoopBoundBox<ConnectionCore>?

    private var mosq: OpaquePointer?
    /// libmosquitto's functions: loaded by ``start()`` before it creates `mosq`, so every call on a handle has them.
    private var mosquitto: cmosquitto_functions { MosquittoLibrary.loaded }
    private(set) var phase = Phase.idle
    private var everConnectCalled = false
    private var io: (token: EventSourceToken, fd: Int32, events: UInt32)?
    private var miscTimer: EventSourceToken?
    private var retryTimer: EventSourceToken?
    private var stopTimer: EventSourceToken?
    /// The delays between attempts (set in `start()`, once the configuration is validated).
    private var reconnectBackoff: Backoff?

    /// Bumped whenever a connection ends: acknowledgements of an older connection are moot.
    private var generation: UInt64 = 0
    private var nextAcknowledgementID: UInt64 = 0
    /// The acknowledgements of this connection's QoS 1 messages not given yet: while non-empty
    /// the connection neither reads nor writes.
    private(set) var outstanding: Set<UInt64> = []

    private var subscriptions: [(filter: String, qos: Int32)] = []
    private var nextSequence: UInt64 = 0
    /// Publishes not handed to libmosquitto yet (made while not connected), in order.
    private var queued: [OutgoingPublish] = []
    /// Publishes handed to libmosquitto, by packet id: QoS 1 until PUBACK, QoS 0 until written.
    private var inFlight: [Int32: OutgoingPublish] = [:]

    /// What the callbacks recorded during the current libmosquitto call, for `settle()`.
    private var lostCode: Int32?
    private var refusedCode: Int32?
    private var justConnected = false
    /// User handlers to run once the current libmosquitto call has returned.
    private var deferred: [() -> Void] = []

    var eventHandler: (@Sendable (BrokerConnectionEvent) -> Void)?
    var messageHandler: (@Sendable (BrokerMessage, BrokerAcknowledgement) -> Void)?
    var gatesMessages = true

    init(
        configuration: BrokerConfiguration, loop: EventLoop, logger: Logger,
        continuation: AsyncStream<BrokerConnectionEvent>.Continuation
    ) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        self.continuation = continuation
    }

    // MARK: - Public operations (loop thread)

    func start() throws {
        loop.assertInEventLoop()
        guard phase == .idle else { throw BrokerError(.invalidArgument, "the connection was already started") }
        try configuration.validate()
        reconnectBackoff = configuration.reconnectBackoff
        let mosquitto = try MosquittoLibrary.functions()
        // The handle's userdata keeps this core alive until mosquitto_destroy (released in teardown).
        let userdata = Unmanaged.passRetained(self).toOpaque()
        guard let m = mosquitto.new(configuration.clientID, configuration.cleanSession, userdata) else {
            Unmanaged<ConnectionCore>.fromOpaque(userdata).release()
            throw BrokerError.system(.invalidConfiguration, "mosquitto_new", errno: errno)
        }
        mosq = m
        do {
            try configure(m)
        } catch {
            mosquitto.destroy(m)
            mosq = nil
            Unmanaged<ConnectionCore>.fromOpaque(userdata).release()
            throw error
        }
        phase = .connecting
        armMiscTimer()
        attemptConnect()
    }

    func subscribe(_ filter: String, qos: Int32) {
        loop.assertInEventLoop()
        subscriptions.removeAll { $0.filter == filter }
        subscriptions.append((filter, qos))
        if phase == .connected, let mosq {
            let rc = mosquitto.subscribe(mosq, nil, filter, qos)
            if rc != MOSQ_ERR_SUCCESS.rawValue { logger.info("\(BrokerError.library(rc, "subscribe \(filter)"))") }
        }
        settle()
    }

    func publish(_ request: OutgoingPublish) {
        loop.assertInEventLoop()
        var request = request
        guard phase != .stopped, phase != .stopping else {
            request.completion(.failure(BrokerError(.stopped, "the connection is stopped")))
            return
        }
        guard queued.count + inFlight.count < configuration.maximumQueuedPublishes else {
            request.completion(
                .failure(
                    BrokerError(.queueFull, "\(configuration.maximumQueuedPublishes) publishes are already waiting")))
            return
        }
        nextSequence += 1
        request.sequence = nextSequence
        queued.append(request)
        flushQueue()
        settle()
    }

    func acknowledge(id: UInt64, generation: UInt64) {
        loop.assertInEventLoop()
        guard generation == self.generation, outstanding.remove(id) != nil else { return }
        guard outstanding.isEmpty, let mosq, mosquitto.socket(mosq) >= 0 else { return }
        // Ungated: the PUBACKs queued since the first held message go out now, in order. Reading
        // once at once also catches TLS records OpenSSL had already buffered (epoll cannot see those).
        if mosquitto.want_write(mosq) { _ = mosquitto.loop_write(mosq, 1) }
        if mosquitto.socket(mosq) >= 0 { _ = mosquitto.loop_read(mosq, 1) }
        settle()
    }

    /// A clean DISCONNECT (no Last Will), then the handle is destroyed.
    func stop() {
        loop.assertInEventLoop()
        switch phase {
        case .stopped, .stopping:
            return
        case .idle:
            teardown(.stopped)
        case .connecting, .waitingToRetry:
            teardown(.stopped)
        case .connected:
            guard outstanding.isEmpty else {
                // Writing the DISCONNECT would write the held PUBACKs first: acknowledge messages
                // nobody persisted. Close without writing instead; the broker redelivers them.
                logger.info(
                    "stop with \(outstanding.count) acknowledgement(s) outstanding: closing without DISCONNECT")
                teardown(.aborted)
                return
            }
            guard let mosq else { return }
            phase = .stopping
            let rc = mosquitto.disconnect(mosq)
            if rc != MOSQ_ERR_SUCCESS.rawValue {
                teardown(.stopped)
                return
            }
            // Bounded: a broker that does not take the DISCONNECT within a second is dropped.
            stopTimer = addTimer(after: .seconds(1)) { core in core.teardown(.stopped) }
            _ = mosquitto.loop_write(mosq, 1)
            settle()
        }
    }

    /// Closes the socket without DISCONNECT (the broker publishes the Last Will) and destroys the handle.
    func abort() {
        loop.assertInEventLoop()
        guard phase != .stopped else { return }
        teardown(.aborted)
    }

    // MARK: - Events from the loop

    private func handleIO(_ revents: UInt32) {
        guard let mosq else { return }
        // Gated (acknowledgements outstanding): nothing is written, so no PUBACK leaves for a
        // message its holder has not made safe, but reading goes on: the messages that arrive
        // meanwhile join the same group commit, and the broker's in-flight window (QoS 1 messages
        // without PUBACK) bounds how many that can be.
        if revents & EventLoop.IOEvents.writable != 0, outstanding.isEmpty {
            // During a TLS handshake loop_write does nothing; loop_read drives the handshake (as
            // libmosquitto's own mosquitto_loop does on writability).
            if configuration.usesTLS && phase == .connecting { _ = mosquitto.loop_read(mosq, 1) }
            if mosquitto.socket(mosq) >= 0 { _ = mosquitto.loop_write(mosq, 1) }
        }
        let readable = EventLoop.IOEvents.readable | EventLoop.IOEvents.hangUp | EventLoop.IOEvents.error
        if revents & readable != 0, mosquitto.socket(mosq) >= 0 {
            _ = mosquitto.loop_read(mosq, 1)
        }
        settle()
    }

    private func handleMiscTimer() {
        guard let mosq else { return }
        if mosquitto.socket(mosq) >= 0 { _ = mosquitto.loop_misc(mosq) }
        armMiscTimer()
        settle()
    }

    // MARK: - libmosquitto callbacks (inside libmosquitto calls; record, do not call back in)

    fileprivate func onConnect(rc: Int32, flags: Int32) {
        if rc == 0 {
            phase = .connected
            reconnectBackoff?.reset()
            justConnected = true
            emit(.connected(sessionPresent: flags & 1 != 0))
        } else {
            refusedCode = rc
            emit(.connectionRefused(BrokerError.refused(rc)))
        }
    }

    fileprivate func onDisconnect(rc: Int32) {
        // libmosquitto has just closed the socket (or is about to return after closing it):
        // stop watching the fd now, before any other socket can take its number.
        detachIO()
        lostCode = rc
    }

    fileprivate func onPublish(mid: Int32) {
        guard let request = inFlight.removeValue(forKey: mid) else { return }
        deferred.append { request.completion(.success(())) }
    }

    fileprivate func onMessage(_ message: UnsafePointer<mosquitto_message>) {
        let raw = message.pointee
        let payload: [UInt8] =
            if let bytes = raw.payload, raw.payloadlen > 0 {
                Array(UnsafeRawBufferPointer(start: bytes, count: Int(raw.payloadlen)))
            } else {
                []
            }
        let delivered = BrokerMessage(
            topic: raw.topic.map { String(cString: $0) } ?? "", payload: payload, qos: Int(raw.qos),
            retain: raw.retain, mid: Int(raw.mid))
        guard let handler = messageHandler else {
            logger.debug("message on \(delivered.topic) with no handler: acknowledged")
            return
        }
        var acknowledgement = BrokerAcknowledgement.none
        if raw.qos > 0, gatesMessages, let box {
            nextAcknowledgementID += 1
            outstanding.insert(nextAcknowledgementID)
            acknowledgement = BrokerAcknowledgement(core: box, id: nextAcknowledgementID, generation: generation)
        }
        let ack = acknowledgement
        deferred.append { handler(delivered, ack) }
    }

    fileprivate func onLog(level: Int32, text: String) {
        logger.debug("libmosquitto: \(text)", metadata: ["level": "\(level)"])
    }

    // MARK: - Internals

    private func configure(_ m: OpaquePointer) throws {
        func check(_ rc: Int32, _ context: String) throws {
            if rc != MOSQ_ERR_SUCCESS.rawValue { throw BrokerError.library(rc, context) }
        }
        // Threaded mode: packet__queue only queues; this connection alone decides when to write.
        try check(mosquitto.threaded_set(m, true), "mosquitto_threaded_set")
        try check(
            mosquitto.int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311), "mosquitto_int_option(protocol)")
        // Small packets (a PUBACK, a push) go out at once: Nagle's algorithm against the peer's
        // delayed ACK added ~40 ms to every other push (the push benchmark's p99).
        try check(mosquitto.int_option(m, MOSQ_OPT_TCP_NODELAY, 1), "mosquitto_int_option(tcp nodelay)")
        if let username = configuration.username {
            try check(mosquitto.username_pw_set(m, username, configuration.password), "mosquitto_username_pw_set")
        }
        if let will = configuration.will {
            try check(
                mosquitto.will_set(
                    m, will.topic, Int32(will.payload.count), will.payload, Int32(will.qos), will.retain),
                "mosquitto_will_set")
        }
        if configuration.usesTLS {
            var caPath: String?
            if configuration.caFile == nil { caPath = "/etc/ssl/certs" }
            try check(
                mosquitto.tls_set(
                    m, configuration.caFile, caPath, configuration.certificateFile, configuration.keyFile, nil),
                "mosquitto_tls_set")
        }
        mosquitto.connect_with_flags_callback_set(m) { _, userdata, rc, flags in
            core(userdata).onConnect(rc: rc, flags: flags)
        }
        mosquitto.disconnect_callback_set(m) { _, userdata, rc in core(userdata).onDisconnect(rc: rc) }
        mosquitto.publish_callback_set(m) { _, userdata, mid in core(userdata).onPublish(mid: mid) }
        mosquitto.message_callback_set(m) { _, userdata, message in
            if let message { core(userdata).onMessage(message) }
        }
        mosquitto.log_callback_set(m) { _, userdata, level, text in
            if let text { core(userdata).onLog(level: level, text: String(cString: text)) }
        }
    }

    private func attemptConnect() {
        guard let mosq else { return }
        // mosquitto__reconnect closes the old socket, and the new one may reuse its number.
        detachIO()
        lostCode = nil
        refusedCode = nil
        phase = .connecting
        let rc: Int32
        if everConnectCalled {
            rc = mosquitto.reconnect_async(mosq)
        } else {
            everConnectCalled = true
            rc = mosquitto.connect_async(
                mosq, configuration.host, Int32(configuration.port), Int32(configuration.keepAlive))
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue && rc != MOSQ_ERR_CONN_PENDING.rawValue {
            // No usable socket (resolution or connect failed): whatever libmosquitto kept is not
            // watched and is closed by the next attempt.
            lostCode = rc
        }
        settle()
    }

    /// Reconciles everything after a libmosquitto call; see the type's documentation.
    private func settle() {
        if let mosq, let io, io.fd != mosquitto.socket(mosq) { detachIO() }
        if phase == .connecting || phase == .connected || phase == .stopping, let mosq {
            if lostCode == nil, mosquitto.socket(mosq) < 0 { lostCode = MOSQ_ERR_CONN_LOST.rawValue }
        }
        if let code = lostCode {
            lostCode = nil
            handleConnectionEnd(code: code)
        } else if justConnected {
            justConnected = false
            if let mosq {
                for subscription in subscriptions {
                    let rc = mosquitto.subscribe(mosq, nil, subscription.filter, subscription.qos)
                    if rc != MOSQ_ERR_SUCCESS.rawValue {
                        logger.info("\(BrokerError.library(rc, "subscribe \(subscription.filter)"))")
                    }
                }
            }
            flushQueue()
        }
        updateIO()
        runDeferred()
    }

    private func handleConnectionEnd(code: Int32) {
        generation += 1
        outstanding.removeAll()
        // QoS 0 publishes whose packet was never written: back to the queue, in order. (QoS 1
        // ones stay with libmosquitto, which sends them again after the next CONNACK.)
        let unsent = inFlight.filter { $0.value.qos == 0 }
        for mid in unsent.keys { inFlight[mid] = nil }
        queued.insert(contentsOf: unsent.values.sorted { $0.sequence < $1.sequence }, at: 0)
        if phase == .stopping {
            teardown(.stopped)
            return
        }
        guard phase == .connecting || phase == .connected else { return }
        let error =
            if let refused = refusedCode { BrokerError.refused(refused) } else {
                BrokerError.library(code, "connection")
            }
        refusedCode = nil
        emit(.disconnected(.lost(error)))
        phase = .waitingToRetry
        scheduleRetry()
    }

    private func scheduleRetry() {
        let delay = reconnectBackoff?.next() ?? configuration.minimumReconnectDelay
        logger.debug("reconnecting in \(delay)")
        retryTimer?.cancel()
        retryTimer = addTimer(after: delay) { core in
            core.retryTimer?.cancel()
            core.retryTimer = nil
            if core.phase == .waitingToRetry { core.attemptConnect() }
        }
    }

    private func flushQueue() {
        guard phase == .connected, let mosq else { return }
        while !queued.isEmpty {
            let request = queued.removeFirst()
            var mid: Int32 = 0
            let rc = request.payload.withUnsafeBytes { bytes in
                mosquitto.publish(
                    mosq, &mid, request.topic, Int32(bytes.count), bytes.baseAddress, request.qos, request.retain)
            }
            switch rc {
            case MOSQ_ERR_SUCCESS.rawValue:
                inFlight[mid] = request
            case MOSQ_ERR_NO_CONN.rawValue where request.qos > 0:
                // libmosquitto keeps a QoS 1 publish made without a socket and sends it after the
                // next CONNACK (message__queue, then message__retry_check): do not queue it again.
                inFlight[mid] = request
            case MOSQ_ERR_NO_CONN.rawValue:
                queued.insert(request, at: 0)
                return
            default:
                let error = BrokerError.library(rc, "publish to \(request.topic)")
                deferred.append { request.completion(.failure(error)) }
            }
        }
    }

    private func updateIO() {
        guard let mosq, phase == .connecting || phase == .connected || phase == .stopping else {
            detachIO()
            return
        }
        let fd = mosquitto.socket(mosq)
        guard fd >= 0 else {
            detachIO()
            return
        }
        // Always readable (a hang-up is read and ends the connection); writable only while
        // something is queued and no acknowledgement is outstanding.
        let writes = mosquitto.want_write(mosq) && outstanding.isEmpty
        let events = EventLoop.IOEvents.readable | (writes ? EventLoop.IOEvents.writable : 0)
        if let io {
            guard io.events != events else { return }
            do {
                try io.token.setIOEvents(events)
                self.io?.events = events
            } catch {
                logger.info("cannot change the socket watch: \(error)")
            }
            return
        }
        guard let box else { return }
        // epoll watches a duplicate that the source owns, not libmosquitto's fd: libmosquitto
        // closes its socket before it reports the disconnect, and a closed fd cannot be removed
        // from epoll (EBADF). While a child spawned at that moment still holds the socket, its
        // registration would outlive the freed source and sd-event would be handed a dangling
        // pointer (its "Code should not be reached" abort in process_epoll, seen here). The
        // duplicate keeps the socket open until the source is gone, and goes with it.
        let watched = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard watched >= 0 else {
            logger.info("cannot duplicate the socket to watch it: errno \(errno)")
            return
        }
        do {
            let token = try loop.addIOOnLoop(fd: watched, events: events, ownsFD: true) { revents in
                box.value.handleIO(revents)
            }
            io = (token, fd, events)
        } catch {
            logger.info("cannot watch the socket: \(error)")
        }
    }

    private func detachIO() {
        io?.token.cancel()
        io = nil
    }

    /// `mosquitto_loop_misc` about every keepAlive/4 (at least every second): PINGREQ on time, and
    /// a connection attempt or a ping without answer times out after keepAlive.
    private func armMiscTimer() {
        let period = Duration.seconds(max(1, configuration.keepAlive / 4))
        if let miscTimer {
            try? miscTimer.rearm(deadline: EventLoop.now(.monotonic) + period)
        } else {
            miscTimer = addTimer(after: period) { core in core.handleMiscTimer() }
        }
    }

    private func addTimer(
        after delay: Duration, _ body: @escaping @Sendable (ConnectionCore) -> Void
    ) -> EventSourceToken? {
        guard let box else { return nil }
        do {
            return try loop.addTimerOnLoop(
                on: .monotonic, deadline: EventLoop.now(.monotonic) + delay, leeway: .milliseconds(50)
            ) { _ in body(box.value) }
        } catch {
            logger.info("cannot add a timer: \(error)")
            return nil
        }
    }

    private func teardown(_ reason: BrokerConnectionEvent.DisconnectReason) {
        let wasLive = phase != .idle && phase != .stopped
        detachIO()
        for timer in [miscTimer, retryTimer, stopTimer] { timer?.cancel() }
        miscTimer = nil
        retryTimer = nil
        stopTimer = nil
        if let mosq {
            // Closes the socket (no DISCONNECT is written here) and frees every queued packet.
            mosquitto.destroy(mosq)
            self.mosq = nil
            Unmanaged.passUnretained(self).release()
        }
        phase = .stopped
        generation += 1
        outstanding.removeAll()
        let failed = queued + inFlight.values.sorted { $0.sequence < $1.sequence }
        queued.removeAll()
        inFlight.removeAll()
        let error = BrokerError(.stopped, "the connection was stopped before the publish completed")
        for request in failed { deferred.append { request.completion(.failure(error)) } }
        if wasLive { emit(.disconnected(reason)) }
        let continuation = continuation
        deferred.append { continuation.finish() }
        runDeferred()
    }

    private func emit(_ event: BrokerConnectionEvent) {
        let handler = eventHandler
        let continuation = continuation
        deferred.append {
            handler?(event)
            continuation.yield(event)
        }
    }

    private func runDeferred() {
        while !deferred.isEmpty {
            let work = deferred
            deferred.removeAll()
            for item in work { item() }
        }
    }
}

/// The core behind a libmosquitto callback's userdata (retained by `start()` until teardown).
private func core(_ userdata: UnsafeMutableRawPointer?) -> ConnectionCore {
    Unmanaged<ConnectionCore>.fromOpaque(userdata!).takeUnretainedValue()
}
