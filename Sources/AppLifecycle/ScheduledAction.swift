import Dispatch
import FoundationEssentials
import Synchronization

/// A cancellable action scheduled on a ``LifecycleScheduler``.
public protocol ScheduledAction: Sendable {
    /// Cancels the action; it does not run after this returns (unless it is already running).
    func cancel()
}
