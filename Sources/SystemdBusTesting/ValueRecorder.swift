import Synchronization

/// Records values delivered on any thread (loop-thread handlers, tasks) and lets a test take
/// them in order.
///
/// ``next(_:hangGuard:)`` returns the next value not taken yet, waiting for it if needed; the
/// wait is bounded by a generous hang guard, not a timing assertion.
public final class ValueRecorder<Value: Sendable>: Sendable {
    private struct Waiter {
        var count: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var values: [Value] = []
        var taken = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Creates an empty recorder.
    public init() {}

    /// Records a value and wakes a test waiting for it.
    ///
    /// - Parameters:
    ///   - value: The value, in the order it happened.
    public func add(_ value: Value) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.values.append(value)
            let ids = state.waiters.filter { $0.value.count <= state.values.count }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Everything recorded so far, taken or not.
    public var values: [Value] { state.withLock { $0.values } }

    /// The values recorded but not taken with ``next(_:hangGuard:)`` yet.
    public var untaken: [Value] { state.withLock { Array($0.values[$0.taken...]) } }

    /// Takes the next value, waiting for it if needed.
    ///
    /// - Parameters:
    ///   - what: What the value is, for the failure message.
    ///   - hangGuard: How long to wait before giving up.
    /// - Throws: ``HangGuardExpired`` (with what was recorded) when nothing comes within `hangGuard`.
    public func next(_ what: String = "a value", hangGuard: Duration = .seconds(30)) async throws -> Value {
        let index = state.withLock { state in
            defer { state.taken += 1 }
            return state.taken
        }
        guard await waitForCount(index + 1, hangGuard: hangGuard) else {
            throw HangGuardExpired(what: "\(what); recorded: \(values)")
        }
        return state.withLock { $0.values[index] }
    }

    private func waitForCount(_ count: Int, hangGuard: Duration) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> UInt64? in
                if state.values.count >= count { return nil }
                state.nextID += 1
                state.waiters[state.nextID] = Waiter(count: count, continuation: continuation)
                return state.nextID
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            Task { [self] in
                try? await Task.sleep(for: hangGuard)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }
}
