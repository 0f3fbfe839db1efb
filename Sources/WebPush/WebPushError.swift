#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a Web Push operation failed: a key, a message body or a VAPID token that is not what the
/// RFCs require.
///
/// Every case names one failure, so a caller (a push gateway answering `400`, a test) can tell
/// them apart; ``description`` says what was wrong in words. Records are counted from 0, in the
/// order they appear in the body.
public enum WebPushError: Error, Equatable, Sendable, CustomStringConvertible {
    // MARK: Keys

    /// A private key is not a valid P-256 scalar (32 bytes, not zero, less than the group order).
    case invalidPrivateKey
    /// An auth secret is not 16 bytes (RFC 8291 §3.2); the associated value is its length.
    case invalidAuthSecretLength(Int)
    /// The receiver's public key, given to ``WebPushEncryption/encrypt(_:receiverPublicKey:authSecret:recordSize:paddingLength:salt:senderPrivateKey:)``,
    /// is not a 65-byte uncompressed point on P-256.
    case invalidReceiverPublicKey
    /// A salt is not 16 bytes (RFC 8188 §2.1); the associated value is its length.
    case invalidSaltLength(Int)

    // MARK: Encrypted bodies (RFC 8188, RFC 8291)

    /// The body is shorter than its own header: 21 bytes, plus the key id its `idlen` announces.
    case bodyShorterThanHeader(length: Int)
    /// The key id is not the 65-byte public key of the sender that RFC 8291 §4 requires.
    case invalidKeyIDLength(Int)
    /// The record size is below 18 (RFC 8188 §2: a record holds at least a delimiter and the 16-byte tag, and a
    /// byte of content), or a record size given to an encryptor is.
    case recordSizeTooSmall(UInt32)
    /// The key id of the body is not a valid P-256 public key (an uncompressed point on the curve).
    case invalidSenderPublicKey
    /// A header is followed by no record at all.
    case missingRecords
    /// A record failed AES-GCM authentication: the wrong keys, or a body changed in transit.
    case authenticationFailed(record: Int)
    /// A record's plaintext is all zeros: it has no padding delimiter.
    case missingPaddingDelimiter(record: Int)
    /// A record's padding delimiter is neither 1 nor 2.
    case invalidPaddingDelimiter(record: Int, delimiter: UInt8)
    /// A record before the last is marked as the last one (delimiter 2): more data follows the end.
    case dataAfterLastRecord(record: Int)
    /// The last record is marked as one with more to follow (delimiter 1): the body was truncated
    /// at a record boundary (RFC 8188 §2).
    case lastRecordNotMarkedLast(record: Int)
    /// A record is too short to hold a delimiter and the authentication tag (17 bytes).
    case truncatedRecord(record: Int, length: Int)
    /// A plaintext with its padding does not fit into one record of the record size.
    case plaintextTooLarge(length: Int, paddingLength: Int, recordSize: UInt32)
    /// A padding length is negative, or leaves no room for content in a record before the last.
    case invalidPaddingLength(Int)

    // MARK: VAPID (RFC 8292)

    /// The `Authorization` header is not `vapid t=<JWT>, k=<key>`; the associated value says how.
    case malformedAuthorizationHeader(String)
    /// The `t` parameter is not a JWT of three base64url parts with JSON header and claims; the
    /// associated value says what was wrong.
    case malformedJWT(String)
    /// The JWT is signed with an algorithm other than ES256; the associated value is its `alg`.
    case unsupportedJWTAlgorithm(String)
    /// The JWT's signature is not a valid ES256 signature by the key in `k`.
    case invalidVAPIDSignature
    /// The `k` parameter is not a 65-byte uncompressed P-256 point, in base64url.
    case invalidVAPIDPublicKey
    /// The JWT's `aud` is not the origin the token was presented to.
    case audienceMismatch(expected: String, actual: String)
    /// A string given as an audience is not an origin (`https://host[:port]`).
    case invalidAudience(String)
    /// The JWT's `exp` has passed (beyond the allowed clock skew).
    case vapidTokenExpired(expiredAt: Date)
    /// The JWT's `exp` is more than 24 hours ahead (RFC 8292 §2), beyond the allowed clock skew.
    case vapidExpiryTooFarAhead(expiresAt: Date)
    /// A VAPID token was asked for with a lifetime that is not positive or exceeds 24 hours.
    case invalidVAPIDLifetime(Duration)
    /// A VAPID signing key could not be read (raw scalar or PEM); the associated value says why.
    case invalidSigningKey(String)
    /// Signing or encoding a VAPID token failed; the associated value says why.
    case vapidSigningFailed(String)

    /// What went wrong, in a sentence.
    public var description: String {
        switch self {
        case .invalidPrivateKey:
            "the private key is not a valid P-256 scalar (32 bytes, 0 < d < n)"
        case .invalidAuthSecretLength(let length):
            "the auth secret is \(length) bytes; RFC 8291 requires 16"
        case .invalidReceiverPublicKey:
            "the receiver's public key is not a 65-byte uncompressed P-256 point"
        case .invalidSaltLength(let length):
            "the salt is \(length) bytes; RFC 8188 requires 16"
        case .bodyShorterThanHeader(let length):
            "the body (\(length) bytes) is shorter than its aes128gcm header"
        case .invalidKeyIDLength(let length):
            "the key id is \(length) bytes; RFC 8291 requires the sender's 65-byte public key"
        case .recordSizeTooSmall(let size):
            "the record size \(size) is below the minimum of 18"
        case .invalidSenderPublicKey:
            "the key id is not a valid P-256 public key"
        case .missingRecords:
            "the body has a header but no record"
        case .authenticationFailed(let record):
            "record \(record) failed authentication (wrong keys or a changed body)"
        case .missingPaddingDelimiter(let record):
            "record \(record) has no padding delimiter (its plaintext is all zeros)"
        case .invalidPaddingDelimiter(let record, let delimiter):
            "record \(record) has padding delimiter \(delimiter); only 1 and 2 are valid"
        case .dataAfterLastRecord(let record):
            "record \(record) is marked as the last one, but more records follow"
        case .lastRecordNotMarkedLast(let record):
            "the last record (\(record)) is marked as having more to follow: the body is truncated"
        case .truncatedRecord(let record, let length):
            "record \(record) is \(length) bytes, too short for a delimiter and the 16-byte tag"
        case .plaintextTooLarge(let length, let paddingLength, let recordSize):
            "\(length) bytes of plaintext with \(paddingLength) of padding do not fit in one record of \(recordSize)"
        case .invalidPaddingLength(let length):
            "the padding length \(length) is negative or leaves no room for content"
        case .malformedAuthorizationHeader(let reason):
            "the Authorization header is not 'vapid t=<JWT>, k=<key>': \(reason)"
        case .malformedJWT(let reason):
            "the VAPID token is not a valid JWT: \(reason)"
        case .unsupportedJWTAlgorithm(let algorithm):
            "the VAPID token is signed with '\(algorithm)'; RFC 8292 requires ES256"
        case .invalidVAPIDSignature:
            "the VAPID token's signature does not verify with the key in 'k'"
        case .invalidVAPIDPublicKey:
            "the VAPID key 'k' is not a base64url 65-byte uncompressed P-256 point"
        case .audienceMismatch(let expected, let actual):
            "the VAPID token is for '\(actual)', not '\(expected)'"
        case .invalidAudience(let audience):
            "'\(audience)' is not an origin (scheme://host[:port])"
        case .vapidTokenExpired(let expiredAt):
            "the VAPID token expired at \(Int64(expiredAt.timeIntervalSince1970)) (Unix time)"
        case .vapidExpiryTooFarAhead(let expiresAt):
            "the VAPID token expires at \(Int64(expiresAt.timeIntervalSince1970)) (Unix time), more than 24 h ahead"
        case .invalidVAPIDLifetime(let lifetime):
            "a VAPID token's lifetime must be positive and at most 24 h, not \(lifetime)"
        case .invalidSigningKey(let reason):
            "the VAPID signing key cannot be read: \(reason)"
        case .vapidSigningFailed(let reason):
            "the VAPID token cannot be signed: \(reason)"
        }
    }
}
