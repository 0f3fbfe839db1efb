/// base64url (RFC 4648 §5) without padding, strict: the alphabet `A–Z a–z 0–9 - _`, no `=`, no
/// whitespace, and no non-zero bits left over in the last character.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let value = UInt32(bytes[index]) << 16
            for shift in [18, 12] { output.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
        } else if rest == 2 {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            for shift in [18, 12, 6] { output.append(alphabet[Int(value >> UInt32(shift) & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(c - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): 62
            case UInt8(ascii: "_"): 63
            default: nil
            }
        }
        let input = Array(text.utf8)
        guard input.count % 4 != 1 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(input.count * 3 / 4)
        var index = 0
        while index < input.count {
            let chunk = input[index..<min(index + 4, input.count)]
            var accumulated: UInt32 = 0
            for c in chunk {
                guard let v = value(c) else { return nil }
                accumulated = accumulated << 6 | v
            }
            switch chunk.count {
            case 4:
                output += [UInt8(accumulated >> 16), UInt8(accumulated >> 8 & 0xff), UInt8(accumulated & 0xff)]
            case 3:
                guard accumulated & 0x3 == 0 else { return nil }
                output += [UInt8(accumulated >> 10), UInt8(accumulated >> 2 & 0xff)]
            default:
                guard accumulated & 0xf == 0 else { return nil }
                output.append(UInt8(accumulated >> 4))
            }
            index += 4
        }
        return output
    }
}

extension Base64URL {
    /// Whether every character of `text` is in the base64url alphabet.
    static func isAlphabet(_ text: String) -> Bool {
        text.utf8.allSatisfy { alphabetSet.contains($0) }
    }

    private static let alphabetSet = Set(alphabet)
}
