import Synchronization

/// The userdata of one asynchronous method call: completes exactly once on the loop thread.
final class PendingCallBox: SlotBox, @unchecked Sendable {
    // Safe: `completion` is set at creation and read/cleared only on the loop thread.
    private var completion: ((Result<[BusValue], BusError>) -> Void)?

    init(completion: @escaping (Result<[BusValue], BusError>) -> Void) {
        self.completion = completion
    }

    func complete(_ result: Result<[BusValue], BusError>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }

    override func slotDestroyed() {
        // The slot went away without a reply (cancelled, or the bus was closed).
        complete(.failure(.notConnected))
    }
}

/// Bridges one call between the awaiting task and the loop: resumes the continuation once.
final class CallState: @unchecked Sendable {
    // Safe: `state` is a Mutex; `box` is read and written only on the loop thread.
    private enum State {
        case initial
        case waiting(CheckedContinuation<[BusValue], any Error>)
        case finished
    }
    private let state = Mutex<State>(.initial)
    private let cancelled = Atomic<Bool>(false)
    var box: PendingCallBox?

    /// Stores the continuation; returns false (after resuming it) if the call already finished.
    func install(_ continuation: CheckedContinuation<[BusValue], any Error>) -> Bool {
        let installed = state.withLock { state -> Bool in
            if case .initial = state {
                state = .waiting(continuation)
                return true
            }
            return false
        }
        if !installed { continuation.resume(throwing: CancellationError()) }
        return installed
    }

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func finish(_ result: Result<[BusValue], any Error>) {
        if case .failure(let error) = result, error is CancellationError {
            cancelled.store(true, ordering: .releasing)
        }
        let continuation = state.withLock { state -> CheckedContinuation<[BusValue], any Error>? in
            defer { state = .finished }
            if case .waiting(let continuation) = state { return continuation }
            return nil
        }
        continuation?.resume(with: result)
    }
}
