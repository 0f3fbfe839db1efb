import Crypto
import FoundationEssentials
import Glibc

@testable import WebPush

/// Writes the seeds only code can make: bodies encrypted for ``WebPushDecryptionFuzzing``'s fixed
/// receiver, headers signed with ``VAPIDFuzzing``'s fixed key. `LifecycleFuzz --write-seeds Fuzz/Corpus`
/// (re)writes them; they are committed with the hand-written seeds.
enum SeedWriter {
    static func write(to corpus: String) throws {
        let receiver = WebPushDecryptionFuzzing.receiver
        let sender = WebPushDecryptionFuzzing.sender
        let salt = Data(repeating: 0x55, count: 16)
        func body(_ text: String, recordSize: UInt32 = 4096, padding: Int = 0) throws -> [UInt8] {
            [0]
                + Array(
                    try WebPushEncryption.encrypt(
                        Data(text.utf8), receiverPublicKey: receiver.publicKey, authSecret: receiver.authSecret,
                        recordSize: recordSize, paddingLength: padding, salt: salt, senderPrivateKey: sender))
        }
        try save(body("{\"title\":\"Hello\"}"), corpus, "webpush-decrypt", "valid-body")
        try save(body("padded", recordSize: 64, padding: 20), corpus, "webpush-decrypt", "valid-padded-body")
        // Odd first byte: record size 40, salt byte 7, two records ("ab", delimiter 1, 21 bytes of
        // padding: a full record of 24 + 16; then "cd", delimiter 2).
        try save(
            [1, 0, 40, 7, 2, 2] + Array("ab".utf8) + [0, 21, 2] + Array("cd".utf8) + [3, 0], corpus,
            "webpush-decrypt", "sealed-two-records")

        let signing = try VAPIDSigningKey(rawRepresentation: VAPIDFuzzing.key.rawRepresentation)
        let header = try signing.authorization(
            audience: VAPIDFuzzing.audience, subject: "mailto:ops@example.net", now: VAPIDFuzzing.now)
        try save([0] + Array(header.utf8), corpus, "vapid", "valid-header")
        let claims = #"{"aud":"https://push.example.net","exp":1767229200,"sub":"mailto:a@example.net"}"#
        try save([1, 1] + [UInt8(claims.utf8.count)] + Array(claims.utf8) + [1, 1], corpus, "vapid", "signed-claims")
    }

    private static func save(_ bytes: [UInt8], _ corpus: String, _ target: String, _ name: String) throws {
        let directory = corpus + "/" + target
        mkdir(directory, 0o755)
        try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
    }
}
