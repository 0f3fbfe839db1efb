import Crypto
import Foundation
import Testing
import WebPush

/// Bytes from base64url test data; records an issue (and throws) if the text is not base64url.
func bytes(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
    try #require(Base64URL.decode(text), "not base64url: \(text)", sourceLocation: sourceLocation)
}

/// Bytes from hexadecimal test data.
func hex(_ text: String) -> Data {
    var data = Data()
    var iterator = text.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        data.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) ?? 0)
    }
    return data
}

extension Data {
    /// A copy with one byte XORed with `mask`.
    func flipping(at index: Int, mask: UInt8 = 0x01) -> Data {
        var copy = Data(self)
        copy[index] ^= mask
        return copy
    }
}
