import FoundationEssentials

/// One property-list value, or null: the values a notification's userInfo may hold.
///
/// UIKit documents userInfo and launch-option payloads as "property-list objects plus
/// `NSNull`". `UserInfoValue` is that set as a Swift value type: strings, integers,
/// floating-point numbers, Booleans, dates, raw bytes, arrays, string-keyed dictionaries
/// and ``null``. It is `Sendable`, `Hashable` and `Codable`, so it crosses actors, goes
/// into JSON traces and onto D-Bus without loss.
///
/// ## JSON form
///
/// Strings, numbers, Booleans, arrays, dictionaries and null encode as themselves. A date
/// encodes as `{"$date": "<ISO 8601 with fractional seconds>"}` and bytes as
/// `{"$data": "<base64>"}`, so that decoding gives back the same case. A dictionary whose
/// only key is `$date` or `$data` with a string value is therefore read as a date or bytes.
/// JSON has one number type: a ``double(_:)`` with no fractional part is written as a whole
/// number and reads back as an ``int(_:)`` of the same value (``doubleValue`` is unchanged).
public enum UserInfoValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// A signed 64-bit integer.
    case int(Int64)
    /// A double-precision floating-point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// An ordered list of values.
    case array([UserInfoValue])
    /// A dictionary with string keys.
    case dictionary([String: UserInfoValue])
    /// The null value (`NSNull` in UIKit's payloads).
    case null

    /// The instants a ``date(_:)`` may hold, in seconds since 1970: year 1 to year 9999, the range
    /// every clock, calendar and ISO 8601 form here can carry. A date outside it (or NaN) would be
    /// rewritten silently by those (NaN as -4712-01-01, 1e300 as year 506713), so it is refused.
    public static let representableDateSeconds: ClosedRange<Double> = -62_135_596_800...253_402_300_799
}

extension UserInfoValue {
    /// The string, when this value is a ``string(_:)``.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The integer, when this value is an ``int(_:)``, or a ``double(_:)`` with no fractional part.
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value):
            guard value.rounded() == value, let exact = Int64(exactly: value) else { return nil }
            return exact
        default: return nil
        }
    }

    /// The number as a `Double`, when this value is an ``int(_:)`` or a ``double(_:)``.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The Boolean, when this value is a ``bool(_:)``.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The date, when this value is a ``date(_:)``.
    public var dateValue: Date? {
        if case .date(let value) = self { return value }
        return nil
    }

    /// The bytes, when this value is a ``data(_:)``.
    public var dataValue: Data? {
        if case .data(let value) = self { return value }
        return nil
    }

    /// The elements, when this value is an ``array(_:)``.
    public var arrayValue: [UserInfoValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The entries, when this value is a ``dictionary(_:)``.
    public var dictionaryValue: [String: UserInfoValue]? {
        if case .dictionary(let value) = self { return value }
        return nil
    }

    /// Whether this value is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The deepest nesting of arrays and dictionaries in this value (a scalar has depth 0).
    ///
    /// Hosts use it to refuse payloads nested deeper than they accept.
    public var nestingDepth: Int {
        switch self {
        case .array(let values): return 1 + (values.map(\.nestingDepth).max() ?? 0)
        case .dictionary(let values): return 1 + (values.values.map(\.nestingDepth).max() ?? 0)
        default: return 0
        }
    }
}

extension UserInfoValue: ExpressibleByStringLiteral {
    /// Creates a ``string(_:)`` from a literal.
    ///
    /// - Parameters:
    ///   - value: The literal.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension UserInfoValue: ExpressibleByIntegerLiteral {
    /// Creates an ``int(_:)`` from a literal.
    ///
    /// - Parameters:
    ///   - value: The literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension UserInfoValue: ExpressibleByFloatLiteral {
    /// Creates a ``double(_:)`` from a literal.
    ///
    /// - Parameters:
    ///   - value: The literal.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension UserInfoValue: ExpressibleByBooleanLiteral {
    /// Creates a ``bool(_:)`` from a literal.
    ///
    /// - Parameters:
    ///   - value: The literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension UserInfoValue: ExpressibleByArrayLiteral {
    /// Creates an ``array(_:)`` from a literal.
    ///
    /// - Parameters:
    ///   - elements: The literal's elements.
    public init(arrayLiteral elements: UserInfoValue...) { self = .array(elements) }
}

extension UserInfoValue: ExpressibleByDictionaryLiteral {
    /// Creates a ``dictionary(_:)`` from a literal; a repeated key keeps its last value.
    ///
    /// - Parameters:
    ///   - elements: The literal's key-value pairs.
    public init(dictionaryLiteral elements: (String, UserInfoValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension UserInfoValue: ExpressibleByNilLiteral {
    /// Creates ``null``.
    ///
    /// - Parameters:
    ///   - nilLiteral: The literal `nil`.
    public init(nilLiteral: ()) { self = .null }
}

extension UserInfoValue: Codable {
    private struct TagKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let dateTag = "$date"
    private static let dataTag = "$data"

    /// Decodes a value from its JSON form (see the type's discussion).
    ///
    /// - Parameters:
    ///   - decoder: The decoder to read from.
    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: TagKey.self) {
            if keyed.allKeys.count == 1, let key = keyed.allKeys.first,
                let tagged = try? keyed.decode(String.self, forKey: key)
            {
                if key.stringValue == Self.dateTag, let date = Self.parseDate(tagged) {
                    self = .date(date)
                    return
                }
                if key.stringValue == Self.dataTag, let data = Data(base64Encoded: tagged) {
                    self = .data(data)
                    return
                }
            }
            var entries: [String: UserInfoValue] = [:]
            for key in keyed.allKeys {
                entries[key.stringValue] = try keyed.decode(UserInfoValue.self, forKey: key)
            }
            self = .dictionary(entries)
            return
        }
        if var unkeyed = try? decoder.unkeyedContainer() {
            var elements: [UserInfoValue] = []
            if let count = unkeyed.count { elements.reserveCapacity(count) }
            while !unkeyed.isAtEnd {
                elements.append(try unkeyed.decode(UserInfoValue.self))
            }
            self = .array(elements)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() {
            self = .null
        } else if let value = try? single.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? single.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? single.decode(Double.self) {
            self = .double(value)
        } else if let value = try? single.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: single, debugDescription: "not a property-list value or null")
        }
    }

    /// Encodes the value in its JSON form (see the type's discussion).
    ///
    /// - Parameters:
    ///   - encoder: The encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .int(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .double(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .bool(let value):
            var single = encoder.singleValueContainer()
            try single.encode(value)
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .date(let value):
            var keyed = encoder.container(keyedBy: TagKey.self)
            try keyed.encode(Self.formatDate(value), forKey: TagKey(stringValue: Self.dateTag))
        case .data(let value):
            var keyed = encoder.container(keyedBy: TagKey.self)
            try keyed.encode(value.base64EncodedString(), forKey: TagKey(stringValue: Self.dataTag))
        case .array(let values):
            var unkeyed = encoder.unkeyedContainer()
            for value in values { try unkeyed.encode(value) }
        case .dictionary(let values):
            var keyed = encoder.container(keyedBy: TagKey.self)
            for key in values.keys.sorted() {
                try keyed.encode(values[key]!, forKey: TagKey(stringValue: key))
            }
        }
    }

    /// The ISO 8601 text of a date, to the nearest millisecond. The formatter truncates, and a
    /// millisecond is rarely exact in binary (x.040 is x.03999…), so without the half millisecond
    /// added first a date lost up to a millisecond at every save (found by the schedule-file fuzz
    /// target: 496 of 1,000 values moved on the first save, 104 again on the second).
    static func formatDate(_ date: Date) -> String {
        date.addingTimeInterval(0.0005).formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    static func parseDate(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

extension UserInfoValue: CustomStringConvertible {
    /// A compact, JSON-like rendering for timelines and logs.
    public var description: String {
        switch self {
        case .string(let value): return "\"\(value)\""
        case .int(let value): return String(value)
        case .double(let value): return String(value)
        case .bool(let value): return value ? "true" : "false"
        case .date(let value): return Self.formatDate(value)
        case .data(let value): return "<\(value.count) bytes>"
        case .null: return "null"
        case .array(let values): return "[" + values.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let values):
            return "{" + values.keys.sorted().map { "\($0): \(values[$0]!.description)" }.joined(separator: ", ") + "}"
        }
    }
}
