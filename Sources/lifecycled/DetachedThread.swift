import Glibc

/// A detached POSIX thread for one blocking call (`waitid` on a pidfd), so neither the loop
/// thread nor the Swift concurrency pool waits on it. Foundation's `Thread` would do the same,
/// but lifecycled links FoundationEssentials only.
enum DetachedThread {
    /// The closure a thread runs, boxed to cross `pthread_create`'s `void *`.
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new detached thread.
    ///
    /// - Parameters:
    ///   - body: The blocking work; the thread ends when it returns.
    /// - Returns: `0`, or the `pthread_create` error (`EAGAIN` when the process is out of threads).
    static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
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
