import AppLifecycleTesting
import Synchronization
import Testing

/// What the lock's holders saw, shared between tasks.
private final class HolderLog: Sendable {
    private let state = Mutex<(entries: [String], inside: Int, overlapped: Bool)>(([], 0, false))

    func enter() {
        state.withLock {
            $0.inside += 1
            if $0.inside > 1 { $0.overlapped = true }
        }
    }
    func leave(_ entry: String) {
        state.withLock {
            $0.entries.append(entry)
            $0.inside -= 1
        }
    }
    var entries: [String] { state.withLock { $0.entries } }
    var overlapped: Bool { state.withLock { $0.overlapped } }
}

private struct Boom: Error {}

@Suite("TestResourceLock: one holder at a time, waiters in arrival order, released on throw", .timeLimit(.minutes(1)))
struct TestResourceLockTests {
    @Test func holdersDoNotOverlapAndNoWaiterRunsWhileTheLockIsHeld() async {
        let lock = TestResourceLock()
        let log = HolderLog()
        let (release, releaseContinuation) = AsyncStream<Void>.makeStream()
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await lock.withLock {
                    log.enter()
                    startedContinuation.yield()
                    for await _ in release { break }
                    log.leave("first")
                }
            }
            for await _ in started { break }
            for _ in 0..<5 {
                group.addTask {
                    await lock.withLock {
                        log.enter()
                        await Task.yield()
                        log.leave("waiter")
                    }
                }
            }
            // Give the waiters every chance to run; none may while the first holds the lock.
            for _ in 0..<200 { await Task.yield() }
            #expect(log.entries.isEmpty, "a waiter ran while the lock was held")
            releaseContinuation.yield()
        }
        #expect(log.entries == ["first"] + Array(repeating: "waiter", count: 5))
        #expect(!log.overlapped)
    }

    @Test func aThrowingBodyReleasesTheLock() async throws {
        let lock = TestResourceLock()
        await #expect(throws: Boom.self) { try await lock.withLock { throw Boom() } }
        // Would wait forever if the lock were still held.
        let value = await lock.withLock { 42 }
        #expect(value == 42)
    }
}
