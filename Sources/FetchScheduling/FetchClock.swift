import FoundationEssentials

/// The fetch scheduler's clock in lifecycled and in `SystemdHost`: Unix seconds (`CLOCK_REALTIME`,
/// so a schedule survives restarts and reboots), plus an offset that only a test moves.
///
/// The offset is the test clock: a test advances it by hours in a call instead of waiting for
/// them. In lifecycled only `Simulate("fetch-clock")` moves it, refused unless lifecycled runs
/// with `--enable-simulate` (and, like every method, from a caller of the daemon's own uid); in
/// `SystemdHost` only its package-level `advanceFetchClock(by:)`, which no app outside this
/// package can reach. In production the offset stays 0 and this is the wall clock.
package struct FetchClock: Sendable {
    /// Seconds added to the wall clock (0 unless a simulation moved it).
    package private(set) var offset: Double = 0

    /// The wall clock.
    package init() {}

    /// Now, in Unix seconds plus ``offset``.
    package var now: Double { wallClock() + offset }

    /// The wall clock alone, in Unix seconds.
    package func wallClock() -> Double { Date().timeIntervalSince1970 }

    /// A wake-up at `wake` (on this clock) as the event loop's `CLOCK_REALTIME` deadline in
    /// microseconds: the offset taken off, never before the epoch nor beyond a century from now,
    /// so that no time the scheduler holds can overflow the conversion.
    ///
    /// - Parameters:
    ///   - wake: When, in Unix seconds on this clock.
    package func loopDeadlineMicroseconds(for wake: Double) -> Int64 {
        let wall = wake - offset
        let latest = wallClock() + 100 * 365 * 24 * 3600
        return Int64((wall.isFinite ? min(max(wall, 0), latest) : latest) * 1e6)
    }

    /// Moves the clock forward (a test's simulated time passing).
    ///
    /// - Parameters:
    ///   - seconds: How far; finite and not negative.
    package mutating func advance(by seconds: Double) {
        precondition(seconds.isFinite && seconds >= 0, "the fetch clock only moves forward")
        offset += seconds
    }
}
