import Foundation
import Testing
import WebPush

@Suite("Base64URL")
struct Base64URLTests {
    /// RFC 4648 §10's test vectors, without their padding.
    static let rfc4648: [(String, String)] = [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ]

    @Test("encodes RFC 4648's vectors without padding", arguments: rfc4648)
    func encodesVectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Data(plain.utf8)) == encoded)
    }

    @Test("decodes RFC 4648's vectors with and without padding", arguments: rfc4648)
    func decodesVectors(plain: String, encoded: String) {
        let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
        #expect(Base64URL.decode(encoded) == Data(plain.utf8))
        #expect(Base64URL.decode(padded) == Data(plain.utf8))
    }

    @Test("uses - and _ where standard base64 has + and /")
    func urlAlphabet() {
        #expect(Base64URL.encode(Data([0xfb, 0xff, 0xbf])) == "-_-_")
        #expect(Base64URL.decode("-_-_") == Data([0xfb, 0xff, 0xbf]))
    }

    @Test("round-trips every byte value at every length modulo 3")
    func roundTrip() {
        let all = Data(0...255)
        for length in [0, 1, 2, 3, 254, 255, 256] {
            let data = all.prefix(length)
            #expect(Base64URL.decode(Base64URL.encode(data)) == data)
        }
    }

    @Test(
        "refuses what is not canonical base64url",
        arguments: [
            "Z",  // a length no encoding has
            "Zm9v+", "Zm/v", "Zm9v Yg", " Zg", "Zg\n",  // outside the alphabet
            "Zg=", "Zg===", "Z===", "====", "=", "Zg==Zg==", "Z=g=", "Zm9v====",  // bad padding
            "Zh", "Zm9=", "Zm9vYh",  // non-zero bits after the last byte
        ])
    func refusesInvalid(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
