import AppLifecycleSystemd
import Foundation

/// Foundation's zones (ICU's copy of the time-zone database) as the schedule's rules, so its civil-time
/// arithmetic is checked against an implementation that is not glibc's.
extension TimeZone: UTCOffsetRules {
    public func utcOffset(at instant: Int) -> Int {
        secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant)))
    }
}
