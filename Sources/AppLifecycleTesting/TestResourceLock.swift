import Synchronization

/// An async lock for a resource that tests in different suites (or test targets) of one test
/// process must not use at the same time.
///
/// Waiting never blocks a thread (waiters are continuations), so tests on the cooperative pool
/// cannot starve it. Use ``realtimeClock`` around anything that arms a `TFD_TIMER_CANCEL_ON_SET`
/// timerfd or sets `CLOCK_REALTIME`: setting the clock cancels every such timer in the process.
public final class TestResourceLock: Sendable {
    /// The lock for `CLOCK_REALTIME` and the timers it cancels.
    public static let realtimeClock = TestResourceLock()

    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Creates a lock.
    public init() {}

    /// Runs `body` while holding the lock, waiting for it first; `body` runs in the caller's isolation.
    ///
    /// - Parameters:
    ///   - isolation: The caller's actor (inferred).
    ///   - body: The work that needs the resource alone.
    public func withLock<T>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> sending T
    ) async rethrows -> sending T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
