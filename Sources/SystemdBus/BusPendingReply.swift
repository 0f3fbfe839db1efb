import Synchronization

/// The reply to a method call sent with ``BusConnection/send(destination:path:interface:member:arguments:timeout:)``,
/// to be awaited later (or never).
///
/// The call is on its way when the handle exists: callers pipeline several calls and await their
/// replies afterwards, in any order and from any task.
public final class BusPendingReply: Sendable {
    private struct State {
        var result: Result<[BusValue], BusError>?
        var waiters: [CheckedContinuation<[BusValue], any Error>] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Whether the reply (or the error) has arrived.
    public var isComplete: Bool { state.withLock { $0.result != nil } }

    /// Waits for the reply and returns its values.
    ///
    /// - Throws: ``BusError`` with the peer's error name and message, `NoReply` on timeout,
    ///   `Disconnected` when the connection closed first.
    public func value() async throws -> [BusValue] {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<[BusValue], BusError>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as any Error }) }
        }
    }

    /// Stores the outcome and wakes every waiter; later outcomes are ignored.
    func complete(_ result: Result<[BusValue], BusError>) {
        let waiters = state.withLock { state -> [CheckedContinuation<[BusValue], any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}
