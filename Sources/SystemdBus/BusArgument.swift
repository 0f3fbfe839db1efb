/// A Swift type that one complete D-Bus type decodes to and encodes from: the typed arguments and
/// results of an ``ExportedMethod``.
///
/// The conformances cover the basic types (`Bool`, the integers, `Double`, `String`,
/// ``BusObjectPath``), arrays of any of them (`[UInt8]` is `ay`), dictionaries (`[String: BusValue]`
/// is the vardict `a{sv}`), ``BusValue`` itself as a variant (`v`) and ``BusStruct`` for structs.
/// A type of your own that checks the value as well (an id's syntax, a length limit) conforms the
/// same way and throws ``BusError`` from ``init(busValue:)``: the method's decoding turns that into
/// the `InvalidArgs` reply, naming the argument.
public protocol BusArgument: Sendable {
    /// The one complete D-Bus type of the values, for example `s` or `a{sv}`.
    static var busSignature: String { get }
    /// Decodes a value of ``busSignature``.
    ///
    /// - Parameters:
    ///   - busValue: The value as read from the message.
    /// - Throws: ``BusError`` when the value has another type or is not acceptable; its message says why.
    init(busValue: BusValue) throws(BusError)
    /// The value to marshal; it has ``busSignature``.
    var busValue: BusValue { get }
}

extension BusArgument {
    /// The `InvalidArgs` error for a value of another type than ``busSignature``.
    static func typeMismatch(_ value: BusValue) -> BusError {
        BusError(
            name: BusError.Name.invalidArgs, message: "expected type \(busSignature), got \(value.signature)",
            errno: 22)
    }
}

extension Bool: BusArgument {
    public static var busSignature: String { "b" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .bool(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .bool(self) }
}

extension UInt8: BusArgument {
    public static var busSignature: String { "y" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .byte(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .byte(self) }
}

extension Int16: BusArgument {
    public static var busSignature: String { "n" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .int16(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .int16(self) }
}

extension UInt16: BusArgument {
    public static var busSignature: String { "q" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .uint16(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .uint16(self) }
}

extension Int32: BusArgument {
    public static var busSignature: String { "i" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .int32(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .int32(self) }
}

extension UInt32: BusArgument {
    public static var busSignature: String { "u" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .uint32(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .uint32(self) }
}

extension Int64: BusArgument {
    public static var busSignature: String { "x" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .int64(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .int64(self) }
}

extension UInt64: BusArgument {
    public static var busSignature: String { "t" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .uint64(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .uint64(self) }
}

extension Double: BusArgument {
    public static var busSignature: String { "d" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .double(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .double(self) }
}

extension String: BusArgument {
    public static var busSignature: String { "s" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .string(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .string(self) }
}

/// `v`: the value inside the variant (a variant of a variant keeps the inner one).
extension BusValue: BusArgument {
    public static var busSignature: String { "v" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .variant(let value) = busValue else { throw Self.typeMismatch(busValue) }
        self = value
    }
    public var busValue: BusValue { .variant(self) }
}

extension Array: BusArgument where Element: BusArgument {
    public static var busSignature: String { "a" + Element.busSignature }
    public init(busValue: BusValue) throws(BusError) {
        guard case .array(let element, let values) = busValue, element == Element.busSignature else {
            throw Self.typeMismatch(busValue)
        }
        var decoded: [Element] = []
        decoded.reserveCapacity(values.count)
        for value in values { decoded.append(try Element(busValue: value)) }
        self = decoded
    }
    public var busValue: BusValue { .array(elementSignature: Element.busSignature, map(\.busValue)) }
}

/// `a{kv}`, keys sorted on encoding (a stable order on the wire); a key repeated on the wire keeps
/// its last value.
extension Dictionary: BusArgument where Key: BusArgument & Comparable, Value: BusArgument {
    public static var busSignature: String { "a{" + Key.busSignature + Value.busSignature + "}" }
    public init(busValue: BusValue) throws(BusError) {
        guard case .dictionary(let key, let value, let entries) = busValue, key == Key.busSignature,
            value == Value.busSignature
        else { throw Self.typeMismatch(busValue) }
        var decoded: [Key: Value] = [:]
        for entry in entries { decoded[try Key(busValue: entry.key)] = try Value(busValue: entry.value) }
        self = decoded
    }
    public var busValue: BusValue {
        .dictionary(
            keySignature: Key.busSignature, valueSignature: Value.busSignature,
            sorted { $0.key < $1.key }.map { BusDictionaryEntry(key: $0.key.busValue, value: $0.value.busValue) })
    }
}
