import Crypto
import Foundation
import Testing
import WebPush

@Suite("WebPushEncryption")
struct WebPushEncryptionTests {
    let keys = WebPushKeys()

    /// A body sealed from hand-made record plaintexts (delimiter and padding included), so the
    /// decryptor can be shown bodies no correct sender writes.
    func sealed(_ records: [[UInt8]], recordSize: UInt32 = 4096) throws -> Data {
        let sender = P256.KeyAgreement.PrivateKey()
        let ikm = try WebPushEncryption.senderInputKeyingMaterial(
            senderPrivateKey: sender, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret)
        return try AES128GCMContentCoding.sealRecords(
            records.map { Data($0) }, inputKeyingMaterial: ikm, salt: Data(repeating: 7, count: 16),
            keyID: sender.publicKey.x963Representation, recordSize: recordSize)
    }

    func encrypt(_ plaintext: Data, paddingLength: Int = 0, recordSize: UInt32 = 4096) throws -> Data {
        try WebPushEncryption.encrypt(
            plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, recordSize: recordSize,
            paddingLength: paddingLength)
    }

    // MARK: Round trips

    @Test("what encrypt writes, decrypt reads back", arguments: [0, 1, 15, 16, 17, 1000, 4079])
    func roundTrip(length: Int) throws {
        let plaintext = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let body = try encrypt(plaintext)
        #expect(body.count == 86 + length + 17)
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == plaintext)
    }

    @Test("padding is added to the record and stripped on decryption")
    func padding() throws {
        let plaintext = Data("short".utf8)
        let body = try encrypt(plaintext, paddingLength: 100)
        #expect(body.count == 86 + plaintext.count + 100 + 17)
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == plaintext)
    }

    @Test("each message gets a fresh salt and sender key")
    func freshSaltAndKey() throws {
        let first = try encrypt(Data("same".utf8))
        let second = try encrypt(Data("same".utf8))
        #expect(first.prefix(16) != second.prefix(16))
        #expect(first[21..<86] != second[21..<86])
    }

    @Test("a body of several records decrypts in order, padding in each removed")
    func multipleRecords() throws {
        let body = try sealed(
            [Array("I am th".utf8) + [1, 0], Array("e walrus".utf8) + [1], Array("!".utf8) + [2, 0, 0]],
            recordSize: 25)
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == Data("I am the walrus!".utf8))
    }

    @Test("a last record of exactly the record size is fine")
    func lastRecordFull() throws {
        let body = try sealed([Array("12345678".utf8) + [2]], recordSize: 25)
        #expect(body.count == 86 + 25)
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == Data("12345678".utf8))
    }

    // MARK: Refused bodies

    @Test("a body shorter than its header is refused", arguments: [0, 20, 21, 85])
    func shorterThanHeader(length: Int) throws {
        let body = try encrypt(Data("x".utf8)).prefix(length)
        #expect(throws: WebPushError.bodyShorterThanHeader(length: length)) {
            try WebPushEncryption.decrypt(body, keys: keys)
        }
    }

    @Test("a header and no record is refused")
    func noRecord() throws {
        let body = try encrypt(Data("x".utf8)).prefix(86)
        #expect(throws: WebPushError.missingRecords) { try WebPushEncryption.decrypt(body, keys: keys) }
    }

    @Test("a key id that is not 65 bytes is refused", arguments: [0, 2, 64, 66])
    func keyIDLength(length: Int) throws {
        let ikm = SymmetricKey(size: .bits256)
        let body = try AES128GCMContentCoding.encrypt(
            Data("x".utf8), inputKeyingMaterial: ikm, salt: Data(count: 16), keyID: Data(repeating: 4, count: length),
            recordSize: 4096)
        #expect(throws: WebPushError.invalidKeyIDLength(length)) { try WebPushEncryption.decrypt(body, keys: keys) }
    }

    @Test("a record size below 18 is refused", arguments: [0, 1, 17] as [UInt32])
    func recordSizeTooSmall(recordSize: UInt32) throws {
        var body = try encrypt(Data("x".utf8))
        body.replaceSubrange(16..<20, with: withUnsafeBytes(of: recordSize.bigEndian) { Data($0) })
        #expect(throws: WebPushError.recordSizeTooSmall(recordSize)) {
            try WebPushEncryption.decrypt(body, keys: keys)
        }
    }

    @Test("a key id that is not a point on P-256 is refused")
    func senderKeyNotOnCurve() throws {
        let body = try encrypt(Data("x".utf8))
        var offCurve = body
        offCurve.replaceSubrange(22..<86, with: Data(repeating: 0, count: 64))
        #expect(throws: WebPushError.invalidSenderPublicKey) { try WebPushEncryption.decrypt(offCurve, keys: keys) }
        // A compressed-point prefix on 65 bytes is not a key either.
        #expect(throws: WebPushError.invalidSenderPublicKey) {
            try WebPushEncryption.decrypt(body.flipping(at: 21, mask: 0x06), keys: keys)
        }
    }

    @Test("a changed tag, ciphertext, salt or sender key fails authentication")
    func tampered() throws {
        let body = try encrypt(Data("attack at dawn".utf8))
        for index in [body.count - 1, 86, 0] {
            #expect(throws: WebPushError.authenticationFailed(record: 0)) {
                try WebPushEncryption.decrypt(body.flipping(at: index), keys: keys)
            }
        }
        // Another valid sender key in the key id: a different ECDH secret.
        var otherSender = body
        otherSender.replaceSubrange(21..<86, with: WebPushKeys().publicKey)
        #expect(throws: WebPushError.authenticationFailed(record: 0)) {
            try WebPushEncryption.decrypt(otherSender, keys: keys)
        }
    }

    @Test("the wrong private key or auth secret fails authentication")
    func wrongKeys() throws {
        let body = try encrypt(Data("for someone else".utf8))
        let otherKeys = WebPushKeys()
        let otherAuth = try WebPushKeys(privateKey: keys.privateKeyData, authSecret: otherKeys.authSecret)
        let otherPrivate = try WebPushKeys(privateKey: otherKeys.privateKeyData, authSecret: keys.authSecret)
        for wrong in [otherKeys, otherAuth, otherPrivate] {
            #expect(throws: WebPushError.authenticationFailed(record: 0)) {
                try WebPushEncryption.decrypt(body, keys: wrong)
            }
        }
    }

    @Test("a changed second record fails authentication as record 1")
    func tamperedSecondRecord() throws {
        let body = try sealed([Array("1234567".utf8) + [1], Array("abc".utf8) + [2]], recordSize: 24)
        #expect(throws: WebPushError.authenticationFailed(record: 1)) {
            try WebPushEncryption.decrypt(body.flipping(at: 86 + 24 + 1), keys: keys)
        }
    }

    @Test("swapped records fail authentication: each nonce is bound to its position")
    func swappedRecords() throws {
        let body = try sealed([Array("1234567".utf8) + [1], Array("abcdefg".utf8) + [2]], recordSize: 24)
        var swapped = body.prefix(86)
        swapped.append(body[(86 + 24)...])
        swapped.append(body[86..<(86 + 24)])
        #expect(throws: WebPushError.authenticationFailed(record: 0)) {
            try WebPushEncryption.decrypt(swapped, keys: keys)
        }
    }

    @Test("a record of only zeros has no delimiter")
    func missingDelimiter() throws {
        #expect(throws: WebPushError.missingPaddingDelimiter(record: 0)) {
            try WebPushEncryption.decrypt(try sealed([[0, 0, 0]]), keys: keys)
        }
        // No plaintext at all: the record is only a tag, too short to hold a delimiter.
        #expect(throws: WebPushError.truncatedRecord(record: 0, length: 16)) {
            try WebPushEncryption.decrypt(try sealed([[]]), keys: keys)
        }
    }

    @Test("a delimiter other than 1 or 2 is refused", arguments: [3, 0x80, 0xff] as [UInt8])
    func invalidDelimiter(delimiter: UInt8) throws {
        let body = try sealed([Array("text".utf8) + [delimiter, 0]])
        #expect(throws: WebPushError.invalidPaddingDelimiter(record: 0, delimiter: delimiter)) {
            try WebPushEncryption.decrypt(body, keys: keys)
        }
    }

    @Test("a record before the last marked as last is refused")
    func dataAfterLast() throws {
        let body = try sealed([Array("1234567".utf8) + [2], Array("abc".utf8) + [2]], recordSize: 24)
        #expect(throws: WebPushError.dataAfterLastRecord(record: 0)) {
            try WebPushEncryption.decrypt(body, keys: keys)
        }
    }

    @Test("a last record marked as one with more to follow (truncation at a boundary) is refused")
    func lastNotMarkedLast() throws {
        let single = try sealed([Array("text".utf8) + [1]])
        #expect(throws: WebPushError.lastRecordNotMarkedLast(record: 0)) {
            try WebPushEncryption.decrypt(single, keys: keys)
        }
        // Two records, the second cut off whole: the first says more follows.
        let double = try sealed([Array("1234567".utf8) + [1], Array("abc".utf8) + [2]], recordSize: 24)
        #expect(throws: WebPushError.lastRecordNotMarkedLast(record: 0)) {
            try WebPushEncryption.decrypt(double.prefix(86 + 24), keys: keys)
        }
    }

    @Test("a record too short for a delimiter and tag is refused", arguments: [1, 16])
    func truncatedRecord(length: Int) throws {
        let body = try sealed([Array("1234567".utf8) + [1], Array("abc".utf8) + [2]], recordSize: 24)
        #expect(throws: WebPushError.truncatedRecord(record: 1, length: length)) {
            try WebPushEncryption.decrypt(body.prefix(86 + 24 + length), keys: keys)
        }
    }

    @Test("a record cut short but still long enough for a tag fails authentication")
    func cutRecord() throws {
        let body = try encrypt(Data("a longer message that gets cut".utf8))
        #expect(throws: WebPushError.authenticationFailed(record: 0)) {
            try WebPushEncryption.decrypt(body.dropLast(5), keys: keys)
        }
    }

    @Test("a body that is a slice of a larger buffer decrypts")
    func slice() throws {
        let body = try encrypt(Data("sliced".utf8))
        let buffer = Data([9, 9, 9]) + body + Data([9])
        let slice = buffer[3..<(3 + body.count)]
        #expect(try WebPushEncryption.decrypt(slice, keys: keys) == Data("sliced".utf8))
    }

    // MARK: Refused encryptions

    @Test("encrypt refuses a receiver key that is not an uncompressed P-256 point")
    func encryptRefusesReceiverKey() throws {
        let good = keys.publicKey
        var offCurve = good
        offCurve.replaceSubrange(1..<65, with: Data(repeating: 0, count: 64))
        for bad in [Data(), good.prefix(64), good + Data([0]), offCurve, good.flipping(at: 0, mask: 0x06)] {
            #expect(throws: WebPushError.invalidReceiverPublicKey) {
                try WebPushEncryption.encrypt(Data("x".utf8), receiverPublicKey: bad, authSecret: keys.authSecret)
            }
        }
    }

    @Test("encrypt refuses a wrong-sized auth secret or salt")
    func encryptRefusesLengths() {
        #expect(throws: WebPushError.invalidAuthSecretLength(15)) {
            try WebPushEncryption.encrypt(Data(), receiverPublicKey: keys.publicKey, authSecret: Data(count: 15))
        }
        #expect(throws: WebPushError.invalidSaltLength(8)) {
            try WebPushEncryption.encrypt(
                Data(), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, salt: Data(count: 8))
        }
    }

    @Test("encrypt refuses a record size below 18 and a negative padding")
    func encryptRefusesRecordSizeAndPadding() {
        #expect(throws: WebPushError.recordSizeTooSmall(17)) { try encrypt(Data(), recordSize: 17) }
        #expect(throws: WebPushError.invalidPaddingLength(-1)) { try encrypt(Data(), paddingLength: -1) }
    }

    @Test("encrypt refuses what does not fit in one record")
    func encryptRefusesTooLarge() throws {
        #expect(throws: WebPushError.plaintextTooLarge(length: 4080, paddingLength: 0, recordSize: 4096)) {
            try encrypt(Data(count: 4080))
        }
        #expect(throws: WebPushError.plaintextTooLarge(length: 2, paddingLength: 0, recordSize: 18)) {
            try encrypt(Data(count: 2), recordSize: 18)
        }
        #expect(throws: WebPushError.plaintextTooLarge(length: 4000, paddingLength: 80, recordSize: 4096)) {
            try encrypt(Data(count: 4000), paddingLength: 80)
        }
        // The largest that fits: 4096 - 17.
        let body = try encrypt(Data(count: 4079))
        #expect(body.count == 86 + 4096)
    }
}
