import AppLifecycle
import Synchronization

/// A clock that moves only when a test tells it to, and fires due timers in deadline order.
///
/// Use it as the `LifecycleScheduler` of an app under test (``VirtualHost`` does): background
/// time, callback deadlines and completion-handler deadlines then expire exactly when
/// ``advance(by:)`` passes them, on the main actor, whatever the machine is doing. A delegate
/// can call ``advance(by:)`` from inside a callback to simulate a slow callback: watchdogs due
/// during that advance fire at once, as a real watchdog thread would.
@MainActor
public final class VirtualClock: LifecycleScheduler {
    private struct Timer {
        let deadline: Duration
        let sequence: Int
        let action: Action
        let state: VirtualTimerState
    }

    private enum Action {
        case mainActor(@MainActor () -> Void)
        case watchdog(@Sendable () -> Void)
    }

    /// The current virtual time.
    public private(set) var now: Duration = .zero
    private var timers: [Timer] = []
    private var nextSequence = 0

    /// Creates a clock at time zero.
    public init() {}

    /// Schedules a main-actor action at `now + delay`.
    ///
    /// - Parameters:
    ///   - delay: How long to wait (negative values mean now).
    ///   - action: What to run when the virtual time reaches the deadline; not run at all once cancelled.
    public func schedule(after delay: Duration, _ action: @escaping @MainActor () -> Void) -> any ScheduledAction {
        add(delay, .mainActor(action))
    }

    /// Arms a watchdog at `now + delay`.
    ///
    /// - Parameters:
    ///   - delay: How long until it fires.
    ///   - expiry: What to do when it fires.
    public func watchdog(after delay: Duration, _ expiry: @escaping @Sendable () -> Void) -> any ScheduledAction {
        add(delay, .watchdog(expiry))
    }

    /// The deadline of the earliest pending timer, or `nil` when none is pending.
    public var nextDeadline: Duration? {
        timers.filter { !$0.state.isCancelled }.map(\.deadline).min()
    }

    /// The number of timers that have neither fired nor been cancelled.
    public var pendingTimerCount: Int { timers.count { !$0.state.isCancelled } }

    /// Moves the clock forward, firing every timer whose deadline is reached, earliest first
    /// (timers scheduled while firing fire too if they fall due before the end).
    ///
    /// - Parameters:
    ///   - duration: How far to move (negative durations do nothing).
    public func advance(by duration: Duration) {
        guard duration > .zero else { return }
        advance(to: now + duration)
    }

    /// Moves the clock to an instant, firing due timers (see ``advance(by:)``).
    ///
    /// - Parameters:
    ///   - instant: The new time; an instant in the past does nothing.
    public func advance(to instant: Duration) {
        while true {
            timers.removeAll { $0.state.isCancelled }
            guard
                let index = timers.indices.filter({ timers[$0].deadline <= instant })
                    .min(by: { (timers[$0].deadline, timers[$0].sequence) < (timers[$1].deadline, timers[$1].sequence) }
                    )
            else { break }
            let timer = timers.remove(at: index)
            if timer.deadline > now { now = timer.deadline }
            guard timer.state.fire() else { continue }
            switch timer.action {
            case .mainActor(let action): action()
            case .watchdog(let expiry): expiry()
            }
        }
        if instant > now { now = instant }
    }

    /// Fires every pending timer, advancing the clock to each deadline in turn.
    public func runUntilIdle() {
        while let deadline = nextDeadline { advance(to: deadline) }
    }

    private func add(_ delay: Duration, _ action: Action) -> any ScheduledAction {
        nextSequence += 1
        let state = VirtualTimerState()
        timers.append(Timer(deadline: now + max(delay, .zero), sequence: nextSequence, action: action, state: state))
        return state
    }
}

/// A virtual timer's cancellation state; Sendable because its only state is atomic.
final class VirtualTimerState: ScheduledAction, Sendable {
    private let cancelled = Atomic<Bool>(false)
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func cancel() { cancelled.store(true, ordering: .releasing) }
    /// Marks the timer used; returns `false` if it was cancelled.
    func fire() -> Bool { !cancelled.exchange(true, ordering: .acquiringAndReleasing) }
}
