import Dispatch
import FoundationEssentials
import Synchronization

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
    ///   - action: What to run; not run at all once cancelled.
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
