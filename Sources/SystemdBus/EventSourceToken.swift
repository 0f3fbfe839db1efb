import CSystemd
import Glibc

/// The handle of a source registered with an ``EventLoop``: an fd watch, a timer or an inotify watch.
///
/// Keep it for as long as the source should live and call ``cancel()`` to remove it;
/// dropping the token does not cancel the source (the loop keeps it until ``EventLoop/shutdown()``).
/// ``cancel()`` may be called from any thread; the other members are the loop thread's
/// (preconditioned): call them from a handler, or hop there with ``EventLoop/run(_:)``.
public final class EventSourceToken: Sendable {

    /// What kind of source the token controls.
    public enum Kind: Sendable {
        /// A file descriptor watch (``EventLoop/addIO(fd:events:ownsFD:handler:)``).
        case io
        /// A timer (``EventLoop/addTimer(on:deadline:leeway:handler:)``).
        case timer
        /// An inotify watch (``EventLoop/addInotify(path:mask:handler:)``).
        case inotify
    }

    /// The kind of source.
    public let kind: Kind
    private let loop: EventLoop
    /// The sd-event source and whether the token was cancelled; the loop thread's alone (checked on
    /// every access). ``cancel()`` runs inline on the loop thread or hops there with `perform`.
    private let state: LoopBoundBox<(source: OpaquePointer?, cancelled: Bool)>

    private var source: OpaquePointer? {
        get { state.value.source }
        set { state.value.source = newValue }
    }

    private var cancelled: Bool {
        get { state.value.cancelled }
        set { state.value.cancelled = newValue }
    }

    init(loop: EventLoop, kind: Kind) {
        self.loop = loop
        self.kind = kind
        self.state = LoopBoundBox((nil, false), eventLoop: loop)
    }

    func attach(_ source: OpaquePointer) {
        self.source = source
    }

    /// Removes the source from the loop.
    ///
    /// Called on the loop thread (for example from the handler itself), it takes effect at
    /// once and the handler is never called again. Called from another thread it is queued
    /// to the loop, so a handler invocation already under way may still complete. Calling it
    /// more than once is harmless.
    public func cancel() {
        if loop.isOnLoopThread {
            cancelOnLoop()
        } else {
            loop.perform { [self] in cancelOnLoop() }
        }
    }

    func cancelOnLoop() {
        guard !cancelled else { return }
        cancelled = true
        if let source {
            // disable_unref drops our reference; the destroy callback releases the handler box.
            sd_event_source_disable_unref(source)
        }
        source = nil
        loop.forget(self)
    }

    /// Whether ``cancel()`` has taken effect. Loop thread only.
    public var isCancelled: Bool {
        cancelled
    }

    /// Sets a new absolute deadline on a timer and enables it again (one-shot).
    ///
    /// Works whether the timer has fired or not. Loop thread only: from inside the timer's
    /// handler, or through ``EventLoop/run(_:)``.
    ///
    /// - Parameters:
    ///   - deadline: The new absolute deadline on the timer's clock (``EventLoop/now(_:)``).
    /// - Throws: ``BusError`` if this is not a timer or it was cancelled.
    public func rearm(deadline: Duration) throws {
        loop.preconditionInEventLoop()
        guard kind == .timer else {
            throw BusError(name: BusError.Name.notSupported, message: "only timers can be rearmed", errno: EINVAL)
        }
        guard !cancelled, let source else {
            throw BusError(name: BusError.Name.failed, message: "the timer was cancelled", errno: ESTALE)
        }
        try BusError.check(
            sd_event_source_set_time(source, deadline.saturatingMicroseconds), "sd_event_source_set_time")
        try BusError.check(sd_event_source_set_enabled(source, Int32(SD_EVENT_ONESHOT)), "sd_event_source_set_enabled")
    }

    /// Changes the `EPOLL*` events an fd watch waits for. Loop thread only.
    ///
    /// - Parameters:
    ///   - events: The new event mask, for example `UInt32(EPOLLIN.rawValue)`.
    /// - Throws: ``BusError`` if this is not an fd watch or it was cancelled.
    public func setIOEvents(_ events: UInt32) throws {
        loop.preconditionInEventLoop()
        guard kind == .io else {
            throw BusError(name: BusError.Name.notSupported, message: "only fd watches have events", errno: EINVAL)
        }
        guard !cancelled, let source else {
            throw BusError(name: BusError.Name.failed, message: "the watch was cancelled", errno: ESTALE)
        }
        try BusError.check(sd_event_source_set_io_events(source, events), "sd_event_source_set_io_events")
    }
}
