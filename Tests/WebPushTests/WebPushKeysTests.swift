import Foundation
import Testing
import WebPush

@Suite("WebPushKeys")
struct WebPushKeysTests {
    @Test("fresh keys have the sizes RFC 8291 requires and differ each time")
    func freshKeys() {
        let keys = WebPushKeys()
        let other = WebPushKeys()
        #expect(keys.publicKey.count == 65)
        #expect(keys.publicKey.first == 0x04)
        #expect(keys.privateKeyData.count == 32)
        #expect(keys.authSecret.count == 16)
        #expect(keys.privateKeyData != other.privateKeyData)
        #expect(keys.authSecret != other.authSecret)
    }

    @Test("keys rebuilt from their stored bytes are the same keys")
    func rebuild() throws {
        let keys = WebPushKeys()
        let rebuilt = try WebPushKeys(privateKey: keys.privateKeyData, authSecret: keys.authSecret)
        #expect(rebuilt.publicKey == keys.publicKey)
        #expect(rebuilt.privateKeyData == keys.privateKeyData)
        #expect(rebuilt.authSecret == keys.authSecret)
    }

    @Test("RFC 8291 §5's receiver private key gives its public key")
    func rfcPublicKey() throws {
        let keys = try WebPushKeys(
            privateKey: bytes("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"),
            authSecret: bytes("BTBZMqHH6r4Tts7J_aSIgg"))
        #expect(
            Base64URL.encode(keys.publicKey)
                == "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    }

    @Test(
        "refuses a private key that is not a P-256 scalar",
        arguments: [
            Data(repeating: 1, count: 31), Data(repeating: 1, count: 33), Data(repeating: 0, count: 32),
            // The group order n, and all ones: both at least n.
            hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551"), Data(repeating: 0xff, count: 32),
        ])
    func refusesPrivateKey(privateKey: Data) {
        #expect(throws: WebPushError.invalidPrivateKey) {
            try WebPushKeys(privateKey: privateKey, authSecret: Data(count: 16))
        }
    }

    @Test("refuses an auth secret that is not 16 bytes", arguments: [0, 15, 17, 32])
    func refusesAuthSecret(length: Int) {
        #expect(throws: WebPushError.invalidAuthSecretLength(length)) {
            try WebPushKeys(privateKey: WebPushKeys().privateKeyData, authSecret: Data(count: length))
        }
    }
}
