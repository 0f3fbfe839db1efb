import CSystemd
import Glibc

/// Marshals ``BusValue``s into sd-bus messages and reads any message back, generically.
///
/// Internal: used on the loop thread with messages the loop owns. Reading walks the message
/// with `sd_bus_message_peek_type`, so any signature can be decoded without knowing it in
/// advance; appending uses only the non-variadic `append_basic` / `open_container` calls.
enum BusMessageCodec {
    private static func code(_ c: Character) -> CChar { CChar(bitPattern: c.asciiValue!) }

    // MARK: Appending

    /// Appends values in order to a message being built.
    static func append(_ values: [BusValue], to message: OpaquePointer) throws(BusError) {
        for value in values { try append(value, to: message) }
    }

    /// Appends one value (recursively for containers) to a message being built.
    static func append(_ value: BusValue, to m: OpaquePointer) throws(BusError) {
        switch value {
        case .byte(var v): try basic(m, "y", &v)
        case .bool(let b):
            var v: Int32 = b ? 1 : 0
            try basic(m, "b", &v)
        case .int16(var v): try basic(m, "n", &v)
        case .uint16(var v): try basic(m, "q", &v)
        case .int32(var v): try basic(m, "i", &v)
        case .uint32(var v): try basic(m, "u", &v)
        case .int64(var v): try basic(m, "x", &v)
        case .uint64(var v): try basic(m, "t", &v)
        case .double(var v): try basic(m, "d", &v)
        case .string(let s): try string(m, "s", s)
        case .objectPath(let s): try string(m, "o", s)
        case .signature(let s): try string(m, "g", s)
        case .unixFD(let descriptor):
            guard var fd = descriptor.rawValue else {
                throw BusError(
                    name: BusError.Name.invalidArgs, message: "cannot send a closed file descriptor", errno: EBADF)
            }
            // sd-bus duplicates the fd into the message; the caller keeps owning `descriptor`.
            try basic(m, "h", &fd)
        case .array(let element, let values):
            for v in values where v.signature != element {
                throw BusError(
                    name: BusError.Name.invalidArgs,
                    message: "array element of type \(v.signature) in an array of \(element)", errno: EINVAL)
            }
            try container(m, "a", element) { () throws(BusError) in try append(values, to: m) }
        case .dictionary(let key, let valueSignature, let entries):
            guard key.count == 1, "ybnqiuxtdsogh".contains(key) else {
                throw BusError(
                    name: BusError.Name.invalidArgs, message: "dictionary key type \(key) is not basic", errno: EINVAL)
            }
            let entrySignature = key + valueSignature
            try container(m, "a", "{" + entrySignature + "}") { () throws(BusError) in
                for entry in entries {
                    guard entry.key.signature == key, entry.value.signature == valueSignature else {
                        throw BusError(
                            name: BusError.Name.invalidArgs,
                            message:
                                "dictionary entry {\(entry.key.signature)\(entry.value.signature)} in a{\(entrySignature)}",
                            errno: EINVAL)
                    }
                    try container(m, "e", entrySignature) { () throws(BusError) in
                        try append(entry.key, to: m)
                        try append(entry.value, to: m)
                    }
                }
            }
        case .structure(let fields):
            guard !fields.isEmpty else {
                throw BusError(
                    name: BusError.Name.invalidArgs, message: "empty structs are not allowed in D-Bus", errno: EINVAL)
            }
            try container(m, "r", BusValue.signature(of: fields)) { () throws(BusError) in try append(fields, to: m) }
        case .variant(let inner):
            try container(m, "v", inner.signature) { () throws(BusError) in try append(inner, to: m) }
        }
    }

    private static func basic<T>(_ m: OpaquePointer, _ type: Character, _ value: inout T) throws(BusError) {
        let r = withUnsafeMutablePointer(to: &value) { sd_bus_message_append_basic(m, code(type), $0) }
        try BusError.check(r, "append \(type)")
    }

    private static func string(_ m: OpaquePointer, _ type: Character, _ s: String) throws(BusError) {
        if s.utf8.contains(0) {
            throw BusError(name: BusError.Name.invalidArgs, message: "strings may not contain NUL", errno: EINVAL)
        }
        let r = s.withCString { sd_bus_message_append_basic(m, code(type), $0) }
        try BusError.check(r, "append \(type) \"\(s)\"")
    }

    private static func container(
        _ m: OpaquePointer, _ type: Character, _ contents: String, _ body: () throws(BusError) -> Void
    ) throws(BusError) {
        try BusError.check(sd_bus_message_open_container(m, code(type), contents), "open container \(type)\(contents)")
        try body()
        try BusError.check(sd_bus_message_close_container(m), "close container \(type)\(contents)")
    }

    // MARK: Reading

    /// Reads every remaining value of the current container (the whole body at top level).
    static func readAll(from m: OpaquePointer) throws(BusError) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try readNext(from: m) { values.append(value) }
        return values
    }

    /// Reads the next value, or returns `nil` at the end of the current container.
    static func readNext(from m: OpaquePointer) throws(BusError) -> BusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let r = sd_bus_message_peek_type(m, &type, &contents)
        try BusError.check(r, "peek type")
        if r == 0 { return nil }
        let contentString = contents.map { String(cString: $0) } ?? ""
        return try read(m, type: type, contents: contentString)
    }

    private static func read(_ m: OpaquePointer, type: CChar, contents: String) throws(BusError) -> BusValue {
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "y"): return .byte(try readBasic(m, type, UInt8(0)))
        case UInt8(ascii: "b"): return .bool(try readBasic(m, type, Int32(0)) != 0)
        case UInt8(ascii: "n"): return .int16(try readBasic(m, type, Int16(0)))
        case UInt8(ascii: "q"): return .uint16(try readBasic(m, type, UInt16(0)))
        case UInt8(ascii: "i"): return .int32(try readBasic(m, type, Int32(0)))
        case UInt8(ascii: "u"): return .uint32(try readBasic(m, type, UInt32(0)))
        case UInt8(ascii: "x"): return .int64(try readBasic(m, type, Int64(0)))
        case UInt8(ascii: "t"): return .uint64(try readBasic(m, type, UInt64(0)))
        case UInt8(ascii: "d"): return .double(try readBasic(m, type, Double(0)))
        case UInt8(ascii: "s"): return .string(try readString(m, type))
        case UInt8(ascii: "o"): return .objectPath(try readString(m, type))
        case UInt8(ascii: "g"): return .signature(try readString(m, type))
        case UInt8(ascii: "h"):
            // The fd belongs to the message; duplicate it so the value owns its own copy.
            let borrowed = try readBasic(m, type, Int32(-1))
            return .unixFD(try BusFileDescriptor(duplicating: borrowed))
        case UInt8(ascii: "a"):
            if contents.hasPrefix("{") {
                let inner = String(contents.dropFirst().dropLast())
                let key = String(inner.prefix(1))
                let value = String(inner.dropFirst())
                var entries: [BusDictionaryEntry] = []
                try enter(m, "a", contents) { () throws(BusError) in
                    while true {
                        let r = sd_bus_message_enter_container(m, code("e"), inner)
                        try BusError.check(r, "enter dict entry {\(inner)}")
                        if r == 0 { break }
                        guard let k = try readNext(from: m), let v = try readNext(from: m) else {
                            throw BusError(
                                name: BusError.Name.invalidSignature, message: "short dict entry", errno: EBADMSG)
                        }
                        try BusError.check(sd_bus_message_exit_container(m), "exit dict entry")
                        entries.append(BusDictionaryEntry(key: k, value: v))
                    }
                }
                return .dictionary(keySignature: key, valueSignature: value, entries)
            }
            var elements: [BusValue] = []
            try enter(m, "a", contents) { () throws(BusError) in elements = try readAll(from: m) }
            return .array(elementSignature: contents, elements)
        case UInt8(ascii: "r"):
            var fields: [BusValue] = []
            try enter(m, "r", contents) { () throws(BusError) in fields = try readAll(from: m) }
            return .structure(fields)
        case UInt8(ascii: "v"):
            var inner: BusValue?
            try enter(m, "v", contents) { () throws(BusError) in inner = try readNext(from: m) }
            guard let inner else {
                throw BusError(name: BusError.Name.invalidSignature, message: "empty variant", errno: EBADMSG)
            }
            return .variant(inner)
        default:
            throw BusError(
                name: BusError.Name.invalidSignature,
                message: "unsupported D-Bus type code \(UnicodeScalar(UInt8(bitPattern: type)))", errno: EBADMSG)
        }
    }

    private static func readBasic<T>(_ m: OpaquePointer, _ type: CChar, _ initial: T) throws(BusError) -> T {
        var value = initial
        let r = withUnsafeMutablePointer(to: &value) { sd_bus_message_read_basic(m, type, $0) }
        try BusError.check(r, "read basic")
        return value
    }

    private static func readString(_ m: OpaquePointer, _ type: CChar) throws(BusError) -> String {
        var pointer: UnsafePointer<CChar>?
        let r = sd_bus_message_read_basic(m, type, &pointer)
        try BusError.check(r, "read string")
        return pointer.map { String(cString: $0) } ?? ""
    }

    private static func enter(
        _ m: OpaquePointer, _ type: Character, _ contents: String, _ body: () throws(BusError) -> Void
    ) throws(BusError) {
        try BusError.check(sd_bus_message_enter_container(m, code(type), contents), "enter \(type)\(contents)")
        try body()
        try BusError.check(sd_bus_message_exit_container(m), "exit \(type)\(contents)")
    }

    /// The signature of a message's body ("" when empty).
    static func signature(of m: OpaquePointer) -> String {
        sd_bus_message_get_signature(m, 1).map { String(cString: $0) } ?? ""
    }
}
