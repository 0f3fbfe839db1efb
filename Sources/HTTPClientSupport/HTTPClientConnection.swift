import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// One HTTP/1.1 connection over TCP or TLS on swift-nio (`ClientBootstrap`, swift-nio-ssl's client
/// handler with ``HTTPClientTLS``, NIO's HTTP/1.1 client handlers, `NIOAsyncChannel`): requests one
/// after another, kept alive while the server agrees.
///
/// What an app server needs to POST to a push gateway, no more: `lifecyclectl push` sends one request
/// (to an `https://` gateway, or an `http://` one on a private network), the benchmark many over a
/// few keep-alive connections. No redirects, no chunked request bodies.
///
/// The connection lives for the scope of ``withConnection(host:port:tls:timeout:isolation:_:)`` and
/// is closed when it returns:
///
/// ```swift
/// let response = try await HTTPClientConnection.withConnection(host: "127.0.0.1", port: 8080) {
///     try await $0.send(HTTPClientRequest(path: "/push/token", headers: headers, body: body))
/// }
/// ```
package final class HTTPClientConnection {
    /// The most a response body may hold.
    package static let maximumBodySize = 1 << 20

    private let hostHeader: String
    private let host: String
    private let tls: HTTPClientTLS?
    private let errors: FirstErrorRecorder
    private var inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>

    /// Whether another request may follow: `false` once the server said `Connection: close`, or
    /// a request failed (the connection is then in an unknown state).
    package private(set) var isReusable = true

    private init(
        host: String, hostHeader: String, tls: HTTPClientTLS?, errors: FirstErrorRecorder,
        inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator,
        outbound: NIOAsyncChannelOutboundWriter<HTTPClientRequestPart>
    ) {
        self.host = host
        self.hostHeader = hostHeader
        self.tls = tls
        self.errors = errors
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Connects to `host:port`, runs `body` with the connection, and closes it.
    ///
    /// - Parameters:
    ///   - host: A host name or address (an IPv6 literal without brackets).
    ///   - port: The TCP port.
    ///   - tls: TLS to speak over the connection (`https://`), or `nil` for plain HTTP.
    ///   - timeout: The limit for connecting, and for each request until its whole response.
    ///   - isolation: Where `body` runs (the caller's actor).
    ///   - body: What to do with the connection.
    /// - Returns: What `body` returned.
    /// - Throws: ``HTTPClientError`` when it cannot connect; what `body` throws.
    package static func withConnection<Result: Sendable>(
        host: String, port: Int, tls: HTTPClientTLS? = nil, timeout: Duration = .seconds(10),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (HTTPClientConnection) async throws -> Result
    ) async throws -> Result {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        let errors = FirstErrorRecorder()
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connectTimeout(TimeAmount(timeout))
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .connect(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        if let tls {
                            try channel.pipeline.syncOperations.addHandler(try tls.makeHandler(host: host))
                            try channel.pipeline.syncOperations.addHandler(errors)
                        }
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        try channel.pipeline.syncOperations.addHandler(ResponseDeadlineHandler(limit: timeout))
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                            wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw HTTPClientError.cannotConnect(host: host, port: port, timeout: timeout, error)
        }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let hostHeader = port == (tls == nil ? 80 : 443) ? bracketed : "\(bracketed):\(port)"
        // Nonisolated code in the scope runs on the connection's loop (EventLoopTaskExecutor).
        return try await withTaskExecutorPreference(
            EventLoopTaskExecutor(channel.channel.eventLoop), isolation: isolation
        ) {
            try await channel.executeThenClose(isolation: isolation) { inbound, outbound in
                let connection = HTTPClientConnection(
                    host: host, hostHeader: hostHeader, tls: tls, errors: errors, inbound: inbound.makeAsyncIterator(),
                    outbound: outbound)
                return try await body(connection)
            }
        }
    }

    /// Sends `request` and waits for its whole response (within the connection's time limit).
    ///
    /// - Throws: ``HTTPClientError`` when the connection is no longer usable, the server's TLS
    ///   certificate is not trusted (`certificateNotTrusted`), the server closed it or sent a body over ``maximumBodySize`` before a complete response, or the time ran out.
    package func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard isReusable else {
            throw HTTPClientError(.connectionNotReusable, "the connection can take no more requests")
        }
        // Usable again only if this exchange completes and the server keeps the connection.
        isReusable = false
        do {
            return try await exchange(request)
        } catch let error as HTTPClientError {
            throw error
        } catch {
            // The handshake's own error, when the request failed on the channel it closed.
            for cause in [error, errors.error].compactMap({ $0 }) {
                if let untrusted = tls?.untrustedCertificate(in: cause, host: host) { throw untrusted }
            }
            throw HTTPClientError(.exchangeFailed, "the exchange failed", underlying: error)
        }
    }

    private func exchange(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.path)
        head.headers.add(name: "Host", value: hostHeader)
        for (name, value) in request.headers { head.headers.add(name: name, value: value) }
        head.headers.add(name: "Content-Length", value: "\(request.body.count)")
        if request.closesConnection { head.headers.add(name: "Connection", value: "close") }
        try await outbound.write(
            contentsOf: [.head(head), .body(.byteBuffer(ByteBuffer(bytes: request.body))), .end(nil)])

        var responseHead: HTTPResponseHead?
        var body = ByteBuffer()
        while let part = try await inbound.next() {
            switch part {
            case .head(let received):
                responseHead = received
            case .body(var chunk):
                guard body.readableBytes + chunk.readableBytes <= Self.maximumBodySize else {
                    throw HTTPClientError(.responseTooLarge, "the response body is over \(Self.maximumBodySize) bytes")
                }
                body.writeBuffer(&chunk)
            case .end:
                guard let responseHead else { continue }
                isReusable = responseHead.isKeepAlive && !request.closesConnection
                var headers: [String: String] = [:]
                for (name, value) in responseHead.headers { headers[name.lowercased()] = value }
                return HTTPClientResponse(
                    status: Int(responseHead.status.code), reason: responseHead.status.reasonPhrase,
                    headers: headers, body: Array(body.readableBytesView))
            }
        }
        throw HTTPClientError(.incompleteResponse, "the server closed the connection without a complete response")
    }
}
