/// A time zone as the wall-clock timer needs it: its name and the UTC offset in force at any
/// instant.
///
/// ``SystemLocalTime`` answers from the system's time-zone database through glibc, with no ICU;
/// Foundation's `TimeZone` can conform too (in code that links full Foundation), which is how the
/// tests compare the two.
public protocol UTCOffsetRules: Sendable {
    /// The zone's name, for example `Europe/Berlin`.
    var identifier: String { get }

    /// Seconds east of UTC in force at `instant`.
    ///
    /// - Parameters:
    ///   - instant: Seconds since the Unix epoch.
    func utcOffset(at instant: Int) -> Int
}
