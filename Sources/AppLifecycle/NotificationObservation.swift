import Synchronization

/// A registration with a ``LifecycleNotificationCenter``; dropping it removes the observer.
///
/// The token removes its observer when it is deinitialised or when ``cancel()`` is called,
/// whichever comes first; cancelling twice is harmless. Keep it for as long as you want the
/// notifications (in a property, or in a `Set` with ``store(in:)``).
public final class NotificationObservation: Sendable, Hashable {
    private let entry: ObserverEntry
    private weak let center: LifecycleNotificationCenter?

    init(entry: ObserverEntry, center: LifecycleNotificationCenter) {
        self.entry = entry
        self.center = center
    }

    /// Removes the observer; it receives nothing posted after this call returns.
    ///
    /// Called off the main actor, the observer is deactivated at once and unlinked from the
    /// center on the main actor shortly after.
    public func cancel() {
        guard entry.deactivate() else { return }
        let entry = self.entry
        let center = self.center
        MainActorContext.run { center?.unlink(entry) }
    }

    /// Whether the observer still receives notifications.
    public var isActive: Bool { entry.isActive }

    /// Keeps the token in a set (removing the observer when the set lets it go).
    ///
    /// - Parameters:
    ///   - set: The set to insert into.
    public func store(in set: inout Set<NotificationObservation>) {
        set.insert(self)
    }

    deinit { cancel() }

    /// Identity equality.
    ///
    /// - Parameters:
    ///   - lhs: A token.
    ///   - rhs: Another token.
    public static func == (lhs: NotificationObservation, rhs: NotificationObservation) -> Bool { lhs === rhs }

    /// Hashes the token's identity.
    ///
    /// - Parameters:
    ///   - hasher: The hasher.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
