import Synchronization

/// The reply to a method call sent with ``BusConnection/send(destination:path:interface:member:arguments:timeout:)``,
/// to be awaited later (or never).
///
/// The call is on its way when the handle exists: callers pipeline several calls and await their
/// replies afterwards, in any order and from any task.
public final class BusPendingReply: Sendable {
    private struct State {
        var result: Result<[BusValue], BusError>?
        var waiters: [UInt64: CheckedContinuation<[BusValue], any Error>] = [:]
        var nextWaiter: UInt64 = 0
        /// Waiters cancelled before they were installed.
        var cancelled: Set<UInt64> = []
    }

    private let state = Mutex(State())

    init() {}

    /// Whether the reply (or the error) has arrived.
    public var isComplete: Bool { state.withLock { $0.result != nil } }

    /// Waits for the reply and returns its values.
    ///
    /// Cancelling the waiting task ends this wait with `CancellationError`; the call itself is
    /// not taken back (it has left), and other waiters still get its reply.
    ///
    /// - Throws: ``BusError`` with the peer's error name and message, `NoReply` on timeout,
    ///   `Disconnected` when the connection closed first, `CancellationError` when the task is cancelled.
    public func value() async throws -> [BusValue] {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<[BusValue], any Error>? in
                    if let result = state.result { return result.mapError { $0 as any Error } }
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[BusValue], any Error>? in
                if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
                if state.result == nil { state.cancelled.insert(id) }
                return nil
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// Stores the outcome and wakes every waiter; later outcomes are ignored.
    func complete(_ result: Result<[BusValue], BusError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<[BusValue], any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            state.cancelled.removeAll()
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}
