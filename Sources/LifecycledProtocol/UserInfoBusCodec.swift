import AppLifecycle
import FoundationEssentials
import SystemdBus

/// Converts between notification payloads (`UserInfo`, `UserInfoValue`) and D-Bus values.
///
/// A userInfo travels as `a{sv}`. Each value maps to the natural D-Bus type:
///
/// | UserInfoValue | D-Bus |
/// | --- | --- |
/// | string | `s` |
/// | int | `x` |
/// | double | `d` |
/// | bool | `b` |
/// | data | `ay` |
/// | array | `av` |
/// | dictionary | `a{sv}` |
/// | date | `(sv)` = `("date", <d seconds since 1970>)` |
/// | null | `(sv)` = `("null", <s "">)` |
///
/// D-Bus has no date and no null, hence the tagged structs. Decoding is lenient where it is safe:
/// every integer type reads as `int` (a `t` above `Int64.max` is refused), `o` and `g` read as
/// strings, any `a{s…}` as a dictionary, any other array as an array, and any other struct as an
/// array of its fields. File descriptors, non-string dictionary keys, dates outside
/// `UserInfoValue.representableDateSeconds` (NaN among them) and values nested deeper than
/// ``maximumDepth`` are refused with `ApplicationError/Code/invalidInput`, never a crash.
public enum UserInfoBusCodec {
    /// The deepest nesting accepted when decoding (arrays and dictionaries).
    public static let maximumDepth = 16

    /// The size of a userInfo's D-Bus form (`a{sv}`, as `encode(_:)` builds it), in bytes, without
    /// alignment padding: what the limits measure, since it is what is sent.
    ///
    /// - Parameters:
    ///   - userInfo: The payload to measure.
    public static func wireSize(of userInfo: UserInfo) -> Int {
        wireSize(of: encode(userInfo))
    }

    /// The marshalled size of a value, without alignment padding.
    static func wireSize(of value: BusValue) -> Int {
        switch value {
        case .byte: return 1
        case .bool, .int32, .uint32, .unixFD: return 4
        case .int16, .uint16: return 2
        case .int64, .uint64, .double: return 8
        case .string(let text), .objectPath(let text), .signature(let text): return 4 + text.utf8.count + 1
        case .variant(let inner): return 1 + inner.signature.utf8.count + 1 + wireSize(of: inner)
        case .array(_, let elements), .structure(let elements): return 4 + elements.reduce(0) { $0 + wireSize(of: $1) }
        case .dictionary(_, _, let entries):
            return 4 + entries.reduce(0) { $0 + wireSize(of: $1.key) + wireSize(of: $1.value) }
        }
    }

    /// The `a{sv}` form of a userInfo.
    public static func encode(_ userInfo: UserInfo) -> BusValue {
        .vardict(userInfo.values.mapValues(encode))
    }

    /// The D-Bus form of one value (see the type's table).
    public static func encode(_ value: UserInfoValue) -> BusValue {
        switch value {
        case .string(let string): return .string(string)
        case .int(let int): return .int64(int)
        case .double(let double): return .double(double)
        case .bool(let bool): return .bool(bool)
        case .data(let data): return .array(elementSignature: "y", data.map { .byte($0) })
        case .array(let values): return .array(elementSignature: "v", values.map { .variant(encode($0)) })
        case .dictionary(let values): return .vardict(values.mapValues(encode))
        case .date(let date): return .structure([.string("date"), .variant(.double(date.timeIntervalSince1970))])
        case .null: return .structure([.string("null"), .variant(.string(""))])
        }
    }

    /// Reads a userInfo from an `a{sv}` (or any string-keyed dictionary).
    ///
    /// - Parameters:
    ///   - value: The D-Bus value.
    /// - Throws: `ApplicationError` with code `invalidInput` when it is not a string-keyed
    ///   dictionary or holds a value that cannot be a userInfo value.
    public static func decodeUserInfo(_ value: BusValue) throws -> UserInfo {
        guard case .dictionary(let values) = try decode(value, depth: 0) else {
            throw ApplicationError(.invalidInput, "userInfo must be a{sv}, got \(value.signature)")
        }
        return UserInfo(values)
    }

    /// Reads one value (see the type's table for what is accepted).
    ///
    /// - Parameters:
    ///   - value: The D-Bus value.
    /// - Throws: `ApplicationError` with code `invalidInput`.
    public static func decode(_ value: BusValue) throws -> UserInfoValue {
        try decode(value, depth: 0)
    }

    private static func decode(_ value: BusValue, depth: Int) throws -> UserInfoValue {
        guard depth <= maximumDepth else {
            throw ApplicationError(.invalidInput, "value nested deeper than \(maximumDepth)")
        }
        switch value {
        case .byte(let v): return .int(Int64(v))
        case .bool(let v): return .bool(v)
        case .int16(let v): return .int(Int64(v))
        case .uint16(let v): return .int(Int64(v))
        case .int32(let v): return .int(Int64(v))
        case .uint32(let v): return .int(Int64(v))
        case .int64(let v): return .int(v)
        case .uint64(let v):
            guard let exact = Int64(exactly: v) else {
                throw ApplicationError(.invalidInput, "integer \(v) exceeds Int64")
            }
            return .int(exact)
        case .double(let v): return .double(v)
        case .string(let v), .objectPath(let v), .signature(let v): return .string(v)
        case .unixFD: throw ApplicationError(.invalidInput, "file descriptors cannot be userInfo values")
        case .variant(let inner): return try decode(inner, depth: depth)
        case .array(let elementSignature, let elements):
            if elementSignature == "y" {
                return .data(Data(elements.compactMap { if case .byte(let b) = $0 { b } else { nil } }))
            }
            return .array(try elements.map { try decode($0, depth: depth + 1) })
        case .dictionary(let keySignature, _, let entries):
            guard keySignature == "s" || keySignature == "o" else {
                throw ApplicationError(.invalidInput, "dictionary keys must be strings, got \(keySignature)")
            }
            var values: [String: UserInfoValue] = [:]
            for entry in entries {
                guard let key = entry.key.stringValue else {
                    throw ApplicationError(.invalidInput, "dictionary key is not a string")
                }
                values[key] = try decode(entry.value, depth: depth + 1)
            }
            return .dictionary(values)
        case .structure(let fields):
            if fields.count == 2, let tag = fields[0].stringValue {
                if tag == "date", let seconds = fields[1].unwrapped.doubleValue {
                    guard UserInfoValue.representableDateSeconds.contains(seconds) else {
                        throw ApplicationError(
                            .invalidInput, "date \(seconds) is outside year 1 to 9999 or not a number")
                    }
                    return .date(Date(timeIntervalSince1970: seconds))
                }
                if tag == "null" { return .null }
            }
            return .array(try fields.map { try decode($0, depth: depth + 1) })
        }
    }
}
