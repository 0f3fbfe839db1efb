import Crypto
import Foundation
import Testing
import WebPush

/// The worked examples of RFC 8291 §5 (Appendix A's values) and RFC 8188 §3.1–3.2, byte for byte.
@Suite("RFC test vectors")
struct RFCVectorTests {
    enum RFC8291 {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let receiverPrivateKey = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let receiverPublicKey =
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let senderPrivateKey = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let senderPublicKey =
            "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body =
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27ml"
            + "mlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPT"
            + "pK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
    }

    @Test("RFC 8291 §5: the receiver decrypts the example body to its plaintext")
    func rfc8291Decrypt() throws {
        let keys = try WebPushKeys(privateKey: bytes(RFC8291.receiverPrivateKey), authSecret: bytes(RFC8291.authSecret))
        let plaintext = try WebPushEncryption.decrypt(bytes(RFC8291.body), keys: keys)
        #expect(String(decoding: plaintext, as: UTF8.self) == RFC8291.plaintext)
    }

    @Test("RFC 8291 §5: the sender's salt and key reproduce the example body exactly")
    func rfc8291Encrypt() throws {
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(RFC8291.senderPrivateKey))
        #expect(Base64URL.encode(senderKey.publicKey.x963Representation) == RFC8291.senderPublicKey)
        let body = try WebPushEncryption.encrypt(
            Data(RFC8291.plaintext.utf8), receiverPublicKey: bytes(RFC8291.receiverPublicKey),
            authSecret: bytes(RFC8291.authSecret), recordSize: 4096, salt: bytes(RFC8291.salt),
            senderPrivateKey: senderKey)
        #expect(Base64URL.encode(body) == RFC8291.body)
    }

    @Test("RFC 8188 §3.1: one record, no key id, record size 4096")
    func rfc8188SingleRecord() throws {
        let ikm = SymmetricKey(data: try bytes("yqdlZ-tYemfogSmv7Ws5PQ"))
        let expected = "I1BsxtFttlv3u_Oo94xnmwAAEAAA-NAVub2qFgBEuQKRapoZu-IxkIva3MEB1PD-ly8Thjg"
        let body = try AES128GCMContentCoding.encrypt(
            Data("I am the walrus".utf8), inputKeyingMaterial: ikm, salt: bytes("I1BsxtFttlv3u_Oo94xnmw"),
            keyID: Data(), recordSize: 4096)
        #expect(Base64URL.encode(body) == expected)

        let (header, records) = try AES128GCMContentCoding.parseHeader(bytes(expected))
        #expect(header.recordSize == 4096)
        #expect(header.keyID.isEmpty)
        let plaintext = try AES128GCMContentCoding.decryptRecords(
            header: header, records: records, inputKeyingMaterial: ikm)
        #expect(plaintext == Data("I am the walrus".utf8))
    }

    @Test("RFC 8188 §3.2: two records of 25 bytes, key id \"a1\", one byte of padding in the first")
    func rfc8188MultipleRecords() throws {
        let ikm = SymmetricKey(data: try bytes("BO3ZVPxUlnLORbVGMpbT1Q"))
        let expected =
            "uNCkWiNYzKTnBN9ji3-qWAAAABkCYTHOG8chz_gnvgOqdGYovxyjuqRyJFjEDyoF1Fvkj6hQPdPHI51OEUKEpgz3SsLWIqS_uA"
        let (header, records) = try AES128GCMContentCoding.parseHeader(bytes(expected))
        #expect(header.recordSize == 25)
        #expect(header.keyID == Data("a1".utf8))
        #expect(records.count == 50)
        let plaintext = try AES128GCMContentCoding.decryptRecords(
            header: header, records: records, inputKeyingMaterial: ikm)
        #expect(plaintext == Data("I am the walrus".utf8))

        let body = try AES128GCMContentCoding.encrypt(
            Data("I am the walrus".utf8), inputKeyingMaterial: ikm, salt: header.salt, keyID: Data("a1".utf8),
            recordSize: 25, padding: [1, 0])
        #expect(Base64URL.encode(body) == expected)
    }
}
