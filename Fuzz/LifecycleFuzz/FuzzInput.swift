/// A cursor over one fuzz input that structured targets draw their choices from.
///
/// Deterministic: the same bytes always give the same choices, so a reproducer file replays
/// exactly. Reading past the end yields zeros (and empty strings), never a trap, so every input,
/// however short, is a valid sequence of choices.
struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Whether every byte has been used.
    var isExhausted: Bool { position >= bytes.count }

    /// The next byte, or 0 past the end.
    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A choice among `count` alternatives (0 when `count` is 0).
    mutating func choice(_ count: Int) -> Int {
        count == 0 ? 0 : Int(byte()) % count
    }

    /// One of `options`.
    mutating func pick<T>(_ options: [T]) -> T {
        options[choice(options.count)]
    }

    /// Whether the next byte is odd.
    mutating func flag() -> Bool { byte() & 1 == 1 }

    /// An unsigned integer from the next `size` bytes, big-endian.
    mutating func unsigned(bytes size: Int) -> UInt64 {
        (0..<size).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) }
    }

    /// A length byte, then that many bytes (fewer at the end of the input).
    mutating func chunk(maximum: Int = 255) -> [UInt8] {
        let count = min(Int(byte()), maximum)
        let end = min(position + count, bytes.count)
        defer { position = max(position, end) }
        return position < end ? Array(bytes[position..<end]) : []
    }

    /// A chunk as text (invalid UTF-8 repaired, as a reader of bytes would see it).
    mutating func text(maximum: Int = 255) -> String {
        String(decoding: chunk(maximum: maximum), as: UTF8.self)
    }

    /// A double from 8 bytes: any bit pattern, NaNs and infinities included.
    mutating func double() -> Double { Double(bitPattern: unsigned(bytes: 8)) }

    /// The bytes not yet used.
    mutating func rest() -> [UInt8] {
        defer { position = bytes.count }
        return position < bytes.count ? Array(bytes[position...]) : []
    }
}
