import Crypto
import FoundationEssentials

@testable import WebPush

/// Web Push message decryption (RFC 8291 over RFC 8188 `aes128gcm`), for a receiver with fixed
/// keys. The first byte chooses how the rest is used:
///
/// - even: the rest is a push body as it arrives, decrypted whole (the header, the sender's key,
///   the records; random bytes stop at authentication);
/// - odd: the rest describes records (a record size, a salt byte, then chunks of plaintext with
///   their padding delimiter and zero padding) that are sealed with the keys a real sender would
///   derive, so decryption gets past authentication to the record layer (delimiters, padding,
///   record boundaries, the last record); what decrypts must be the records' content.
enum WebPushDecryptionFuzzing {
    /// The receiver (a subscription): a fixed key, so a body in the corpus decrypts again.
    static let receiver: WebPushKeys = {
        do {
            return try WebPushKeys(
                privateKey: Data(repeating: 0x11, count: 32), authSecret: Data(repeating: 0x22, count: 16))
        } catch {
            fatalError("fixed receiver key rejected: \(error)")
        }
    }()
    /// The application server's ephemeral key, also fixed.
    static let sender: P256.KeyAgreement.PrivateKey = {
        do {
            return try P256.KeyAgreement.PrivateKey(rawRepresentation: Data(repeating: 0x33, count: 32))
        } catch {
            fatalError("fixed sender key rejected: \(error)")
        }
    }()
    static let inputKeyingMaterial: SymmetricKey = {
        do {
            return try WebPushEncryption.senderInputKeyingMaterial(
                senderPrivateKey: sender, receiverPublicKey: receiver.publicKey, authSecret: receiver.authSecret)
        } catch {
            fatalError("fixed keys do not agree: \(error)")
        }
    }()

    static let target = FuzzTarget(name: "webpush-decrypt", summary: "Web Push aes128gcm bodies (RFC 8291/8188)") {
        bytes in
        var input = FuzzInput(bytes)
        if input.byte() & 1 == 0 {
            _ = try? WebPushEncryption.decrypt(Data(input.rest()), keys: receiver)
        } else {
            sealedRecords(&input)
        }
    }

    private static func sealedRecords(_ input: inout FuzzInput) {
        let recordSize = UInt32(input.unsigned(bytes: 2))
        let salt = Data(repeating: input.byte(), count: 16)
        var records: [Data] = []
        var content = Data()
        var wellFormed = true
        let count = input.choice(6)
        for index in 0..<count {
            let plaintext = input.chunk(maximum: 200)
            let delimiter = input.pick([UInt8(1), 1, 1, 2, 2, 0, 3])
            let padding = input.choice(40)
            var record = Data(plaintext)
            record.append(delimiter)
            record.append(Data(repeating: 0, count: padding))
            records.append(record)
            content.append(contentsOf: plaintext)
            let isLast = index == count - 1
            wellFormed =
                wellFormed && delimiter == (isLast ? 2 : 1) && plaintext.last != 0
                && (isLast || record.count + 16 == Int(recordSize))
        }
        guard
            let body = try? AES128GCMContentCoding.sealRecords(
                records, inputKeyingMaterial: inputKeyingMaterial, salt: salt,
                keyID: sender.publicKey.x963Representation, recordSize: recordSize)
        else { return }
        do {
            let plaintext = try WebPushEncryption.decrypt(body, keys: receiver)
            if wellFormed, plaintext != content {
                FuzzTarget.fail("decrypted \(plaintext.count) bytes, sealed \(content.count)")
            }
        } catch {
            if wellFormed, count > 0, recordSize >= AES128GCMContentCoding.minimumRecordSize {
                FuzzTarget.fail("well-formed records refused: \(error)")
            }
        }
    }
}
