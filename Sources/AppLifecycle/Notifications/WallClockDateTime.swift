/// A reading of a wall clock: a proleptic-Gregorian date and a time of day, with no time zone.
///
/// What a floating-time local notification fires at (``LocalNotification/timeZone`` set) and what
/// its repeats count in (``CalendarUnit``): the host turns it into an instant with the offset of the
/// zone in force, so it follows time-zone and daylight-saving changes. Pure arithmetic on the
/// civil calendar (no ICU, no `Calendar`), so the daemon computes it as cheaply as the app.
public struct WallClockDateTime: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The year (astronomical: 0 is 1 BC).
    public var year: Int
    /// 1…12.
    public var month: Int
    /// 1…31.
    public var day: Int
    /// 0…23.
    public var hour: Int
    /// 0…59.
    public var minute: Int
    /// 0…59.
    public var second: Int

    /// Creates a reading; `nil` when a field is out of range (the 31st of a 30-day month, 24:00).
    public init?(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        guard (-100_000...100_000).contains(year), (1...12).contains(month),
            (1...Self.daysInMonth(year: year, month: month)).contains(day), (0...23).contains(hour),
            (0...59).contains(minute), (0...59).contains(second)
        else { return nil }
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// The reading of a clock `utcOffset` seconds east of UTC at `instant` (whole seconds since the epoch).
    public init(instant: Int, utcOffset: Int) {
        let local = instant + utcOffset
        let days = local.floorDivided(by: 86_400)
        let seconds = local - days * 86_400
        (year, month, day) = Self.civil(fromDays: days)
        hour = seconds / 3_600
        minute = seconds % 3_600 / 60
        second = seconds % 60
    }

    /// The instant this reading would be on a clock at UTC (seconds since the epoch); subtract a
    /// zone's offset to get the instant in that zone.
    public var secondsAsUTC: Int {
        Self.days(fromCivil: year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
    }

    /// `YYYY-MM-DDTHH:MM:SS`, the form schedules and command lines carry.
    public var description: String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(abs(value))
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS]` (a space may replace the `T`); `nil` when malformed or out of range.
    public init?(_ text: String) {
        let parts = text.split(whereSeparator: { $0 == "T" || $0 == " " })
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, (2...3).contains(time.count),
            date.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            time.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCII) }),
            let year = Int(date[0]), let month = Int(date[1]), let day = Int(date[2]), let hour = Int(time[0]),
            let minute = Int(time[1])
        else { return nil }
        let second = time.count == 3 ? Int(time[2]) : 0
        guard let second else { return nil }
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// This reading moved by `count` calendar units: days and weeks keep the time of day, months
    /// and years keep the day (clamped to the month's last), hours and minutes move the clock.
    public func adding(_ count: Int, _ unit: CalendarUnit) -> WallClockDateTime {
        var result = self
        switch unit {
        case .minute, .hour:
            let seconds = secondsAsUTC + count * (unit == .minute ? 60 : 3_600)
            return WallClockDateTime(instant: seconds, utcOffset: 0)
        case .day, .weekOfYear:
            let days = Self.days(fromCivil: year, month, day) + count * (unit == .day ? 1 : 7)
            (result.year, result.month, result.day) = Self.civil(fromDays: days)
        case .month, .year:
            let months = year * 12 + (month - 1) + count * (unit == .month ? 1 : 12)
            result.year = months.floorDivided(by: 12)
            result.month = months - result.year * 12 + 1
            result.day = min(day, Self.daysInMonth(year: result.year, month: result.month))
        }
        return result
    }

    /// Orders readings by date, then time.
    public static func < (lhs: WallClockDateTime, rhs: WallClockDateTime) -> Bool {
        lhs.secondsAsUTC < rhs.secondsAsUTC
    }

    /// The number of days in a month of the proleptic Gregorian calendar.
    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days_from_civil and civil_from_days.
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

extension Int {
    /// Division rounding towards negative infinity.
    fileprivate func floorDivided(by divisor: Int) -> Int {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
