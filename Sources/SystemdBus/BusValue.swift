/// One D-Bus value of any type, with enough type information to marshal it exactly.
///
/// Containers carry their element signatures so that empty arrays and dictionaries still
/// marshal with the right type. Read any message generically into `BusValue`s, and map them
/// to your own types with the accessors (``stringValue``, ``boolValue``, ``dictionaryValue``…),
/// which also look through variants.
public enum BusValue: Sendable, Equatable, CustomStringConvertible {
    /// `y`: an unsigned byte.
    case byte(UInt8)
    /// `b`: a boolean.
    case bool(Bool)
    /// `n`: a signed 16-bit integer.
    case int16(Int16)
    /// `q`: an unsigned 16-bit integer.
    case uint16(UInt16)
    /// `i`: a signed 32-bit integer.
    case int32(Int32)
    /// `u`: an unsigned 32-bit integer.
    case uint32(UInt32)
    /// `x`: a signed 64-bit integer.
    case int64(Int64)
    /// `t`: an unsigned 64-bit integer.
    case uint64(UInt64)
    /// `d`: an IEEE 754 double.
    case double(Double)
    /// `s`: a UTF-8 string (no NUL bytes).
    case string(String)
    /// `o`: an object path such as `/org/freedesktop/login1`.
    case objectPath(String)
    /// `g`: a type signature such as `a{sv}`.
    case signature(String)
    /// `h`: an owned Unix file descriptor (see ``BusFileDescriptor`` for who closes it).
    case unixFD(BusFileDescriptor)
    /// `a…`: an array whose elements all have `elementSignature` (for example `s` or `(so)`).
    case array(elementSignature: String, [BusValue])
    /// `a{kv}`: a dictionary; `keySignature` must be a basic type, entries keep their order.
    case dictionary(keySignature: String, valueSignature: String, [BusDictionaryEntry])
    /// `(…)`: a struct of the given fields (at least one).
    case structure([BusValue])
    /// `v`: a variant holding one value of any type.
    indirect case variant(BusValue)

    /// The D-Bus type signature of this value, for example `a{sv}` or `(so)`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .bool: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// The concatenated signature of a list of values (a message body's signature).
    ///
    /// - Parameters:
    ///   - values: The values in order.
    public static func signature(of values: [BusValue]) -> String {
        values.map(\.signature).joined()
    }

    // MARK: Convenience constructors

    /// An `as` array of strings.
    ///
    /// - Parameters:
    ///   - strings: The elements.
    public static func stringArray(_ strings: [String]) -> BusValue {
        .array(elementSignature: "s", strings.map { .string($0) })
    }

    /// An `a{sv}` dictionary (the usual "vardict"), keys sorted for a stable order.
    ///
    /// Values that are not variants already are wrapped in one.
    ///
    /// - Parameters:
    ///   - entries: The entries; each value becomes a variant.
    public static func vardict(_ entries: [String: BusValue]) -> BusValue {
        .dictionary(
            keySignature: "s", valueSignature: "v",
            entries.sorted { $0.key < $1.key }.map { key, value in
                if case .variant = value { return BusDictionaryEntry(key: .string(key), value: value) }
                return BusDictionaryEntry(key: .string(key), value: .variant(value))
            })
    }

    // MARK: Accessors

    /// The value inside any number of variants.
    public var unwrapped: BusValue {
        if case .variant(let inner) = self { return inner.unwrapped }
        return self
    }

    /// The text of a `s`, `o` or `g` value (through variants), else `nil`.
    public var stringValue: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): s
        default: nil
        }
    }

    /// The value of a `b` (through variants), else `nil`.
    public var boolValue: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    /// The value of a `y` (through variants), else `nil`.
    public var byteValue: UInt8? {
        if case .byte(let v) = unwrapped { return v }
        return nil
    }

    /// Any integer type (`y n q i u x t`) as `Int64`, when it fits (through variants), else `nil`.
    public var int64Value: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// Any non-negative integer type as `UInt64` (through variants), else `nil`.
    public var uint64Value: UInt64? {
        if case .uint64(let v) = unwrapped { return v }
        return int64Value.flatMap { UInt64(exactly: $0) }
    }

    /// Any integer type as `Int32` when it fits (through variants), else `nil`.
    public var int32Value: Int32? { int64Value.flatMap { Int32(exactly: $0) } }

    /// Any integer type as `UInt32` when it fits (through variants), else `nil`.
    public var uint32Value: UInt32? { int64Value.flatMap { UInt32(exactly: $0) } }

    /// A `d` value, or any integer converted to `Double` (through variants), else `nil`.
    public var doubleValue: Double? {
        if case .double(let d) = unwrapped { return d }
        return int64Value.map(Double.init)
    }

    /// The descriptor of an `h` value (through variants), else `nil`.
    public var fileDescriptor: BusFileDescriptor? {
        if case .unixFD(let fd) = unwrapped { return fd }
        return nil
    }

    /// The elements of an array (through variants), else `nil`. Dictionaries are not arrays here.
    public var arrayValue: [BusValue]? {
        if case .array(_, let elements) = unwrapped { return elements }
        return nil
    }

    /// The strings of an `as`/`ao` array (through variants), else `nil`.
    public var stringArrayValue: [String]? {
        guard let elements = arrayValue else { return nil }
        var result: [String] = []
        for element in elements {
            guard let s = element.stringValue else { return nil }
            result.append(s)
        }
        return result
    }

    /// The entries of a dictionary (through variants), else `nil`.
    public var dictionaryEntries: [BusDictionaryEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// A dictionary with string-like keys as a Swift dictionary (values as stored, variants kept).
    ///
    /// For an `a{sv}` the values are `.variant`; use ``unwrapped`` or the accessors on them.
    /// A later duplicate key wins. `nil` if this is not a dictionary with `s`, `o` or `g` keys.
    public var dictionaryValue: [String: BusValue]? {
        guard let entries = dictionaryEntries else { return nil }
        var result: [String: BusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            result[key] = entry.value
        }
        return result
    }

    /// The fields of a struct (through variants), else `nil`.
    public var structValue: [BusValue]? {
        if case .structure(let fields) = unwrapped { return fields }
        return nil
    }

    /// A compact textual form, close to busctl's, for logs.
    public var description: String {
        switch self {
        case .byte(let v): "y \(v)"
        case .bool(let v): "b \(v)"
        case .int16(let v): "n \(v)"
        case .uint16(let v): "q \(v)"
        case .int32(let v): "i \(v)"
        case .uint32(let v): "u \(v)"
        case .int64(let v): "x \(v)"
        case .uint64(let v): "t \(v)"
        case .double(let v): "d \(v)"
        case .string(let v): "s \"\(v)\""
        case .objectPath(let v): "o \"\(v)\""
        case .signature(let v): "g \"\(v)\""
        case .unixFD(let fd): "h \(fd)"
        case .array(let element, let values): "a\(element) [\(values.map(\.description).joined(separator: ", "))]"
        case .dictionary(let k, let v, let entries):
            "a{\(k)\(v)} {\(entries.map { "\($0.key.description): \($0.value.description)" }.joined(separator: ", "))}"
        case .structure(let fields): "(\(fields.map(\.description).joined(separator: ", ")))"
        case .variant(let inner): "v <\(inner.description)>"
        }
    }

    /// Structural equality; descriptors compare by their current raw fd number.
    ///
    /// - Parameters:
    ///   - lhs: A value.
    ///   - rhs: Another value.
    public static func == (lhs: BusValue, rhs: BusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a == b || (a.isNaN && b.isNaN)
        case (.string(let a), .string(let b)): a == b
        case (.objectPath(let a), .objectPath(let b)): a == b
        case (.signature(let a), .signature(let b)): a == b
        case (.unixFD(let a), .unixFD(let b)): a === b || a.rawValue == b.rawValue
        case (.array(let sa, let a), .array(let sb, let b)): sa == sb && a == b
        case (.dictionary(let ka, let va, let a), .dictionary(let kb, let vb, let b)): ka == kb && va == vb && a == b
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }
}
