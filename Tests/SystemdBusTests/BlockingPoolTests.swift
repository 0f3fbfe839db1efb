import Glibc
import Synchronization
import SystemdBusTesting
import Testing

@testable import SystemdBus

/// A gate that blocking jobs wait on until the test opens it.
private final class Gate: Sendable {
    // Safe: a POSIX semaphore is used from any thread; it is freed only in deinit.
    private nonisolated(unsafe) let pointer: UnsafeMutablePointer<sem_t>

    init() {
        pointer = .allocate(capacity: 1)
        sem_init(pointer, 0, 0)
    }

    deinit {
        sem_destroy(pointer)
        pointer.deallocate()
    }

    func wait() { while sem_wait(pointer) != 0 && errno == EINTR {} }
    func open(_ count: Int = 1) { for _ in 0..<count { sem_post(pointer) } }
}

private struct Refusal: Error, Equatable {}

/// What jobs record, shared with the test.
private final class Probe: Sendable {
    let count = Atomic<Int>(0)
    let flag = Atomic<Bool>(false)
    let order = Mutex<[Int]>([])

    var counted: Int { count.load(ordering: .sequentiallyConsistent) }
    var isSet: Bool { flag.load(ordering: .sequentiallyConsistent) }
    func set() { flag.store(true, ordering: .sequentiallyConsistent) }
}

@Suite("Blocking pool", .timeLimit(.minutes(1)))
struct BlockingPoolTests {
    @Test("at most threadLimit jobs run at once: the next one waits in the queue until one ends")
    func theBoundHolds() async throws {
        let pool = BlockingPool(threadLimit: 2, name: "test-pool")
        defer { pool.shutdown() }
        let gate = Gate()
        let running = Probe()
        let blockers = (0..<2).map { _ in
            Task {
                try await pool.run {
                    running.count.add(1, ordering: .sequentiallyConsistent)
                    gate.wait()
                }
            }
        }
        #expect(await eventually { running.counted == 2 })
        let third = Probe()
        let thirdStarted = third
        let thirdJob = Task { try await pool.run { thirdStarted.set() } }
        // The third is queued, which it can only be while both threads are taken.
        #expect(await eventually { pool.queuedJobs == 1 })
        #expect(!third.isSet)
        gate.open()
        try await thirdJob.value
        #expect(third.isSet)
        gate.open()
        for blocker in blockers { try await blocker.value }
    }

    @Test("queued jobs start in the order they were submitted; results and errors come back")
    func orderResultsAndErrors() async throws {
        let pool = BlockingPool(threadLimit: 1, name: "test-pool")
        defer { pool.shutdown() }
        let gate = Gate()
        let started = Probe()
        let blocker = Task {
            try await pool.run {
                started.set()
                gate.wait()
            }
        }
        #expect(await eventually { started.isSet })
        let order = Probe()
        var jobs: [Task<Int, any Error>] = []
        for index in 0..<5 {
            jobs.append(
                Task {
                    try await pool.run {
                        order.order.withLock { $0.append(index) }
                        return index * 10
                    }
                })
            // Submitted one after the other: each is queued before the next starts.
            #expect(await eventually { pool.queuedJobs == index + 1 })
        }
        let failing = Task { try await pool.run { () throws -> Int in throw Refusal() } }
        #expect(await eventually { pool.queuedJobs == 6 })
        gate.open()
        try await blocker.value
        var results: [Int] = []
        for job in jobs { results.append(try await job.value) }
        #expect(results == [0, 10, 20, 30, 40])
        #expect(order.order.withLock { $0 } == [0, 1, 2, 3, 4])
        await #expect(throws: Refusal.self) { try await failing.value }
    }

    @Test("cancelling a queued job takes it out of the queue: it never runs, the caller gets CancellationError")
    func cancellationOfAQueuedJob() async throws {
        let pool = BlockingPool(threadLimit: 1, name: "test-pool")
        defer { pool.shutdown() }
        let gate = Gate()
        let started = Probe()
        let blocker = Task {
            try await pool.run {
                started.set()
                gate.wait()
            }
        }
        #expect(await eventually { started.isSet })
        let cancelledRan = Probe()
        let cancelledDone = Probe()
        let cancelled = Task {
            defer { cancelledDone.set() }
            try await pool.run { cancelledRan.set() }
        }
        #expect(await eventually { pool.queuedJobs == 1 })
        cancelled.cancel()
        // Answered while the one thread is still taken: it left the queue.
        #expect(await eventually { cancelledDone.isSet })
        #expect(pool.queuedJobs == 0)
        gate.open()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        try await blocker.value
        // The one thread has run everything queued after it: the cancelled job would have run before this.
        let after = try await pool.run { 1 }
        #expect(after == 1)
        #expect(!cancelledRan.isSet)

        // A task cancelled before it submits never queues the job.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { 2 }
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test("shutdown refuses queued and later jobs; the running one finishes")
    func shutdown() async throws {
        let pool = BlockingPool(threadLimit: 1, name: "test-pool")
        let gate = Gate()
        let started = Probe()
        let running = Task {
            try await pool.run {
                started.set()
                gate.wait()
                return "finished"
            }
        }
        #expect(await eventually { started.isSet })
        let queuedDone = Probe()
        let queued = Task {
            defer { queuedDone.set() }
            return try await pool.run { "queued" }
        }
        #expect(await eventually { pool.queuedJobs == 1 })
        pool.shutdown()
        // Refused while the one thread is still taken.
        #expect(await eventually { queuedDone.isSet })
        await #expect(throws: CancellationError.self) { try await pool.run { "later" } }
        gate.open()
        await #expect(throws: CancellationError.self) { try await queued.value }
        #expect(try await running.value == "finished")
    }
}
