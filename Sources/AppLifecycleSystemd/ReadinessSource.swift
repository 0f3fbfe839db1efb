import AppLifecycle

#if canImport(Glibc)
    import Glibc
#endif

/// A kernel event source that owns one file descriptor and turns its readiness into host events.
///
/// Every source the bridge reads from a descriptor of its own (a timerfd, a PSI trigger, a
/// `$MEMORY_PRESSURE_WATCH` FIFO or socket) conforms to this protocol, so that any event loop can drive it:
/// the loop registers ``fileDescriptor`` for ``pollEvents`` (level-triggered, as `sd_event_add_io` and
/// `poll(2)` do), and whenever the kernel reports readiness it calls ``handleReadiness(_:)`` on the loop
/// thread with the reported events. A source never waits, never polls and never spawns a thread.
///
/// The contract, which every conforming type in this module keeps:
/// - The descriptor is non-blocking and close-on-exec, and it does not change for the life of the source.
///   After ``close()`` it reads as `-1`.
/// - ``handleReadiness(_:)`` consumes the readiness it was called for (it reads, drains or re-arms), so a
///   level-triggered loop does not spin. It may return no events: a spurious wake-up, a change that turned
///   out not to be significant, or a source that only acts.
/// - ``handleReadiness(_:)`` throws ``HostSourceError`` with code ``HostSourceError/Code/sourceGone`` when the
///   descriptor will never be useful again (`POLLERR` on a PSI file whose cgroup was removed, a hung-up
///   socket, a removed directory). The loop then unregisters the descriptor and calls ``close()``. Any other
///   thrown error is a failure of this one readiness; the loop logs it and may keep the source.
/// - Sources are `Sendable`: their mutable state is behind a `Mutex`, so the bridge may create a source on
///   one thread and hand it to the loop thread.
///
/// `POLLIN` and `POLLPRI` have the same values as `EPOLLIN` and `EPOLLPRI`, so ``pollEvents`` can be passed to
/// `sd_event_add_io` or `epoll_ctl` unchanged.
public protocol ReadinessSource: AnyObject, Sendable {
    /// A short name for logs: `"timerfd"`, `"psi"`, `"memory-pressure-watch"`.
    var name: String { get }
    /// The descriptor the loop waits on, or `-1` after ``close()``.
    var fileDescriptor: Int32 { get }
    /// The events to wait for: `POLLIN` or `POLLPRI`.
    var pollEvents: Int16 { get }
    /// Turns a readiness report into host events and re-arms the source.
    ///
    /// Called on the loop thread each time the kernel reports readiness on ``fileDescriptor``.
    ///
    /// - Parameters:
    ///   - revents: The events the kernel reported (`poll(2)`'s `revents`, or the epoll events).
    /// - Returns: The host events this readiness means, in the order they happened; often one, possibly none.
    /// - Throws: ``HostSourceError``; ``HostSourceError/Code/sourceGone`` means the loop should drop the source.
    func handleReadiness(_ revents: Int16) throws -> [HostEvent]
    /// Closes the descriptor; idempotent.
    ///
    /// The loop must have unregistered the descriptor before, since the number may be reused at once.
    func close()
}
