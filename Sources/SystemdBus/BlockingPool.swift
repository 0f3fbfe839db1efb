import CSystemdShim
import Glibc
import Synchronization

/// A bounded set of threads for blocking calls of a known, short duration (a file's `fsync`, a
/// `waitpid` of a process that exits at once), so that neither an event-loop thread, the main
/// actor nor the Swift concurrency pool waits on them.
///
/// At most ``threadLimit`` jobs run at once; the rest wait in a queue and start in the order they
/// were submitted. Threads start on demand, so a process that never submits anything has none.
/// A job that waits for something of unbounded duration (a process's exit, a peer) does not belong
/// here: it would hold a thread for as long, and a few of them would starve every other caller.
/// Watch an fd for it on an ``EventLoop`` instead (a pidfd is readable once its process exited).
public final class BlockingPool: Sendable {
    /// The process's pool: what libraries use unless given another.
    public static let shared = BlockingPool(threadLimit: 4, name: "blocking-pool")

    /// The most jobs that run at once.
    public let threadLimit: Int
    private let name: String
    private let state = Mutex(State())
    /// Counts jobs submitted and, after ``shutdown()``, wake-ups for idle threads to exit.
    // A POSIX semaphore is made for use from any thread; its address never changes.
    private nonisolated(unsafe) let wakeUps: UnsafeMutablePointer<sem_t>

    private struct Job {
        let id: UInt64
        /// Runs the work and resumes its caller.
        let run: @Sendable () -> Void
        /// Resumes its caller without running (cancelled while queued, or the pool shut down).
        let refuse: @Sendable () -> Void
    }

    private struct State {
        var queue: [Job] = []
        var nextID: UInt64 = 0
        var threads = 0
        var idleThreads = 0
        var isShutDown = false
    }

    /// Creates a pool.
    ///
    /// - Parameters:
    ///   - threadLimit: The most jobs that run at once (at least 1).
    ///   - name: The threads' name (at most 15 bytes are shown by the kernel).
    public init(threadLimit: Int, name: String) {
        precondition(threadLimit > 0, "a pool needs at least one thread")
        self.threadLimit = threadLimit
        self.name = name
        wakeUps = .allocate(capacity: 1)
        sem_init(wakeUps, 0, 0)
    }

    deinit {
        // Threads hold the pool while they run, so none is left when this runs.
        sem_destroy(wakeUps)
        wakeUps.deallocate()
    }

    /// Runs `body` on one of the pool's threads and returns its result, or throws what it threw.
    ///
    /// Waits in the queue while ``threadLimit`` jobs are running. Cancelling the calling task
    /// takes the job out of the queue if it has not started (``run(_:)`` then throws
    /// `CancellationError`); a job that has started runs to its end.
    ///
    /// - Parameters:
    ///   - body: The blocking work.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or `CancellationError` when the task was cancelled before the
    ///   job started or the pool has been shut down.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                submit(
                    Job(
                        id: id, run: { continuation.resume(with: Result { try body() }) },
                        refuse: { continuation.resume(throwing: CancellationError()) }))
            }
        } onCancel: {
            // The task's cancelled flag is set before this runs, so `submit` either sees it or has
            // queued the job already, which this then takes out.
            let refused = state.withLock { state -> Job? in
                guard let index = state.queue.firstIndex(where: { $0.id == id }) else { return nil }
                return state.queue.remove(at: index)
            }
            refused?.refuse()
        }
    }

    /// Stops taking jobs: queued ones are refused with `CancellationError`, running ones finish, and
    /// then the threads end. Later ``run(_:)`` calls throw `CancellationError`.
    public func shutdown() {
        let (refused, threads) = state.withLock { state in
            state.isShutDown = true
            defer { state.queue.removeAll() }
            return (state.queue, state.threads)
        }
        refused.forEach { $0.refuse() }
        for _ in 0..<threads { sem_post(wakeUps) }
    }

    /// How many jobs wait for a thread (for tests).
    var queuedJobs: Int { state.withLock { $0.queue.count } }

    private func submit(_ job: Job) {
        enum Decision {
            case refuse
            case queued(startThread: Bool)
        }
        let decision = state.withLock { state -> Decision in
            guard !state.isShutDown, !Task.isCancelled else { return .refuse }
            state.queue.append(job)
            guard state.idleThreads < state.queue.count, state.threads < threadLimit else {
                return .queued(startThread: false)
            }
            state.threads += 1
            return .queued(startThread: true)
        }
        switch decision {
        case .refuse:
            job.refuse()
        case .queued(let startThread):
            sem_post(wakeUps)
            if startThread, DetachedThread.start({ self.work() }) != 0 {
                // No thread: the jobs wait for the running ones (there is at least one job running
                // or a thread idle, unless this was the first, which then waits for the next submit).
                state.withLock { $0.threads -= 1 }
            }
        }
    }

    /// One thread's loop: take the next job, run it, until the pool shuts down.
    private func work() {
        _ = csd_set_thread_name(name)
        while true {
            state.withLock { $0.idleThreads += 1 }
            while sem_wait(wakeUps) != 0 && errno == EINTR {}
            let job = state.withLock { state -> Job?? in
                state.idleThreads -= 1
                if !state.queue.isEmpty { return state.queue.removeFirst() }
                if state.isShutDown {
                    state.threads -= 1
                    return .some(nil)
                }
                // A job cancelled while queued left its wake-up behind.
                return nil
            }
            switch job {
            case .some(.some(let job)): job.run()
            case .some(.none): return
            case .none: continue
            }
        }
    }
}
