import Logging
import SystemdBus

/// The top-level windows of an X11 session, as any EWMH window manager (openbox, xfwm4,
/// matchbox, …) keeps them on the root window: which windows it manages (`_NET_CLIENT_LIST`),
/// which one is active (`_NET_ACTIVE_WINDOW`), and per window its pid (`_NET_WM_PID`), class
/// (`WM_CLASS`), title (`_NET_WM_NAME`, else `WM_NAME`) and whether it is minimised
/// (`_NET_WM_STATE_HIDDEN` in `_NET_WM_STATE`, or `WM_STATE` IconicState).
///
/// Event-driven on the caller's `EventLoop`: the X connection's socket is an fd watch of the
/// loop, `PropertyChange` events on the root and on each client window say what to read again,
/// and every read is an asynchronous request whose reply is picked up when the socket is
/// readable; nothing polls and no thread of its own runs (only `xcb_connect`, whose handshake
/// waits for the server, runs once per connection on a `DetachedThread`). After each batch of
/// events it reports the whole window set, if it changed, on ``updates``. A window destroyed
/// while its properties were being read (`BadWindow`) is left out.
///
/// libxcb (`libxcb.so.1`) is loaded by ``start()``, not linked: a process with no X display never
/// maps it.
///
/// Once started, losing the X server reports ``WindowSourceUpdate/unavailable(reason:)`` and
/// reconnects on a loop timer with the delays of `reconnectBackoff`; losing the window manager
/// (its check window destroyed, or one that is not EWMH-compliant in its place) reports the same
/// and waits, connected, for the root properties of the next one. Either way the next
/// ``WindowSourceUpdate/windows(_:)`` is a fresh whole set.
///
/// ```swift
/// let source = EWMHWindowSource(loop: loop, logger: logger)
/// do { try await source.start() } catch { logger.info("\(error)"); return }  // no X11 source
/// for await update in source.updates { … }
/// source.stop()
/// ```
public final class EWMHWindowSource: Sendable {
    /// The display it connects to; `nil`: `$DISPLAY`.
    public let display: String?
    /// The loop whose thread runs every libxcb call of this source.
    public let loop: EventLoop
    /// The source's reports, for one consumer, in order; the newest 64 are buffered. It finishes
    /// when the source stops (or fails to start).
    public let updates: AsyncStream<WindowSourceUpdate>
    private let session: LoopBoundBox<EWMHSession>

    /// The delays between reconnects after the X server went away: 250 ms doubling up to 30 s.
    public static let defaultReconnectBackoff = Backoff(initial: .milliseconds(250), maximum: .seconds(30))

    /// Creates a source; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - display: The X display (`":0"`); `nil` uses `$DISPLAY`.
    ///   - loop: The event loop to run on (the caller owns it and shuts it down after stopping this).
    ///   - reconnectBackoff: The delays between reconnects after the X server went away.
    ///   - logger: Where the source logs (at info or below: connections, the window manager,
    ///     losing either).
    public init(
        display: String? = nil, loop: EventLoop, reconnectBackoff: Backoff = defaultReconnectBackoff,
        logger: Logger
    ) {
        self.display = display
        self.loop = loop
        let (stream, continuation) = AsyncStream.makeStream(
            of: WindowSourceUpdate.self, bufferingPolicy: .bufferingNewest(64))
        updates = stream
        let box = LoopBoundBox.makeBoxSendingValue(
            EWMHSession(
                display: display, loop: loop, reconnectBackoff: reconnectBackoff, logger: logger,
                continuation: continuation),
            eventLoop: loop)
        // Queued first, so the session's way back to its box is in place before start runs.
        loop.perform { box.value.box = box }
        session = box
    }

    deinit {
        let session = session
        loop.perform { session.value.stop() }
    }

    /// Connects, checks that the window manager is EWMH-compliant, and returns once the first
    /// window set is on ``updates``.
    ///
    /// - Throws: ``EWMHWindowSourceError``: ``EWMHWindowSourceError/Code/libraryUnavailable``,
    ///   ``EWMHWindowSourceError/Code/noDisplay``, ``EWMHWindowSourceError/Code/cannotConnect``,
    ///   ``EWMHWindowSourceError/Code/notEWMHCompliant`` (log it once and run without this
    ///   source), or ``EWMHWindowSourceError/Code/stopped``. The source is stopped after any of them.
    public func start() async throws(EWMHWindowSourceError) {
        let session = session
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, EWMHWindowSourceError>, Never>) in
            let queued = loop.perform {
                session.value.start { continuation.resume(returning: $0) }
            }
            if !queued {
                continuation.resume(
                    returning: .failure(EWMHWindowSourceError(.stopped, "the event loop has shut down")))
            }
        }
        try result.get()
    }

    /// Disconnects and ends the source (``updates`` finishes); returns at once. Calling it
    /// again, or before ``start()``, is harmless.
    public func stop() {
        let session = session
        loop.perform { session.value.stop() }
    }
}
