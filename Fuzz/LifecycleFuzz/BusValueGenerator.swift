import SystemdBus

/// Builds a D-Bus value tree from fuzz bytes, the way the codecs receive them from sd-bus: every
/// array's elements share one type, dictionary keys are basic, strings hold no NUL, object paths
/// and signatures are valid. A type is drawn first, then a value of that type, so the fuzzer
/// reaches every shape (deep nesting, empty containers, tagged `(sv)` structs, `t` above
/// `Int64.max`, NaN and out-of-range dates) with few bytes.
struct BusValueGenerator {
    /// A D-Bus type, drawn from the input before its value.
    indirect enum BusType {
        case basic(Character)
        case array(BusType)
        case dictionary(key: Character, value: BusType)
        case structure([BusType])
        case variant

        var signature: String {
            switch self {
            case .basic(let code): String(code)
            case .array(let element): "a" + element.signature
            case .dictionary(let key, let value): "a{" + String(key) + value.signature + "}"
            case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
            case .variant: "v"
            }
        }
    }

    /// The deepest container nesting generated: beyond `UserInfoBusCodec.maximumDepth` (16), so
    /// its refusal is reached too, and within sd-bus's own limit (64 in a signature... and the
    /// 255-character signature limit, which the element types keep to).
    static let maximumDepth = 20
    static let basicCodes: [Character] = ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g"]
    /// Strings the codecs look for: the tags of dates and nulls, command names and argument keys.
    static let words = [
        "date", "null", "value", "reason", "timezone", "level", "source", "url", "payload", "notification",
        "identifier", "notifications", "item", "type", "localizedTitle", "localizedSubtitle", "userInfo",
        "fireDate", "wallClock", "repeatInterval", "title", "body", "activation-token", "critical", "warning",
        "user-request", "https://example.net/", "org.example.Notes", "UIApplicationOpenURLOptionsSourceApplicationKey",
    ]

    var input: FuzzInput

    /// A value of a drawn type, wrapped as `a{sv}` entries would wrap it when `topLevelVardict`.
    mutating func value() -> BusValue {
        let type = drawType(depth: 0)
        return value(of: type, depth: 0)
    }

    /// An `a{sv}`: what a userInfo and a command's arguments travel as.
    mutating func vardict() -> BusValue {
        let count = input.choice(8)
        var entries: [String: BusValue] = [:]
        for _ in 0..<count {
            entries[string()] = value(of: drawType(depth: 1), depth: 1)
        }
        return .vardict(entries)
    }

    mutating func drawType(depth: Int) -> BusType {
        let kind = input.choice(depth >= Self.maximumDepth ? 1 : 6)
        switch kind {
        case 0, 1: return .basic(input.pick(Self.basicCodes))
        case 2: return .array(drawType(depth: depth + 1))
        case 3: return .dictionary(key: input.pick(["s", "s", "o", "i", "y"]), value: drawType(depth: depth + 1))
        case 4:
            let count = 1 + input.choice(3)
            return .structure((0..<count).map { _ in drawType(depth: depth + 1) })
        default: return .variant
        }
    }

    mutating func value(of type: BusType, depth: Int) -> BusValue {
        switch type {
        case .basic(let code): return basic(code)
        case .array(let element):
            let count = input.choice(5)
            return .array(
                elementSignature: element.signature, (0..<count).map { _ in value(of: element, depth: depth + 1) })
        case .dictionary(let key, let valueType):
            let count = input.choice(5)
            return .dictionary(
                keySignature: String(key), valueSignature: valueType.signature,
                (0..<count).map { _ in
                    BusDictionaryEntry(key: basic(key), value: value(of: valueType, depth: depth + 1))
                })
        case .structure(let fields):
            return .structure(fields.map { value(of: $0, depth: depth + 1) })
        case .variant:
            // A tagged struct now and then: `("date", <d>)` or `("null", <s>)`.
            switch input.choice(4) {
            case 0:
                return .variant(.structure([.string("date"), .variant(.double(interestingDouble()))]))
            case 1:
                return .variant(.structure([.string(input.pick(["null", "date"])), .variant(basic("s"))]))
            default:
                return .variant(value(of: drawType(depth: depth + 1), depth: depth + 1))
            }
        }
    }

    mutating func basic(_ code: Character) -> BusValue {
        switch code {
        case "y": return .byte(input.byte())
        case "b": return .bool(input.flag())
        case "n": return .int16(Int16(truncatingIfNeeded: input.unsigned(bytes: 2)))
        case "q": return .uint16(UInt16(truncatingIfNeeded: input.unsigned(bytes: 2)))
        case "i": return .int32(Int32(truncatingIfNeeded: input.unsigned(bytes: 4)))
        case "u": return .uint32(UInt32(truncatingIfNeeded: input.unsigned(bytes: 4)))
        case "x": return .int64(Int64(bitPattern: input.unsigned(bytes: 8)))
        case "t": return .uint64(input.unsigned(bytes: 8))
        case "d": return .double(interestingDouble())
        case "o": return .objectPath(input.pick(["/", "/org/example/Notes", "/a/b_1"]))
        case "g": return .signature(input.pick(["", "s", "a{sv}", "(sv)", "av"]))
        default: return .string(string())
        }
    }

    /// A string: one of ``words`` or arbitrary text (without NUL, which D-Bus strings cannot hold).
    mutating func string() -> String {
        if input.flag() { return input.pick(Self.words) }
        return input.text(maximum: 64).replacing("\0", with: "")
    }

    /// A double: often one at an edge (NaN, infinities, the ends of the date range), else any bits.
    mutating func interestingDouble() -> Double {
        switch input.choice(8) {
        case 0: return .nan
        case 1: return input.flag() ? .infinity : -.infinity
        case 2: return input.flag() ? -62_135_596_800 : 253_402_300_799
        case 3: return 1e300
        case 4: return Double(Int64(bitPattern: input.unsigned(bytes: 8)) % 4_000_000_000)
        default: return input.double()
        }
    }
}
