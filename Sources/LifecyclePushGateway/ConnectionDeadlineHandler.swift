import Logging
import NIOCore

/// Closes a connection that stays idle, or sends a request's head or body slowly, for longer than
/// its ``ConnectionLimits`` allow, so that slow or silent clients cannot hold connections (and
/// their file descriptors) for good.
///
/// It is the first handler of a connection's pipeline, in front of the HTTP decoder: the first
/// byte of a request ends the idle time and starts the head's deadline. The rest of the request's
/// progress comes from ``PushHTTPHandler`` as ``RequestProgress`` outbound user events. A head that
/// is late, or a body that is late before the request was answered, gets `408 Request Timeout` with
/// `Connection: close` (RFC 9110 §15.5.9) and the connection closes once it is written; an idle
/// connection, or one whose request was answered already, closes without a word (RFC 9112 §9.5).
/// One timer at a time, on the channel's event loop; nothing blocks.
final class ConnectionDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Where the connection's current request is.
    enum Phase: Equatable {
        /// No request in progress: before the first byte, or after a response.
        case idle
        /// A request's head is arriving.
        case head
        /// A request's body is arriving.
        case body
        /// The request has been read; the gateway works on the answer (no read deadline).
        case working
    }

    /// The answer to a request whose head or body came too late.
    static let timeoutResponse =
        "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
        + "Content-Length: 37\r\n\r\nthe request was not received in time\n"

    private let limits: ConnectionLimits
    private let logger: Logger
    private(set) var phase = Phase.idle
    /// Whether the current request has been answered (a rejected head's body is still read).
    private var answered = false
    private var deadline: Scheduled<Void>?
    /// Set when a deadline closes the connection: what the handlers behind still write (NIO's
    /// error handler answers the cut-off request with a 400) is dropped.
    private var closing = false

    /// Creates the handler of one connection.
    ///
    /// - Parameters:
    ///   - limits: The timeouts.
    ///   - logger: Where a timeout is logged (debug: under attack there are many).
    init(limits: ConnectionLimits, logger: Logger) {
        self.limits = limits
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(limits.idleTimeout, context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if deadline == nil && phase == .idle { arm(limits.idleTimeout, context: context) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if phase == .idle && unwrapInboundIn(data).readableBytes > 0 {
            phase = .head
            arm(limits.headerTimeout, context: context)
        }
        context.fireChannelRead(data)
    }

    /// A graceful stop (`ChannelShouldQuiesceEvent`) while a head is half-read closes the
    /// connection here: NIO's pipeline handler would see no request, close at once, and then
    /// trap in a debug build when the error handler answers the cut-off head with a 400.
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent, phase == .head else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        disarm()
        closing = true
        context.close(promise: nil)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let progress = event as? RequestProgress else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        switch progress {
        case .readingBody:
            phase = .body
            answered = false
            arm(limits.bodyTimeout, context: context)
        case .requestEnded:
            if answered {
                becomeIdle(context: context)
            } else {
                phase = .working
                disarm()
            }
        case .answered:
            answered = true
            if phase == .working { becomeIdle(context: context) }
        }
        promise?.succeed()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !closing else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    private func becomeIdle(context: ChannelHandlerContext) {
        phase = .idle
        answered = false
        arm(limits.idleTimeout, context: context)
    }

    private func arm(_ timeout: TimeAmount, context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [self] in
            deadline = nil
            expired(context: context)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }

    private func expired(context: ChannelHandlerContext) {
        let peer = context.channel.remoteAddress.map { "\($0)" } ?? "?"
        switch phase {
        case .working:
            return
        case .idle:
            logger.debug("closing an idle connection", metadata: ["peer": "\(peer)"])
            closing = true
            context.close(promise: nil)
        case .head, .body:
            logger.debug("closing a slow connection", metadata: ["peer": "\(peer)", "reading": "\(phase)"])
            let answer = !answered
            closing = true
            guard answer else {
                context.close(promise: nil)
                return
            }
            var buffer = context.channel.allocator.buffer(capacity: Self.timeoutResponse.utf8.count)
            buffer.writeString(Self.timeoutResponse)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            // Straight to the socket: this handler is the first, the HTTP encoder is behind it.
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(buffer))).whenComplete { _ in
                loopBound.value.close(promise: nil)
            }
        }
    }
}
