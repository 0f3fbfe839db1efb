import Glibc

/// A detached POSIX thread, so neither an event-loop thread, the main actor nor the Swift
/// concurrency pool waits on what it runs. Foundation's `Thread` would do the same, but lifecycled
/// links FoundationEssentials only.
///
/// Short blocking calls go to ``BlockingPool``, whose threads this starts. A thread of its own is
/// for a wait of unbounded duration that no fd announces (lifecycled's `waitid(WSTOPPED)` after
/// `SIGSTOP`: a pidfd polls readable only on exit), which would hold a pool thread for as long.
public enum DetachedThread {
    /// The closure a thread runs, boxed to cross `pthread_create`'s `void *`.
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread.
    ///
    /// Waiting for its result from async code: resume a continuation at the end of `body` (and
    /// at once when this returns an error, since `body` then never runs).
    ///
    /// - Parameters:
    ///   - body: The blocking work; the thread ends when it returns.
    /// - Returns: `0`, or the `pthread_create` error (`EAGAIN` when the process is out of threads).
    public static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        guard created == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return created
        }
        pthread_detach(thread)
        return 0
    }
}
