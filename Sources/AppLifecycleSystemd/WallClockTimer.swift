import AppLifecycle
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One `CLOCK_REALTIME` timerfd that reports clock sets, local midnight and UTC-offset (DST) changes.
///
/// The timer is a `RealtimeAlarm` (the one `TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET` timer type,
/// which the local-notification schedule sleeps on too), armed at the next significant local
/// instant: the earlier of the next local midnight and the next UTC-offset transition of the time zone
/// (see ``nextDeadline(after:in:)``), computed from ``UTCOffsetRules``: by default ``SystemLocalTime``,
/// the process's zone as glibc reads it from the system's time-zone database (no ICU). On readiness:
/// - `read` fails with `ECANCELED`: the clock was set (by `clock_settime`, `date -s`, timedated, an NTP step)
///   → `AppLifecycle/SignificantTimeChange/Reason/clockSet`.
/// - `read` returns an expiration count: the armed instant arrived →
///   `AppLifecycle/SignificantTimeChange/Reason/midnight` or
///   `AppLifecycle/SignificantTimeChange/Reason/daylightSavingTime`, whichever was armed.
///
/// Either way the timer is re-armed from the current time. A DST change does not cancel a
/// `CANCEL_ON_SET` timer (the kernel clock does not move, only the local offset does), which is why the
/// transition must itself be an armed deadline. When a midnight and a transition fall on the same instant
/// (zones whose DST starts at 00:00, like America/Havana or America/Sao_Paulo before 2019, where that day starts
/// at 01:00), the deadline reports `AppLifecycle/SignificantTimeChange/Reason/midnight`: the day rolled over,
/// which is the fact apps most often key on; the offset change is observable from the same instant.
/// If the clock is set past an armed deadline, only `.clockSet` is reported (the kernel reports the cancel).
///
/// The bridge calls ``localTimeZoneChanged()`` when the system time zone changes (``TimeZoneWatcher``,
/// timedated), so the next midnight and transition are computed in the new zone.
public final class WallClockTimer: ReadinessSource {
    /// An instant the timer is armed for, and what its arrival means.
    public struct Deadline: Sendable, Hashable, CustomStringConvertible {
        /// The instant.
        public var date: Date
        /// `AppLifecycle/SignificantTimeChange/Reason/midnight` or
        /// `AppLifecycle/SignificantTimeChange/Reason/daylightSavingTime`.
        public var reason: SignificantTimeChange.Reason

        /// Creates a deadline.
        ///
        /// - Parameters:
        ///   - date: The instant.
        ///   - reason: What its arrival means.
        public init(date: Date, reason: SignificantTimeChange.Reason) {
            self.date = date
            self.reason = reason
        }

        /// The instant in ISO 8601 (UTC) and the reason.
        public var description: String { "\(reason.rawValue) at \(date)" }
    }

    private struct State {
        var timeZone: any UTCOffsetRules
        var armed: Deadline?
    }

    /// `"timerfd"`.
    public let name = "timerfd"
    /// `POLLIN`.
    public let pollEvents = Int16(POLLIN)
    private let now: @Sendable () -> Date
    private let alarm: RealtimeAlarm
    private let state: Mutex<State>

    /// Creates the timerfd and arms it at the next significant instant.
    ///
    /// The kernel always measures against the real `CLOCK_REALTIME`; `now` only chooses the deadline. Tests
    /// pass a fixed `now` to get a deadline that is already past (the timer then expires at once).
    ///
    /// - Parameters:
    ///   - timeZone: The local time zone to compute midnight and transitions in (default: the process's).
    ///   - now: The current time; `Date()` by default.
    /// - Throws: ``HostSourceError`` if the timerfd cannot be created or armed.
    public init(
        timeZone: any UTCOffsetRules = SystemLocalTime(), now: @escaping @Sendable () -> Date = { Date() }
    ) throws {
        self.alarm = try RealtimeAlarm()
        self.now = now
        self.state = Mutex(State(timeZone: timeZone, armed: nil))
        do {
            try rearm()
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// The timerfd, or `-1` after ``close()``.
    public var fileDescriptor: Int32 { alarm.fileDescriptor }

    /// The time zone the deadlines are computed in.
    public var timeZone: any UTCOffsetRules { state.withLock { $0.timeZone } }

    /// The deadline the timer is armed for now.
    public var armedDeadline: Deadline? { state.withLock { $0.armed } }

    /// Switches to another time zone and re-arms the timer for it.
    ///
    /// - Parameters:
    ///   - timeZone: The new local time zone.
    /// - Throws: ``HostSourceError`` if re-arming fails.
    public func updateTimeZone(_ timeZone: any UTCOffsetRules) throws {
        state.withLock { $0.timeZone = timeZone }
        try rearm()
    }

    /// Reads the process's zone again (``SystemLocalTime/reload(localtimePath:environment:)``) and re-arms
    /// for it: the system zone changed.
    ///
    /// - Throws: ``HostSourceError`` if re-arming fails.
    public func localTimeZoneChanged() throws {
        try updateTimeZone(SystemLocalTime.reload())
    }

    /// Re-computes the next deadline from the current time and arms the timer for it.
    ///
    /// Re-arming also clears a pending clock-set cancellation.
    ///
    /// - Throws: ``HostSourceError`` if `timerfd_settime` fails.
    public func rearm() throws {
        let current = now()
        try state.withLock { state in
            let deadline = Self.nextDeadline(after: current, in: state.timeZone)
            try alarm.arm(at: deadline.date.timeIntervalSince1970)
            state.armed = deadline
        }
    }

    /// Reads the timer and reports a clock set or the armed deadline, then re-arms.
    ///
    /// - Parameters:
    ///   - revents: The events the loop saw (not needed: the `read` result decides).
    /// - Returns: One `AppLifecycle/HostEvent/significantTimeChange(_:)` carrying the time zone
    ///   identifier, or nothing on a spurious wake-up.
    /// - Throws: ``HostSourceError`` if reading or re-arming fails.
    public func handleReadiness(_ revents: Int16) throws -> [HostEvent] {
        let (armed, identifier) = state.withLock { ($0.armed, $0.timeZone.identifier) }
        let reason: SignificantTimeChange.Reason
        switch try alarm.read() {
        case .expired: reason = armed?.reason ?? .midnight
        case .clockSet: reason = .clockSet
        case .nothing: return []
        }
        try rearm()
        return [.significantTimeChange(SignificantTimeChange(reason: reason, timeZoneIdentifier: identifier))]
    }

    /// Closes the timerfd; idempotent.
    public func close() {
        alarm.close()
        state.withLock { $0.armed = nil }
    }

    // MARK: - Pure computation

    /// The next significant local instant strictly after `now`: the earlier of the next local midnight and the
    /// next UTC-offset transition.
    ///
    /// When both fall on the same instant the result is a `AppLifecycle/SignificantTimeChange/Reason/midnight`
    /// deadline (see the type's discussion).
    ///
    /// - Parameters:
    ///   - now: The current instant.
    ///   - timeZone: The local time zone.
    /// - Returns: The deadline to arm.
    public static func nextDeadline(after now: Date, in timeZone: any UTCOffsetRules) -> Deadline {
        let midnight = nextLocalMidnight(after: now, in: timeZone)
        if let transition = nextOffsetTransition(after: now, in: timeZone), transition < midnight {
            return Deadline(date: transition, reason: .daylightSavingTime)
        }
        return Deadline(date: midnight, reason: .midnight)
    }

    /// The first instant of the next local calendar day.
    ///
    /// On a day where 00:00 does not exist (the clock jumps from 23:59:59 to 01:00), this is the first instant
    /// that exists, 01:00; on a day with two 00:00 (a fall-back at midnight), it is the first one after `now`
    /// at which the local date is the next day.
    ///
    /// - Parameters:
    ///   - now: The current instant.
    ///   - timeZone: The local time zone.
    /// - Returns: An instant strictly after `now`.
    public static func nextLocalMidnight(after now: Date, in timeZone: any UTCOffsetRules) -> Date {
        let start = wholeSeconds(now)
        func day(_ instant: Int) -> Int {
            (instant + timeZone.utcOffset(at: instant)).floorDivided(by: secondsPerDay)
        }
        let today = day(start)
        var cursor = start
        var candidate = (today + 1) * secondsPerDay - timeZone.utcOffset(at: cursor)
        // Each round either finds the midnight or moves past one offset change before it.
        for _ in 0..<8 {
            candidate = (today + 1) * secondsPerDay - timeZone.utcOffset(at: cursor)
            guard let transition = nextOffsetChange(after: cursor, until: candidate, in: timeZone) else { break }
            // The offset changes at or before the midnight the current offset predicts: a jump over
            // midnight makes the transition itself the day's first instant; otherwise predict again.
            if day(transition) > today { return Date(timeIntervalSince1970: Double(transition)) }
            cursor = transition
        }
        return Date(timeIntervalSince1970: Double(candidate))
    }

    /// The next instant strictly after `now` at which the UTC offset of `timeZone` changes.
    ///
    /// Transitions in the time zone database that change only the abbreviation or the DST flag but not the
    /// total offset are skipped: the local clock does not move, so they are not significant. The search looks
    /// a year and a month ahead in steps of six hours, then to the second; a change that is undone within six
    /// hours is not seen (the database has none).
    ///
    /// - Parameters:
    ///   - now: The current instant.
    ///   - timeZone: The local time zone.
    /// - Returns: The transition, or `nil` if the zone has no offset change within the horizon (UTC, most zones
    ///   without DST).
    public static func nextOffsetTransition(after now: Date, in timeZone: any UTCOffsetRules) -> Date? {
        let start = wholeSeconds(now)
        return nextOffsetChange(after: start, until: start + searchHorizon, in: timeZone)
            .map { Date(timeIntervalSince1970: Double($0)) }
    }

    private static let secondsPerDay = 86_400

    /// Whole seconds since the epoch, rounded down; dates beyond a few hundred million years (or not
    /// finite) are clamped rather than trapping.
    private static func wholeSeconds(_ date: Date) -> Int {
        let seconds = date.timeIntervalSince1970
        let limit = Double(1 << 52)
        guard seconds.isFinite else { return seconds > 0 ? Int(limit) : -Int(limit) }
        return Int(min(max(seconds, -limit), limit).rounded(.down))
    }
    private static let searchStep = 6 * 3_600
    private static let searchHorizon = 400 * 86_400

    /// The first whole second in `(start, end]` whose offset differs from the offset at `start`, or `nil`.
    private static func nextOffsetChange(after start: Int, until end: Int, in timeZone: any UTCOffsetRules) -> Int? {
        let offset = timeZone.utcOffset(at: start)
        var low = start
        while low < end {
            let high = min(low + searchStep, end)
            if timeZone.utcOffset(at: high) != offset {
                // low has the old offset, high the new one: halve to the second.
                var (old, new) = (low, high)
                while new - old > 1 {
                    let middle = old + (new - old) / 2
                    if timeZone.utcOffset(at: middle) == offset { old = middle } else { new = middle }
                }
                return new
            }
            low = high
        }
        return nil
    }
}

extension Int {
    /// Division rounding towards negative infinity (days before 1970 are negative).
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
