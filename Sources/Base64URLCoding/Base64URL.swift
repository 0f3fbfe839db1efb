#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Base64 with the URL- and filename-safe alphabet (RFC 4648 §5), the encoding of every key, salt
/// and token in Web Push.
///
/// ``encode(_:)`` writes no padding, as RFC 8291 and RFC 7515 (JWS) require. ``decode(_:)`` takes
/// text with or without padding, and refuses everything else: characters outside the alphabet
/// (including `+`, `/` and whitespace), misplaced or excess `=`, a length no encoding can have, and
/// non-zero bits after the last byte (so each byte string has exactly one accepted spelling).
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes bytes as base64url without padding.
    ///
    /// - Parameters:
    ///   - data: The bytes to encode.
    /// - Returns: The text, `ceil(4 * count / 3)` characters of `A–Z a–z 0–9 - _`.
    public static func encode(_ data: Data) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((data.count * 4 + 2) / 3)
        var iterator = data.makeIterator()
        while let first = iterator.next() {
            let second = iterator.next()
            let third = second == nil ? nil : iterator.next()
            let group = UInt32(first) << 16 | UInt32(second ?? 0) << 8 | UInt32(third ?? 0)
            output.append(alphabet[Int(group >> 18 & 0x3f)])
            output.append(alphabet[Int(group >> 12 & 0x3f)])
            if second != nil { output.append(alphabet[Int(group >> 6 & 0x3f)]) }
            if third != nil { output.append(alphabet[Int(group & 0x3f)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Decodes base64url text, padded or not.
    ///
    /// - Parameters:
    ///   - text: The text to decode.
    /// - Returns: The bytes, or `nil` if `text` is not canonical base64url (see ``Base64URL``).
    public static func decode(_ text: String) -> Data? {
        var characters = Array(text.utf8)
        // Padding: only at the end, at most two, and only to make the length a multiple of 4.
        if let firstPad = characters.firstIndex(of: UInt8(ascii: "=")) {
            let padCount = characters.count - firstPad
            guard padCount <= 2, characters.count % 4 == 0,
                characters[firstPad...].allSatisfy({ $0 == UInt8(ascii: "=") })
            else { return nil }
            characters.removeLast(padCount)
        }
        guard characters.count % 4 != 1 else { return nil }
        var output = Data()
        output.reserveCapacity(characters.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in characters {
            guard let value = sextet(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // Bits left over must be zero: "QR" and "QQ" would otherwise both decode to "A".
        guard accumulator == 0 else { return nil }
        return output
    }

    /// Whether every character of `text` is in the base64url alphabet (`A–Z a–z 0–9 - _`, no padding).
    ///
    /// - Parameters:
    ///   - text: The candidate, such as an RFC 8030 `Topic` or a token.
    public static func isAlphabet(_ text: String) -> Bool {
        text.utf8.allSatisfy { sextet($0) != nil }
    }

    private static func sextet(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
