import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization
import SystemdBus

/// The HTTP/1.1 listener: NIO's server pipeline and one ``PushHTTPHandler`` per connection, with the
/// ``ConnectionLimits``, over TLS (swift-nio-ssl's `NIOSSLServerHandler`) when it has a TLS context.
///
/// A connection over ``ConnectionLimits/maximumConnections`` is accepted and closed at once rather
/// than left unaccepted: the listen queue keeps draining, so a real client is served the moment a
/// slot frees instead of after a queue of connections their clients may have given up on, and an
/// unlucky one fails at once and can retry (or another instance behind the balancer takes it).
/// `accept` failing for want of descriptors (`EMFILE`, `ENFILE`) pauses accepting for the delays
/// of ``acceptBackoff`` (``AcceptBackoff``): without it the listener stays readable and the loop
/// retries `accept` at full speed.
///
/// ``quiesce(timeout:)`` is the graceful stop: the listening socket closes, every connection gets
/// NIO's `ChannelShouldQuiesceEvent` (an idle one closes at once, a busy one after its response),
/// and the call returns when all have closed, or closes the rest after `timeout`.
///
/// As a `Service` (``run()``) it listens on ``address`` until the service group's graceful
/// shutdown, then quiesces within ``shutdownGrace``.
final class GatewayServer: Service, Sendable {
    /// How long in-flight requests may take after a graceful shutdown began before their
    /// connections are closed.
    static let shutdownGrace: Duration = .seconds(10)

    /// How long accepting pauses after `accept` failed (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`):
    /// 50 ms after a first failure (a passing spike costs little), doubling to 200 ms while they go
    /// on. Five failed `accept`s a second cost nothing, and a freed descriptor is used within 0.2 s.
    static let acceptBackoff = Backoff(initial: .milliseconds(50), maximum: .milliseconds(200))

    /// Where ``run()`` listens.
    let address: ListenAddress
    private let group: any EventLoopGroup
    private let gateway: PushGateway
    private let limits: ConnectionLimits
    private let tls: NIOSSLContext?
    private let logger: Logger
    private let connections: ConnectionSet
    private let listener = Mutex<(any Channel)?>(nil)

    /// Creates a server that is not listening yet.
    ///
    /// - Parameters:
    ///   - address: Where ``run()`` listens (port 0: any free port).
    ///   - group: The event loops of the listener and its connections.
    ///   - gateway: The request logic.
    ///   - limits: The connections' timeouts and their cap.
    ///   - tls: The server's certificate and key, to serve HTTPS; `nil`: plain HTTP.
    ///   - logger: Where refused connections and failed accepts are logged.
    init(
        address: ListenAddress, group: any EventLoopGroup, gateway: PushGateway,
        limits: ConnectionLimits = ConnectionLimits(), tls: NIOSSLContext? = nil, logger: Logger
    ) {
        self.address = address
        self.group = group
        self.gateway = gateway
        self.limits = limits
        self.tls = tls
        self.logger = logger
        self.connections = ConnectionSet(capacity: limits.maximumConnections)
    }

    /// The number of open connections.
    var connectionCount: Int { connections.count }

    /// Listens on ``address`` (logging `listening` with the port it got) until the group's graceful
    /// shutdown, then stops accepting and lets the requests in flight finish (``quiesce(timeout:)``).
    ///
    /// On cancellation (the group's, after the broker link failed) it stops at once: the listener
    /// and every open connection close without waiting.
    ///
    /// - Throws: ``GatewayStartError`` `listener` when it cannot bind (the port is taken, the
    ///   address is not this machine's, the port is privileged).
    func run() async throws {
        let bound: SocketAddress
        do {
            bound = try await start(host: address.host, port: address.port)
        } catch let error as IOError {
            throw GatewayStartError.cannotListen(on: "\(address.host):\(address.port)", errno: error.errnoCode)
        }
        logger.notice(
            "listening",
            metadata: [
                "address": "\(bound)", "port": "\(bound.port ?? 0)", "public-url": "\(gateway.publicURL)",
                "max-connections": "\(limits.maximumConnections)", "tls": "\(tls != nil)",
            ])
        try? await gracefulShutdown()
        logger.notice("stopping")
        await quiesce(timeout: Self.shutdownGrace)
    }

    /// Binds and starts accepting.
    ///
    /// - Parameters:
    ///   - host: The address to listen on (`127.0.0.1`, `::`, …).
    ///   - port: The port; 0 picks a free one.
    /// - Returns: The bound address (with the port picked).
    func start(host: String, port: Int) async throws -> SocketAddress {
        let gateway = self.gateway
        let connections = self.connections
        let limits = self.limits
        let tls = self.tls
        let logger = self.logger
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptBackoff(backoff: Self.acceptBackoff, logger: logger))
                }
            }
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                switch connections.insert(channel) {
                case .admitted:
                    break
                case .stopping:
                    return channel.close()
                case .full(let refusedSinceLastLog):
                    if let refusedSinceLastLog {
                        logger.warning(
                            "connection limit reached: new connections are closed until one ends (logged once a minute)",
                            metadata: [
                                "max-connections": "\(limits.maximumConnections)",
                                "refused-since-last-log": "\(refusedSinceLastLog)",
                            ])
                    }
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in connections.remove(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try Self.configure(channel, gateway: gateway, limits: limits, tls: tls, logger: logger)
                }
            }
            .bind(host: host, port: port)
            .get()
        listener.withLock { $0 = channel }
        guard let address = channel.localAddress else {
            throw GatewayStartError(.listener, "the listener has no address")
        }
        return address
    }

    /// Sets up one connection's pipeline: TLS if asked, the deadlines, NIO's HTTP/1.1 server
    /// handlers, the gateway.
    ///
    /// - Parameters:
    ///   - channel: The connection (on its event loop).
    ///   - gateway: The request logic.
    ///   - limits: The timeouts.
    ///   - tls: The TLS context to serve HTTPS with, or `nil`.
    ///   - logger: Where timeouts are logged.
    package static func configure(
        _ channel: any Channel, gateway: PushGateway, limits: ConnectionLimits, tls: NIOSSLContext? = nil,
        logger: Logger
    ) throws {
        let pipeline = channel.pipeline.syncOperations
        if let tls { try pipeline.addHandler(NIOSSLServerHandler(context: tls)) }
        try pipeline.addHandler(ConnectionDeadlineHandler(limits: limits, logger: logger))
        try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: true)
        try pipeline.addHandler(PushHTTPHandler(gateway: gateway))
    }

    /// Stops accepting, lets in-flight requests finish, and returns once every connection closed
    /// (or was closed after `timeout`).
    func quiesce(timeout: Duration) async {
        let channel = listener.withLock { $0.take() }
        try? await channel?.close()
        let open = connections.closeToNewcomers()
        for connection in open {
            connection.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        await withTaskGroup(of: Bool.self) { tasks in
            tasks.addTask {
                for connection in open { try? await connection.closeFuture.get() }
                return true
            }
            tasks.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let finished = await tasks.next() ?? false
            tasks.cancelAll()
            if !finished {
                for connection in open { try? await connection.close() }
            }
        }
    }
}

/// The open connections, so a graceful stop can reach them, and their cap.
private final class ConnectionSet: Sendable {
    /// What ``insert(_:)`` decided.
    enum Admission {
        /// Counted: serve it.
        case admitted
        /// The server is stopping: close it.
        case stopping
        /// The cap is reached: close it. Log it when `refusedSinceLastLog` is set (at most once a
        /// minute, with how many were refused since the last line), so a flood at the cap, whose
        /// slots free and fill again, does not flood the log too.
        case full(refusedSinceLastLog: Int?)
    }

    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var closed = false
        var refused = 0
        var lastLogged: NIODeadline?
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { state.withLock { $0.channels.count } }

    /// Adds a new connection unless the server is stopping or the cap is reached.
    func insert(_ channel: any Channel) -> Admission {
        state.withLock { state in
            guard !state.closed else { return .stopping }
            guard state.channels.count < capacity else {
                state.refused += 1
                let now = NIODeadline.now()
                guard state.lastLogged.map({ now - $0 >= .minutes(1) }) ?? true else {
                    return .full(refusedSinceLastLog: nil)
                }
                state.lastLogged = now
                defer { state.refused = 0 }
                return .full(refusedSinceLastLog: state.refused)
            }
            state.channels[ObjectIdentifier(channel)] = channel
            return .admitted
        }
    }

    /// Forgets a closed connection.
    func remove(_ channel: any Channel) {
        state.withLock { state in
            state.channels.removeValue(forKey: ObjectIdentifier(channel))
        }
    }

    /// Refuses later connections and returns the open ones.
    func closeToNewcomers() -> [any Channel] {
        state.withLock { state in
            state.closed = true
            return Array(state.channels.values)
        }
    }
}
