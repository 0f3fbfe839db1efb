import Glibc

extension EventLoop {
    /// The clock a loop timer runs on: each is one of the kernel's clocks, read as a `Duration`
    /// since that clock's zero (no raw `clockid_t` or microseconds in the API).
    public enum TimerClock: Sendable, Hashable {
        /// `CLOCK_MONOTONIC`: steady, stops while the machine is suspended.
        case monotonic
        /// `CLOCK_BOOTTIME`: steady, counts the time the machine is suspended too.
        case boottime
        /// `CLOCK_REALTIME`: the wall clock, which can be set.
        case realtime

        /// The kernel's clock id.
        var id: clockid_t {
            switch self {
            case .monotonic: return CLOCK_MONOTONIC
            case .boottime: return CLOCK_BOOTTIME
            case .realtime: return CLOCK_REALTIME
            }
        }
    }

    /// The current time of a clock, as a duration since the clock's zero.
    ///
    /// Use it to compute absolute deadlines for ``addTimer(on:deadline:leeway:handler:)``.
    ///
    /// - Parameters:
    ///   - clock: The clock.
    public static func now(_ clock: TimerClock) -> Duration {
        var ts = timespec()
        clock_gettime(clock.id, &ts)
        return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
    }
}
