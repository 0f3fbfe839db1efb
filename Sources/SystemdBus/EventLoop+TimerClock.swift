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

extension Duration {
    /// The duration in whole microseconds, clamped to 0 below and `UInt64.max` above: sd-event's
    /// and sd_notify's unit.
    var clampedMicroseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return .max }
        let (total, overflow2) = whole.addingReportingOverflow(UInt64(attoseconds / 1_000_000_000_000))
        return overflow2 ? .max : total
    }
}
