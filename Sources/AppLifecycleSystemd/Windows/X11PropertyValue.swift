/// The value of one window property as `GetProperty` returned it: its type atom, its format (8,
/// 16 or 32 bits per item) and its bytes, already in the client's byte order.
///
/// Decoding never traps: a property of the wrong type or format, or truncated, reads as absent
/// (`nil` or empty), since any client may set any bytes on its own window.
struct X11PropertyValue: Sendable, Hashable {
    /// The property's type atom; 0 (`None`) when the window has no such property.
    var type: UInt32
    /// Bits per item: 8, 16 or 32; 0 when absent.
    var format: UInt8
    /// The value.
    var bytes: [UInt8]

    /// An absent property.
    static let absent = X11PropertyValue(type: 0, format: 0, bytes: [])

    /// The 32-bit items (`CARDINAL`, `WINDOW`, `ATOM` lists); empty unless the format is 32.
    var items32: [UInt32] {
        guard format == 32 else { return [] }
        return stride(from: 0, to: bytes.count - bytes.count % 4, by: 4).map { offset in
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
    }

    /// The first 32-bit item, if any.
    var firstItem32: UInt32? { items32.first }

    /// The NUL-separated strings of an 8-bit property (`WM_CLASS`: instance, then class), decoded
    /// as UTF-8 with invalid bytes replaced; empty unless the format is 8. A trailing NUL ends the
    /// last string rather than starting an empty one.
    var strings: [String] {
        guard format == 8, !bytes.isEmpty else { return [] }
        var parts = bytes.split(separator: 0, omittingEmptySubsequences: false)
        if bytes.last == 0 { parts.removeLast() }
        return parts.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The whole 8-bit value as one string (a title), `nil` when absent or empty.
    var text: String? {
        guard format == 8, !bytes.isEmpty else { return nil }
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        return end == bytes.startIndex ? nil : String(decoding: bytes[..<end], as: UTF8.self)
    }
}
