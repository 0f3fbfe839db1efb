import Synchronization

extension AsyncStream.Continuation.BufferingPolicy {
    /// The policy without its element type, so one value converts to any stream's policy.
    enum Generic {
        case bufferingNewest(Int)
        case bufferingOldest(Int)
    }
}

extension AsyncStream {
    static func makeStream(bufferingPolicy generic: AsyncStream<Never>.Continuation.BufferingPolicy.Generic)
        -> (stream: AsyncStream<Element>, continuation: AsyncStream<Element>.Continuation)
    {
        switch generic {
        case .bufferingNewest(let count): return makeStream(of: Element.self, bufferingPolicy: .bufferingNewest(count))
        case .bufferingOldest(let count): return makeStream(of: Element.self, bufferingPolicy: .bufferingOldest(count))
        }
    }
}

/// Counts the notifications an async sequence dropped on overflow.
final class DropCounter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Keeps an async sequence's observer registered for as long as the sequence or an iterator lives.
final class NotificationSubscription: Sendable {
    let token: NotificationObservation
    let drops: DropCounter
    private let finish: @Sendable () -> Void

    init(token: NotificationObservation, drops: DropCounter, finish: @escaping @Sendable () -> Void) {
        self.token = token
        self.drops = drops
        self.finish = finish
    }

    func cancel() {
        token.cancel()
        finish()
    }

    deinit { cancel() }
}

/// An `AsyncSequence` of notifications from a ``LifecycleNotificationCenter``.
///
/// Created by ``LifecycleNotificationCenter/messages(of:object:buffering:)`` and
/// ``LifecycleNotificationCenter/notifications(named:object:buffering:)``. Its observer stays
/// registered while the sequence or one of its iterators is alive, or until ``cancel()``.
public struct NotificationSequence<Element: Sendable>: AsyncSequence, Sendable {
    let stream: AsyncStream<Element>
    let subscription: NotificationSubscription

    /// The number of notifications discarded so far because the buffer was full.
    public var droppedCount: Int { subscription.drops.value }

    /// Removes the observer and ends the sequence after the notifications already buffered.
    public func cancel() { subscription.cancel() }

    /// Creates an iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: stream.makeAsyncIterator(), subscription: subscription)
    }

    /// Iterates the notifications in the order they were posted.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncStream<Element>.Iterator
        let subscription: NotificationSubscription

        /// The next notification, or `nil` once the sequence was cancelled and drained.
        public mutating func next() async -> Element? {
            await base.next()
        }

        /// The next notification, or `nil` once the sequence was cancelled and drained.
        ///
        /// - Parameters:
        ///   - actor: The caller's isolation.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            await base.next(isolation: actor)
        }
    }
}
