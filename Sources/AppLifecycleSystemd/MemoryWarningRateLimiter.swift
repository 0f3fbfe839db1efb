import AppLifecycle

/// Decides which memory warnings reach the app: at most one per interval, unless one is more severe.
///
/// Memory sources (PSI `some` and `full` triggers, `$MEMORY_PRESSURE_WATCH`, low-memory-monitor) may fire
/// together and repeatedly while pressure lasts; the app should hear about it, not be flooded. The bridge
/// runs every memory warning of an app through one limiter:
/// - The first warning passes.
/// - A warning passes if at least ``interval`` has passed since the last warning that passed.
/// - A warning **more severe** than the last one that passed passes at once, whatever the interval
///   (`low` → `critical` is news); an equal or less severe one within the interval is dropped.
/// - A warning that passes starts a new interval and becomes the reference level. Dropped warnings are not
///   queued or coalesced: pressure that lasts keeps firing, so the next one after the interval passes.
///
/// Pure logic over a monotonic clock: ``admit(_:at:)`` takes the instant explicitly (tests pass their own),
/// `admit(_:)` reads the injected clock.
public struct MemoryWarningRateLimiter: Sendable {
    /// The minimum time between two delivered warnings of the same or lower severity.
    public var interval: Duration
    private let now: @Sendable () -> ContinuousClock.Instant
    private var last: (level: MemoryWarning.Level, at: ContinuousClock.Instant)?

    /// Creates a limiter.
    ///
    /// - Parameters:
    ///   - interval: The minimum time between two delivered warnings; 10 s by default.
    ///   - now: The monotonic clock; `ContinuousClock.now` by default.
    public init(
        interval: Duration = .seconds(10),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.interval = interval
        self.now = now
    }

    /// The level and instant of the last warning that passed, if any.
    public var lastDelivered: (level: MemoryWarning.Level, at: ContinuousClock.Instant)? { last }

    /// Decides whether a warning of `level` arriving now is delivered, and records it if so.
    ///
    /// - Parameters:
    ///   - level: The warning's level.
    /// - Returns: `true` if the warning is to be delivered.
    public mutating func admit(_ level: MemoryWarning.Level) -> Bool {
        admit(level, at: now())
    }

    /// Decides whether a warning of `level` arriving at `instant` is delivered, and records it if so.
    ///
    /// - Parameters:
    ///   - level: The warning's level.
    ///   - instant: When it arrived, on the monotonic clock; not earlier than the previous call's.
    /// - Returns: `true` if the warning is to be delivered.
    public mutating func admit(_ level: MemoryWarning.Level, at instant: ContinuousClock.Instant) -> Bool {
        if let last, level <= last.level, instant < last.at + interval {
            return false
        }
        last = (level, instant)
        return true
    }

    /// Decides whether a warning is delivered now, and records it if so.
    ///
    /// - Parameters:
    ///   - warning: The warning; only its level matters.
    /// - Returns: `true` if the warning is to be delivered.
    public mutating func admit(_ warning: MemoryWarning) -> Bool {
        admit(warning.level)
    }
}
