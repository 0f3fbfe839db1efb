/// A calendar unit a local notification repeats by: the counterpart of the `NSCalendar.Unit`
/// values `UILocalNotification.repeatInterval` accepts.
///
/// Repeats are counted on the local wall clock, not in seconds: a notification at 08:00 that
/// repeats every ``day`` fires at 08:00 on the day after a daylight-saving change too (23 or 25
/// hours later), and one on the 31st that repeats every ``month`` fires on the last day of the
/// shorter months.
public enum CalendarUnit: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every minute.
    case minute
    /// Every hour of wall-clock time.
    case hour
    /// Every day at the same wall-clock time.
    case day
    /// Every seven days at the same wall-clock time.
    case weekOfYear
    /// Every month on the same day (the month's last day when it is shorter) at the same time.
    case month
    /// Every year on the same date (28 February for 29 February) at the same time.
    case year
}
