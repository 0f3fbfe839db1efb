import NIOCore
import NIOHTTP1
import Synchronization

/// One connection's HTTP/1.1 requests (behind NIO's `configureHTTPServerPipeline`, which delivers
/// them one at a time and holds back pipelined ones until the response has ended).
///
/// A push request is checked as soon as its head arrives ((``PushGateway/admit(token:headers:)``):
/// a bad token, header, declared size or VAPID token is answered before the body is read, and the
/// body that still comes is read and dropped (up to ``discardLimit``, then the connection closes).
/// `Expect: 100-continue` is answered once the head passed. The body is collected up to
/// ``PushGateway/maximumBodySize`` (a chunked body that grows past it gets 413 at once); at its end
/// the publish runs as a task, and its answer is written back on this channel's event loop. Nothing
/// here blocks the loop. Each step is told to ``ConnectionDeadlineHandler`` (``RequestProgress``),
/// which times the head, the body and the idle time between requests.
package final class PushHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = HTTPServerRequestPart
    package typealias OutboundOut = HTTPServerResponsePart

    /// How much of a rejected request's body is read and dropped before the connection is closed
    /// instead (closing with unread data makes the kernel reset the connection, and the client
    /// could lose the answer).
    static let discardLimit = 64 * 1024

    private enum State {
        /// Between requests.
        case idle
        /// Collecting an admitted push's body.
        case collecting(PushAdmission, body: ByteBuffer, version: HTTPVersion, keepAlive: Bool)
        /// A request that is not a push: answered at its end.
        case other(PushGateway.Route, version: HTTPVersion, keepAlive: Bool, discarded: Int)
        /// Answered already; its body is read and dropped. `close`: close at its end.
        case discarding(discarded: Int, close: Bool)
        /// Waiting for the broker's answer.
        case publishing
    }

    private let gateway: PushGateway
    private var state = State.idle

    /// Creates the handler of one connection.
    package init(gateway: PushGateway) {
        self.gateway = gateway
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            context.triggerUserOutboundEvent(RequestProgress.readingBody, promise: nil)
            received(head: head, context: context)
        case .body(let chunk):
            received(body: chunk, context: context)
        case .end:
            context.triggerUserOutboundEvent(RequestProgress.requestEnded, promise: nil)
            receivedEnd(context: context)
        }
    }

    private func received(head: HTTPRequestHead, context: ChannelHandlerContext) {
        let route = PushGateway.route(method: head.method.rawValue, target: head.uri)
        guard case .push(let token) = route else {
            state = .other(route, version: head.version, keepAlive: head.isKeepAlive, discarded: 0)
            return
        }
        let headers = RequestHeaders(head.headers.map { ($0.name, $0.value) })
        let expectsContinue = head.headers["expect"].contains { $0.lowercased() == "100-continue" }
        switch gateway.admit(token: token, headers: headers) {
        case .rejected(let response):
            // A client that asked for 100-continue may never send the body: the framing of the rest
            // of the connection is unknown, so it closes.
            let keepAlive = head.isKeepAlive && !expectsContinue
            state = .discarding(discarded: 0, close: !keepAlive)
            write(response, version: head.version, keepAlive: keepAlive, context: context, closeAfter: false)
        case .admitted(let admission):
            if expectsContinue {
                context.writeAndFlush(
                    wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
            }
            let buffer = context.channel.allocator.buffer(capacity: 0)
            state = .collecting(admission, body: buffer, version: head.version, keepAlive: head.isKeepAlive)
        }
    }

    private func received(body chunk: ByteBuffer, context: ChannelHandlerContext) {
        switch state {
        case .collecting(let admission, var body, let version, let keepAlive):
            guard body.readableBytes + chunk.readableBytes <= PushGateway.maximumBodySize else {
                let response = GatewayResponse.text(413, "the body is larger than \(PushGateway.maximumBodySize) bytes")
                gateway.log(response, token: admission.token)
                state = .discarding(discarded: body.readableBytes + chunk.readableBytes, close: !keepAlive)
                write(response, version: version, keepAlive: keepAlive, context: context, closeAfter: false)
                return
            }
            state = .idle  // drop the reference so the append does not copy
            var chunk = chunk
            body.writeBuffer(&chunk)
            state = .collecting(admission, body: body, version: version, keepAlive: keepAlive)
        case .other(let route, let version, let keepAlive, let discarded):
            let total = discarded + chunk.readableBytes
            if total > Self.discardLimit {
                state = .discarding(discarded: total, close: true)
                write(
                    gateway.respond(to: route), version: version, keepAlive: false, context: context, closeAfter: true)
            } else {
                state = .other(route, version: version, keepAlive: keepAlive, discarded: total)
            }
        case .discarding(let discarded, let close):
            let total = discarded + chunk.readableBytes
            if total > Self.discardLimit {
                state = .discarding(discarded: total, close: true)
                context.close(promise: nil)
            } else {
                state = .discarding(discarded: total, close: close)
            }
        case .idle, .publishing:
            break
        }
    }

    private func receivedEnd(context: ChannelHandlerContext) {
        switch state {
        case .collecting(let admission, let body, let version, let keepAlive):
            let bytes = Array(body.readableBytesView)
            if let failure = gateway.checkBody(bytes, token: admission.token) {
                state = .idle
                write(failure, version: version, keepAlive: keepAlive, context: context, closeAfter: !keepAlive)
                return
            }
            state = .publishing
            let gateway = self.gateway
            let message: OutgoingPush
            switch gateway.outgoing(admission, body: bytes) {
            case .failure(let refusal):
                state = .idle
                write(
                    refusal.response, version: version, keepAlive: keepAlive, context: context, closeAfter: !keepAlive)
                return
            case .success(let built): message = built
            }
            // Published from this loop, answered on it: no task, and the PUBACK's callback (on the
            // broker connection's thread) completes the promise, which hops here once.
            let eventLoop = context.eventLoop
            let promise = eventLoop.makePromise(of: Result<Void, any Error>.self)
            let once = FirstOutcome()
            let timeout = eventLoop.scheduleTask(in: .nanoseconds(Self.nanoseconds(BrokerPushLink.publishTimeout))) {
                if once.claim() { promise.succeed(.failure(PublishTimedOut())) }
            }
            gateway.publisher.publish(message) { result in
                if once.claim() { promise.succeed(result) }
            }
            promise.futureResult.assumeIsolated().whenSuccess { [self] result in
                timeout.cancel()
                let response = gateway.published(message, admission, bodySize: bytes.count, result: result)
                state = .idle
                write(response, version: version, keepAlive: keepAlive, context: context, closeAfter: !keepAlive)
            }
        case .other(let route, let version, let keepAlive, _):
            state = .idle
            write(
                gateway.respond(to: route), version: version, keepAlive: keepAlive, context: context,
                closeAfter: !keepAlive)
        case .discarding(_, let close):
            state = .idle
            if close { context.close(promise: nil) }
        case .idle, .publishing:
            break
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // NIO's HTTPServerProtocolErrorHandler has answered a malformed request with 400 already;
        // anything else (a reset connection) ends this connection.
        context.close(promise: nil)
    }

    /// Writes a whole response; `closeAfter`: closes the connection once it is written.
    private func write(
        _ response: GatewayResponse, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext,
        closeAfter: Bool
    ) {
        var headers = HTTPHeaders()
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        headers.add(name: "Content-Type", value: response.contentType)
        var body = context.channel.allocator.buffer(capacity: response.body.utf8.count)
        body.writeString(response.body)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        if !keepAlive {
            headers.add(name: "Connection", value: "close")
        } else if version.major == 1 && version.minor == 0 {
            headers.add(name: "Connection", value: "keep-alive")
        }
        gateway.metrics.answered(status: response.status)
        let status = HTTPResponseStatus(statusCode: response.status, reasonPhrase: response.reason)
        // Before the end is written: writing it may deliver a pipelined request at once.
        context.triggerUserOutboundEvent(RequestProgress.answered, promise: nil)
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: status, headers: headers))), promise: nil)
        if body.readableBytes > 0 { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if closeAfter {
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            written.whenComplete { _ in loopBound.value.close(promise: nil) }
        }
    }
}

/// Which of a publish's PUBACK and its timeout came first: only that one completes the request.
private final class FirstOutcome: Sendable {
    private let taken = Atomic(false)

    /// `true` for the first caller only.
    func claim() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
}
