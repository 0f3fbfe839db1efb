import Dispatch
import Foundation
import Synchronization

/// A cancellable action scheduled on a ``LifecycleScheduler``.
public protocol ScheduledAction: Sendable {
    /// Cancels the action; it does not run after this returns (unless it is already running).
    func cancel()
}

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
    ///   - action: The action.
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

/// The real scheduler: `CLOCK_MONOTONIC` time, main-actor timers, and watchdogs on a dispatch queue.
///
/// No polling: each timer is one kernel timer that fires once.
@MainActor
public final class SystemLifecycleScheduler: LifecycleScheduler {
    private let origin = ContinuousClock.now

    /// Creates the scheduler.
    public init() {}

    /// Monotonic time since the scheduler was created.
    public var now: Duration { ContinuousClock.now - origin }

    /// Runs an action on the main actor after a delay (a dispatch timer on the main queue).
    ///
    /// - Parameters:
    ///   - delay: How long to wait.
    ///   - action: The action.
    public func schedule(after delay: Duration, _ action: @escaping @MainActor () -> Void) -> any ScheduledAction {
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + delay.timeInterval, leeway: .milliseconds(1))
        timer.setEventHandler {
            timer.cancel()
            MainActor.assumeIsolated { action() }
        }
        timer.resume()
        return DispatchTimerAction(timer: timer)
    }

    /// Arms a watchdog on a utility dispatch queue.
    ///
    /// - Parameters:
    ///   - delay: How long until it fires.
    ///   - expiry: What to do when it fires.
    public func watchdog(after delay: Duration, _ expiry: @escaping @Sendable () -> Void) -> any ScheduledAction {
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .userInitiated))
        timer.schedule(deadline: .now() + delay.timeInterval, leeway: .milliseconds(1))
        timer.setEventHandler {
            timer.cancel()
            expiry()
        }
        timer.resume()
        return DispatchTimerAction(timer: timer)
    }
}

/// A dispatch timer as a ``ScheduledAction``.
///
/// Sendable because `DispatchSourceTimer` is thread-safe (cancel may be called from any thread).
private struct DispatchTimerAction: ScheduledAction, @unchecked Sendable {
    let timer: any DispatchSourceTimer
    func cancel() { timer.cancel() }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    public var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
