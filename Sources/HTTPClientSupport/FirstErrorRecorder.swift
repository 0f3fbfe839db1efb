import NIOCore
import Synchronization

/// Keeps the first error the pipeline reports (and passes it on): a failed TLS handshake closes
/// the channel, and the request may then fail with `ioOnClosedChannel` before the handshake's own
/// error reaches the reader. ``HTTPClientConnection`` asks it for the cause.
final class FirstErrorRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    private let first = Mutex<(any Error)?>(nil)

    /// The first error seen, if any.
    var error: (any Error)? { first.withLock { $0 } }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        first.withLock { if $0 == nil { $0 = error } }
        context.fireErrorCaught(error)
    }
}
