import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The HTTP/1.1 listener: NIO's server pipeline and one ``PushHTTPHandler`` per connection.
///
/// ``quiesce(timeout:)`` is the graceful stop: the listening socket closes, every connection gets
/// NIO's `ChannelShouldQuiesceEvent` (an idle one closes at once, a busy one after its response),
/// and the call returns when all have closed, or closes the rest after `timeout`.
final class GatewayServer: Sendable {
    private let group: any EventLoopGroup
    private let gateway: PushGateway
    private let connections = ConnectionSet()
    private let listener = Mutex<(any Channel)?>(nil)

    /// Creates a server that is not listening yet.
    ///
    /// - Parameters:
    ///   - group: The event loops of the listener and its connections.
    ///   - gateway: The request logic.
    init(group: any EventLoopGroup, gateway: PushGateway) {
        self.group = group
        self.gateway = gateway
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
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .childChannelInitializer { channel in
                guard connections.insert(channel) else {
                    return channel.close()
                }
                channel.closeFuture.whenComplete { _ in connections.remove(channel) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withPipeliningAssistance: true, withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(PushHTTPHandler(gateway: gateway))
                }
            }
            .bind(host: host, port: port)
            .get()
        listener.withLock { $0 = channel }
        guard let address = channel.localAddress else { throw GatewayStartError("the listener has no address") }
        return address
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

/// The open connections, so a graceful stop can reach them.
private final class ConnectionSet: Sendable {
    private struct State {
        var channels: [ObjectIdentifier: any Channel] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// Adds a new connection; `false` once the server is stopping (the caller closes it).
    func insert(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            state.channels[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    /// Forgets a closed connection.
    func remove(_ channel: any Channel) {
        _ = state.withLock { $0.channels.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    /// Refuses later connections and returns the open ones.
    func closeToNewcomers() -> [any Channel] {
        state.withLock { state in
            state.closed = true
            return Array(state.channels.values)
        }
    }
}
