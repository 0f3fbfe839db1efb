import Synchronization

/// How an async notification sequence buffers notifications its consumer has not taken yet.
///
/// The buffer is bounded. When a slow consumer lets it fill up, ``Overflow/dropOldest``
/// (the default) discards the oldest buffered notification to make room, so the consumer
/// always catches up with the most recent state; ``Overflow/dropNewest`` discards the
/// notification being posted, keeping the earliest ones. Either way the post itself never
/// blocks and never fails, and ``NotificationSequence/droppedCount`` counts what was lost.
public struct NotificationBufferingPolicy: Sendable, Hashable {
    /// What to discard when the buffer is full.
    public enum Overflow: Sendable, Hashable {
        /// Discard the oldest buffered notification (keep the newest).
        case dropOldest
        /// Discard the notification being posted (keep the oldest).
        case dropNewest
    }

    /// The most notifications buffered at once (at least 1).
    public var capacity: Int
    /// What to discard when the buffer is full.
    public var overflow: Overflow

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - capacity: The most notifications buffered at once; values below 1 mean 1.
    ///   - overflow: What to discard when the buffer is full.
    public init(capacity: Int, overflow: Overflow = .dropOldest) {
        self.capacity = max(1, capacity)
        self.overflow = overflow
    }

    /// 256 notifications, dropping the oldest on overflow.
    public static let `default` = NotificationBufferingPolicy(capacity: 256)

    var streamPolicy: AsyncStream<Never>.Continuation.BufferingPolicy.Generic {
        switch overflow {
        case .dropOldest: return .bufferingNewest(capacity)
        case .dropNewest: return .bufferingOldest(capacity)
        }
    }
}
