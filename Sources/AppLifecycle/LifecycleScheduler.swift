import Dispatch
import FoundationEssentials
import Synchronization

/// The time source and timers of an ``Application``.
///
/// The app measures background time, callback deadlines and completion-handler deadlines on
/// its scheduler. ``SystemLifecycleScheduler`` uses the monotonic clock and real timers; the
/// test kit's virtual clock advances only when a test says so, which makes every deadline
/// deterministic.
@MainActor
public protocol LifecycleScheduler: AnyObject {
    /// The current monotonic time, from an arbitrary origin.
    var now: Duration { get }

    /// Runs an action on the main actor after a delay.
    ///
    /// - Parameters:
    ///   - delay: How long to wait.
    ///   - action: What to run; not run at all once cancelled.
    /// - Returns: A handle that cancels the action.
    func schedule(after delay: Duration, _ action: @escaping @MainActor () -> Void) -> any ScheduledAction

    /// Arms a watchdog that fires after a delay even while the main actor is blocked.
    ///
    /// Used for the deadlines of synchronous callbacks (about five seconds for
    /// `applicationWillTerminate(_:)` and `applicationDidEnterBackground(_:)`). A real
    /// scheduler fires it on another thread; a virtual one when its clock passes the deadline.
    ///
    /// - Parameters:
    ///   - delay: How long until it fires.
    ///   - expiry: What to do when it fires (called on any thread).
    /// - Returns: A handle that disarms it.
    func watchdog(after delay: Duration, _ expiry: @escaping @Sendable () -> Void) -> any ScheduledAction
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
