import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `aes128gcm` content coding of RFC 8188 with its input keying material given directly: the
/// record layer under Web Push's encryption (RFC 8291 derives the IKM by ECDH and hands it here).
///
/// `package`, not public: Web Push callers use ``WebPushEncryption``; the tests use this to run
/// RFC 8188's own examples (§3.1, §3.2), which have an IKM and no key agreement.
package enum AES128GCMContentCoding {
    /// The fixed part of the header: salt (16), record size (4), key id length (1).
    package static let fixedHeaderLength = 21
    /// A record's overhead: the padding delimiter and the AES-GCM tag.
    package static let recordOverhead = 17
    /// The smallest record size RFC 8188 allows.
    package static let minimumRecordSize: UInt32 = 18

    /// The header of an `aes128gcm` body.
    package struct Header: Equatable, Sendable {
        /// The 16-byte salt.
        package var salt: Data
        /// The record size: the length of every record but the last, tag included.
        package var recordSize: UInt32
        /// The key id (Web Push: the sender's public key).
        package var keyID: Data
    }

    /// Splits a body into its header and the records that follow.
    ///
    /// - Parameters:
    ///   - body: The whole body.
    /// - Returns: The header, and the bytes after it.
    /// - Throws: ``WebPushError/bodyShorterThanHeader(length:)``, ``WebPushError/recordSizeTooSmall(_:)``.
    package static func parseHeader(_ body: Data) throws(WebPushError) -> (header: Header, records: Data) {
        let bytes = Data(body)  // indices from 0, whatever slice the caller passed
        guard bytes.count >= fixedHeaderLength else { throw .bodyShorterThanHeader(length: bytes.count) }
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let keyIDLength = Int(bytes[20])
        guard bytes.count >= fixedHeaderLength + keyIDLength else {
            throw .bodyShorterThanHeader(length: bytes.count)
        }
        guard recordSize >= minimumRecordSize else { throw .recordSizeTooSmall(recordSize) }
        let header = Header(
            salt: Data(bytes[0..<16]),
            recordSize: recordSize,
            keyID: Data(bytes[fixedHeaderLength..<fixedHeaderLength + keyIDLength])
        )
        return (header, Data(bytes[(fixedHeaderLength + keyIDLength)...]))
    }

    /// Decrypts the records after a header with the content-encryption key and nonce derived from
    /// `inputKeyingMaterial` and the header's salt.
    ///
    /// Every record but the last must end its plaintext in delimiter 1, the last in 2; zero
    /// padding after the delimiter is removed.
    ///
    /// - Parameters:
    ///   - header: The header, from ``parseHeader(_:)``.
    ///   - records: The bytes after the header.
    ///   - inputKeyingMaterial: The IKM (RFC 8188 §2.2).
    /// - Returns: The plaintext of all records, in order.
    /// - Throws: ``WebPushError`` for a missing, truncated, unauthenticated or wrongly delimited record.
    package static func decryptRecords(
        header: Header, records: Data, inputKeyingMaterial: SymmetricKey
    ) throws(WebPushError) -> Data {
        let (key, baseNonce) = deriveKeyAndNonce(salt: header.salt, inputKeyingMaterial: inputKeyingMaterial)
        let records = Data(records)
        guard !records.isEmpty else { throw .missingRecords }
        let recordSize = Int(header.recordSize)
        var plaintext = Data()
        var start = 0
        var sequence: UInt64 = 0
        while start < records.count {
            let end = records.count - start > recordSize ? start + recordSize : records.count
            let record = records[start..<end]
            let index = Int(sequence)
            let isLast = end == records.count
            guard record.count >= recordOverhead else { throw .truncatedRecord(record: index, length: record.count) }
            let opened: Data
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: recordNonce(baseNonce, sequence: sequence),
                    ciphertext: record.dropLast(16),
                    tag: record.suffix(16)
                )
                opened = try AES.GCM.open(box, using: key)
            } catch {
                throw .authenticationFailed(record: index)
            }
            guard let delimiterIndex = opened.lastIndex(where: { $0 != 0 }) else {
                throw .missingPaddingDelimiter(record: index)
            }
            switch (opened[delimiterIndex], isLast) {
            case (2, true), (1, false):
                plaintext.append(opened[opened.startIndex..<delimiterIndex])
            case (1, true):
                throw .lastRecordNotMarkedLast(record: index)
            case (2, false):
                throw .dataAfterLastRecord(record: index)
            case (let delimiter, _):
                throw .invalidPaddingDelimiter(record: index, delimiter: delimiter)
            }
            start = end
            sequence += 1
        }
        return plaintext
    }

    /// Encrypts `plaintext` into a whole body: header, then as many records as it takes.
    ///
    /// Record `i` carries `padding[i]` zero bytes of padding (none where `padding` has no entry)
    /// and as much plaintext as fits; every record but the last is exactly `recordSize` bytes.
    ///
    /// - Parameters:
    ///   - plaintext: The content.
    ///   - inputKeyingMaterial: The IKM (RFC 8188 §2.2).
    ///   - salt: 16 bytes, fresh for every message.
    ///   - keyID: The header's key id, at most 255 bytes.
    ///   - recordSize: The record size, at least 18.
    ///   - padding: The padding length of each record, in order.
    /// - Returns: The body.
    /// - Throws: ``WebPushError/invalidSaltLength(_:)``, ``WebPushError/recordSizeTooSmall(_:)``,
    ///   ``WebPushError/invalidKeyIDLength(_:)``, ``WebPushError/invalidPaddingLength(_:)``.
    package static func encrypt(
        _ plaintext: Data, inputKeyingMaterial: SymmetricKey, salt: Data, keyID: Data, recordSize: UInt32,
        padding: [Int] = []
    ) throws(WebPushError) -> Data {
        guard recordSize >= minimumRecordSize else { throw .recordSizeTooSmall(recordSize) }
        let content = Data(plaintext)
        var records: [Data] = []
        var start = 0
        repeat {
            let paddingLength = records.count < padding.count ? padding[records.count] : 0
            let capacity = Int(recordSize) - recordOverhead - paddingLength
            guard paddingLength >= 0, capacity >= 0 else { throw .invalidPaddingLength(paddingLength) }
            let isLast = content.count - start <= capacity
            guard isLast || capacity > 0 else { throw .invalidPaddingLength(paddingLength) }
            let end = isLast ? content.count : start + capacity
            var record = Data(content[start..<end])
            record.append(isLast ? 2 : 1)
            record.append(Data(repeating: 0, count: paddingLength))
            records.append(record)
            start = end
        } while start < content.count
        return try sealRecords(
            records, inputKeyingMaterial: inputKeyingMaterial, salt: salt, keyID: keyID, recordSize: recordSize)
    }

    /// Writes a header and seals each of `records` as it is: the plaintexts must already end in
    /// their delimiter and padding. ``encrypt(_:inputKeyingMaterial:salt:keyID:recordSize:padding:)``
    /// builds them; tests pass malformed ones (no delimiter, a wrong one) to check the decryptor.
    ///
    /// - Parameters:
    ///   - records: Each record's plaintext, delimiter and padding included; at most
    ///     `recordSize - 16` bytes each.
    ///   - inputKeyingMaterial: The IKM (RFC 8188 §2.2).
    ///   - salt: 16 bytes.
    ///   - keyID: The header's key id, at most 255 bytes.
    ///   - recordSize: The record size written in the header.
    /// - Returns: The body.
    /// - Throws: ``WebPushError/invalidSaltLength(_:)``, ``WebPushError/invalidKeyIDLength(_:)``,
    ///   ``WebPushError/invalidPaddingLength(_:)`` for a record that does not fit.
    package static func sealRecords(
        _ records: [Data], inputKeyingMaterial: SymmetricKey, salt: Data, keyID: Data, recordSize: UInt32
    ) throws(WebPushError) -> Data {
        guard salt.count == 16 else { throw .invalidSaltLength(salt.count) }
        guard keyID.count <= 255 else { throw .invalidKeyIDLength(keyID.count) }
        let (key, baseNonce) = deriveKeyAndNonce(salt: salt, inputKeyingMaterial: inputKeyingMaterial)
        var body = Data(salt)
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(keyID.count))
        body.append(keyID)
        for (sequence, record) in records.enumerated() {
            guard record.count + 16 <= Int(recordSize) else { throw .invalidPaddingLength(record.count) }
            do {
                let nonce = recordNonce(baseNonce, sequence: UInt64(sequence))
                let sealed = try AES.GCM.seal(record, using: key, nonce: nonce)
                body.append(sealed.ciphertext)
                body.append(sealed.tag)
            } catch {
                // AES-GCM with a 16-byte key and a 12-byte nonce cannot fail.
                preconditionFailure("AES-GCM seal failed: \(error)")
            }
        }
        return body
    }

    /// CEK and NONCE (RFC 8188 §2.2, §2.3): HKDF-SHA-256 with the salt, 16 and 12 bytes.
    private static func deriveKeyAndNonce(salt: Data, inputKeyingMaterial: SymmetricKey) -> (SymmetricKey, Data) {
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: inputKeyingMaterial, salt: salt)
        let key = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.expand(
            pseudoRandomKey: prk, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { Data($0) })
    }

    /// The nonce of record `sequence`: the base nonce XOR the sequence number as a 96-bit
    /// big-endian integer (RFC 8188 §2.3).
    private static func recordNonce(_ base: Data, sequence: UInt64) -> AES.GCM.Nonce {
        var bytes = [UInt8](base)
        for offset in 0..<8 {
            bytes[11 - offset] ^= UInt8(truncatingIfNeeded: sequence >> (8 * UInt64(offset)))
        }
        do {
            return try AES.GCM.Nonce(data: bytes)
        } catch {
            // Twelve bytes are always a valid nonce.
            preconditionFailure("AES-GCM nonce rejected: \(error)")
        }
    }
}
