import AppLifecycle

/// Checks on decoded values that the targets' properties need.
enum FuzzValues {
    /// Whether any double inside is NaN (NaN is not equal to itself, so a round trip of such a
    /// value cannot be compared with `==`).
    static func containsNaN(_ value: UserInfoValue) -> Bool {
        switch value {
        case .double(let double): return double.isNaN
        case .array(let values): return values.contains(where: containsNaN)
        case .dictionary(let values): return values.values.contains(where: containsNaN)
        case .date(let date): return date.timeIntervalSince1970.isNaN
        default: return false
        }
    }

    static func containsNaN(_ payloads: [[String: UserInfoValue]]) -> Bool {
        payloads.contains { containsNaN(.dictionary($0)) }
    }

    /// How far apart two dates may be and still count as the same after a trip through a JSON file.
    ///
    /// 0: a date is written to the nearest millisecond and reads back the same at every later save
    /// (it drifted by up to 2 ms over two saves while the formatter's truncation showed through; the
    /// reproducer is Fuzz/Corpus/schedule-file/date-drift-040ms).
    static let dateTolerance = 0.0

    /// Equality as a JSON file keeps values: a whole `double` reads back as an `int` (documented by
    /// `UserInfoValue`), dates within ``dateTolerance``.
    static func sameAfterJSON(_ lhs: UserInfoValue, _ rhs: UserInfoValue) -> Bool {
        switch (lhs, rhs) {
        case (.double(let double), .int(let int)), (.int(let int), .double(let double)):
            return Double(int) == double
        case (.date(let a), .date(let b)):
            return abs(a.timeIntervalSince1970 - b.timeIntervalSince1970) <= dateTolerance
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy(sameAfterJSON)
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map { sameAfterJSON(value, $0) } ?? false }
        default:
            return lhs == rhs
        }
    }
}
