import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Message encryption for Web Push (RFC 8291): the `aes128gcm` content coding of RFC 8188, keyed
/// by ECDH between the application server and the user agent and by the user agent's auth secret.
///
/// The key derivation (RFC 8291 §3.3, §3.4):
///
/// - `ecdh_secret` = ECDH(sender's key, receiver's key), P-256;
/// - `IKM` = HKDF-SHA-256(salt: auth secret, ikm: `ecdh_secret`,
///   info: `"WebPush: info\0" || ua_public || as_public`, 32 bytes);
/// - then RFC 8188: with the body's 16-byte salt, the content-encryption key
///   (`"Content-Encoding: aes128gcm\0"`, 16 bytes) and the nonce (`"Content-Encoding: nonce\0"`,
///   12 bytes, XORed with each record's sequence number).
///
/// The body is `salt (16) || record size (4, big-endian) || idlen (1) || keyid || records`, where
/// the key id is the sender's 65-byte public key. Each record's plaintext ends in a padding
/// delimiter (2 in the last record, 1 in the others) and any number of zero bytes.
public enum WebPushEncryption {
    /// Decrypts a push message body for the user agent that owns `keys`.
    ///
    /// Bodies of several records (record size smaller than the body) are decrypted record by
    /// record, although RFC 8291 senders write one.
    ///
    /// - Parameters:
    ///   - body: The request body, `Content-Encoding: aes128gcm`.
    ///   - keys: The receiver's key pair and auth secret.
    /// - Returns: The plaintext, padding removed.
    /// - Throws: ``WebPushError``: ``WebPushError/bodyShorterThanHeader(length:)``,
    ///   ``WebPushError/invalidKeyIDLength(_:)``, ``WebPushError/recordSizeTooSmall(_:)``,
    ///   ``WebPushError/invalidSenderPublicKey``, ``WebPushError/missingRecords``,
    ///   ``WebPushError/authenticationFailed(record:)``, ``WebPushError/missingPaddingDelimiter(record:)``,
    ///   ``WebPushError/invalidPaddingDelimiter(record:delimiter:)``,
    ///   ``WebPushError/dataAfterLastRecord(record:)``, ``WebPushError/lastRecordNotMarkedLast(record:)``,
    ///   ``WebPushError/truncatedRecord(record:length:)``.
    public static func decrypt(_ body: Data, keys: WebPushKeys) throws(WebPushError) -> Data {
        let (header, records) = try AES128GCMContentCoding.parseHeader(body)
        guard header.keyID.count == 65 else { throw .invalidKeyIDLength(header.keyID.count) }
        guard let senderKey = P256PublicKeyParsing.keyAgreementKey(header.keyID) else {
            throw .invalidSenderPublicKey
        }
        let ikm = try inputKeyingMaterial(
            privateKey: keys.privateKey, peer: senderKey, authSecret: keys.authSecret,
            receiverPublicKey: keys.publicKey, senderPublicKey: header.keyID, failure: .invalidSenderPublicKey)
        return try AES128GCMContentCoding.decryptRecords(header: header, records: records, inputKeyingMaterial: ikm)
    }

    /// Encrypts a push message for a subscription, as an application server does: one record,
    /// as RFC 8291 §4 requires.
    ///
    /// - Parameters:
    ///   - plaintext: The message.
    ///   - receiverPublicKey: The subscription's `p256dh`: a 65-byte uncompressed P-256 point.
    ///   - authSecret: The subscription's 16-byte `auth`.
    ///   - recordSize: The record size written in the header; the whole record (plaintext,
    ///     padding, delimiter and tag) must fit in it. Push services accept 4096 at most.
    ///   - paddingLength: Zero bytes added after the delimiter, to hide the plaintext's length.
    ///   - salt: 16 bytes; random when `nil`. Pass one only to reproduce a test vector.
    ///   - senderPrivateKey: The application server's ephemeral key; random when `nil`. Pass one
    ///     only to reproduce a test vector: reusing a key and salt leaks messages.
    /// - Returns: The body: header and one record.
    /// - Throws: ``WebPushError/invalidReceiverPublicKey``, ``WebPushError/invalidAuthSecretLength(_:)``,
    ///   ``WebPushError/invalidSaltLength(_:)``, ``WebPushError/recordSizeTooSmall(_:)``,
    ///   ``WebPushError/invalidPaddingLength(_:)``,
    ///   ``WebPushError/plaintextTooLarge(length:paddingLength:recordSize:)``.
    public static func encrypt(
        _ plaintext: Data, receiverPublicKey: Data, authSecret: Data, recordSize: UInt32 = 4096,
        paddingLength: Int = 0, salt: Data? = nil, senderPrivateKey: P256.KeyAgreement.PrivateKey? = nil
    ) throws(WebPushError) -> Data {
        guard let receiverKey = P256PublicKeyParsing.keyAgreementKey(receiverPublicKey) else {
            throw .invalidReceiverPublicKey
        }
        guard authSecret.count == 16 else { throw .invalidAuthSecretLength(authSecret.count) }
        guard recordSize >= AES128GCMContentCoding.minimumRecordSize else { throw .recordSizeTooSmall(recordSize) }
        guard paddingLength >= 0 else { throw .invalidPaddingLength(paddingLength) }
        guard plaintext.count + paddingLength + AES128GCMContentCoding.recordOverhead <= Int(recordSize) else {
            throw .plaintextTooLarge(length: plaintext.count, paddingLength: paddingLength, recordSize: recordSize)
        }
        let salt = salt ?? randomSalt()
        let senderKey = senderPrivateKey ?? P256.KeyAgreement.PrivateKey()
        let senderPublicKey = senderKey.publicKey.x963Representation
        let ikm = try inputKeyingMaterial(
            privateKey: senderKey, peer: receiverKey, authSecret: authSecret,
            receiverPublicKey: receiverKey.x963Representation, senderPublicKey: senderPublicKey,
            failure: .invalidReceiverPublicKey)
        return try AES128GCMContentCoding.encrypt(
            plaintext, inputKeyingMaterial: ikm, salt: salt, keyID: senderPublicKey, recordSize: recordSize,
            padding: [paddingLength])
    }

    /// The IKM an application server derives for a receiver (RFC 8291 §3.3–3.4), for tests that
    /// seal hand-made records with ``AES128GCMContentCoding/sealRecords(_:inputKeyingMaterial:salt:keyID:recordSize:)``.
    ///
    /// - Parameters:
    ///   - senderPrivateKey: The application server's key.
    ///   - receiverPublicKey: The receiver's 65-byte public key.
    ///   - authSecret: The receiver's auth secret.
    /// - Returns: The IKM.
    /// - Throws: ``WebPushError/invalidReceiverPublicKey``.
    package static func senderInputKeyingMaterial(
        senderPrivateKey: P256.KeyAgreement.PrivateKey, receiverPublicKey: Data, authSecret: Data
    ) throws(WebPushError) -> SymmetricKey {
        guard let receiverKey = P256PublicKeyParsing.keyAgreementKey(receiverPublicKey) else {
            throw .invalidReceiverPublicKey
        }
        return try inputKeyingMaterial(
            privateKey: senderPrivateKey, peer: receiverKey, authSecret: authSecret,
            receiverPublicKey: receiverPublicKey, senderPublicKey: senderPrivateKey.publicKey.x963Representation,
            failure: .invalidReceiverPublicKey)
    }

    /// RFC 8291 §3.3–3.4: the IKM from the ECDH secret, the auth secret and both public keys.
    private static func inputKeyingMaterial(
        privateKey: P256.KeyAgreement.PrivateKey, peer: P256.KeyAgreement.PublicKey, authSecret: Data,
        receiverPublicKey: Data, senderPublicKey: Data, failure: WebPushError
    ) throws(WebPushError) -> SymmetricKey {
        let shared: SharedSecret
        do {
            shared = try privateKey.sharedSecretFromKeyAgreement(with: peer)
        } catch {
            // The peer's key was validated on the curve; a failure here means it is not usable.
            throw failure
        }
        var info = Data("WebPush: info\0".utf8)
        info.append(receiverPublicKey)
        info.append(senderPublicKey)
        return shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: info, outputByteCount: 32)
    }

    private static func randomSalt() -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }
}
