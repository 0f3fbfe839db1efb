import BrokerLink
import Synchronization
import SystemdBusTesting

/// Runs `body`, but gives up after `seconds`: a broken connection fails the test instead of
/// hanging it (a publish's completion does not listen to task cancellation, so a task group would
/// wait for it; this returns at the deadline and lets the body finish, or not, on its own).
///
/// - Parameters:
///   - seconds: The bound.
///   - body: The work.
/// - Returns: What `body` returned.
/// - Throws: What `body` threw, or ``FixtureError`` at the deadline.
public func withDeadline<T: Sendable>(
    seconds: Int = 5, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let slot = ContinuationSlot<T>()
    return try await withCheckedThrowingContinuation { continuation in
        slot.set(continuation)
        Task {
            do {
                slot.resume(with: .success(try await body()))
            } catch {
                slot.resume(with: .failure(error))
            }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            slot.resume(with: .failure(FixtureError("no result within \(seconds) s")))
        }
    }
}

/// A continuation resumed once, by whichever of the body and the deadline comes first.
private final class ContinuationSlot<T: Sendable>: Sendable {
    private let continuation = Mutex<CheckedContinuation<T, any Error>?>(nil)

    func set(_ value: CheckedContinuation<T, any Error>) { continuation.withLock { $0 = value } }

    func resume(with result: Result<T, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}

extension BrokerConnection {
    /// ``BrokerConnection/publish(topic:payload:qos:retain:)``, failing after 5 s instead of waiting for good.
    ///
    /// - Parameters:
    ///   - topic: The topic.
    ///   - payload: The payload.
    ///   - qos: 0 or 1.
    ///   - retain: Whether it is retained.
    /// - Throws: The publish's error, or ``FixtureError`` after 5 s.
    public func boundedPublish(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = false) async throws {
        try await withDeadline { try await self.publish(topic: topic, payload: payload, qos: qos, retain: retain) }
    }
}
