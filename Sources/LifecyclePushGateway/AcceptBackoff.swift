import Glibc
import Logging
import NIOCore
import SystemdBus

/// Pauses accepting when `accept` fails for want of descriptors or memory (`EMFILE`, `ENFILE`,
/// `ENOBUFS`, `ENOMEM`), for delays from a ``Backoff`` (``GatewayServer/acceptBackoff``: each
/// failure in a row pauses longer, up to its maximum; an accepted connection resets it), and logs
/// it (once a minute).
///
/// The failed connection stays in the kernel's listen queue, so the listener stays readable: a loop
/// that simply retries spins a core on `accept` (this gateway did). NIO's own
/// `AcceptBackoffHandler` does not prevent that: it delays the listener's next `read()`, but after
/// an `accept` that failed NIO does not ask for one (its read stays pending and the listener stays
/// registered for readability); it only helps when the failure follows a successful `accept` in the
/// same wake-up. This handler turns the listener's `autoRead` off instead, which takes it out of
/// epoll until the pause ends.
final class AcceptBackoff: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel

    /// The `accept` errors that mean "out of resources, try again later".
    static let exhaustionErrors: Set<CInt> = [EMFILE, ENFILE, ENOBUFS, ENOMEM]

    private var backoff: Backoff
    private let logger: Logger
    private var resumption: Scheduled<Void>?
    private var lastLogged: NIODeadline?

    /// Creates the handler of the listening channel.
    ///
    /// - Parameters:
    ///   - backoff: The pauses after failures in a row.
    ///   - logger: Where the failure is logged.
    init(backoff: Backoff, logger: Logger) {
        self.backoff = backoff
        self.logger = logger
    }

    /// A connection was accepted: descriptors are available again, the next pause starts short.
    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        backoff.reset()
        context.fireChannelRead(data)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let ioError = error as? IOError, Self.exhaustionErrors.contains(ioError.errnoCode) else {
            context.fireErrorCaught(error)
            return
        }
        guard resumption == nil, let options = context.channel.syncOptions else { return }
        let pause = backoff.next()
        let now = NIODeadline.now()
        if lastLogged.map({ now - $0 >= .minutes(1) }) ?? true {
            lastLogged = now
            logger.error(
                "accept failed; accepting pauses and retries (logged once a minute)",
                metadata: ["error": "\(ioError)", "pause": "\(pause)"])
        }
        try? options.setOption(.autoRead, value: false)
        resumption = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(pause)) { [self] in
            resumption = nil
            try? context.channel.syncOptions?.setOption(.autoRead, value: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        resumption?.cancel()
        resumption = nil
    }
}
