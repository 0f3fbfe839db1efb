import NIOCore
import NIOHTTP1

/// An ``HTTPClientConnection``'s time limit, kept on the connection's event loop: armed when a
/// request's head is written, disarmed when its response has ended. When it fires, the error
/// (``HTTPClientError``, "no response within …") reaches the waiting reader through the pipeline,
/// and the connection closes.
///
/// On the loop, arming and disarming cost no wake-up of another thread, which a deadline
/// scheduled from the requesting task would (two per request).
final class ResponseDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias InboundOut = HTTPClientResponsePart
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    private let limit: Duration
    private var deadline: Scheduled<Void>?

    /// A handler that gives each response `limit` from its request's head.
    init(limit: Duration) {
        self.limit = limit
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .head = unwrapOutboundIn(data), deadline == nil {
            let limit = self.limit
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limit)) { [self] in
                deadline = nil
                context.fireErrorCaught(HTTPClientError(.timedOut, "no response within \(limit)"))
                context.close(promise: nil)
            }
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .end = unwrapInboundIn(data) { disarm() }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
