#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a Web Push operation failed: a key, a message body or a VAPID token that is not what the
/// RFCs require.
///
/// Shaped like swift-service-lifecycle's `ServiceGroupError` (the project's one error shape): an
/// opaque ``code`` over a private enum, so that a caller (a push gateway answering `400`, a test)
/// can tell the failures apart and new ones are not a breaking change, and a ``message`` that says
/// what was wrong in words. Each failure has a static function of its own that builds it with its
/// details in the message (``authenticationFailed(record:)``); two errors are equal when their code
/// and message are. Records are counted from 0, in the order they appear in the body.
public struct WebPushError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members
    /// (`error.code == .authenticationFailed`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidPrivateKey = "invalid-private-key"
            case invalidAuthSecretLength = "invalid-auth-secret-length"
            case invalidReceiverPublicKey = "invalid-receiver-public-key"
            case invalidSaltLength = "invalid-salt-length"
            case bodyShorterThanHeader = "body-shorter-than-header"
            case invalidKeyIDLength = "invalid-key-id-length"
            case recordSizeTooSmall = "record-size-too-small"
            case invalidSenderPublicKey = "invalid-sender-public-key"
            case missingRecords = "missing-records"
            case authenticationFailed = "authentication-failed"
            case missingPaddingDelimiter = "missing-padding-delimiter"
            case invalidPaddingDelimiter = "invalid-padding-delimiter"
            case dataAfterLastRecord = "data-after-last-record"
            case lastRecordNotMarkedLast = "last-record-not-marked-last"
            case truncatedRecord = "truncated-record"
            case plaintextTooLarge = "plaintext-too-large"
            case invalidPaddingLength = "invalid-padding-length"
            case malformedAuthorizationHeader = "malformed-authorization-header"
            case malformedJWT = "malformed-jwt"
            case unsupportedJWTAlgorithm = "unsupported-jwt-algorithm"
            case invalidVAPIDSignature = "invalid-vapid-signature"
            case invalidVAPIDPublicKey = "invalid-vapid-public-key"
            case audienceMismatch = "audience-mismatch"
            case invalidAudience = "invalid-audience"
            case vapidTokenExpired = "vapid-token-expired"
            case vapidExpiryTooFarAhead = "vapid-expiry-too-far-ahead"
            case invalidVAPIDLifetime = "invalid-vapid-lifetime"
            case invalidSigningKey = "invalid-signing-key"
            case vapidSigningFailed = "vapid-signing-failed"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        // MARK: Keys

        /// A private key is not a valid P-256 scalar (32 bytes, not zero, less than the group order).
        public static let invalidPrivateKey = Code(.invalidPrivateKey)
        /// An auth secret is not 16 bytes (RFC 8291 §3.2).
        public static let invalidAuthSecretLength = Code(.invalidAuthSecretLength)
        /// The receiver's public key, given to ``WebPushEncryption/encrypt(_:receiverPublicKey:authSecret:recordSize:paddingLength:salt:senderPrivateKey:)``,
        /// is not a 65-byte uncompressed point on P-256.
        public static let invalidReceiverPublicKey = Code(.invalidReceiverPublicKey)
        /// A salt is not 16 bytes (RFC 8188 §2.1).
        public static let invalidSaltLength = Code(.invalidSaltLength)
        // MARK: Encrypted bodies (RFC 8188, RFC 8291)

        /// The body is shorter than its own header: 21 bytes, plus the key id its `idlen` announces.
        public static let bodyShorterThanHeader = Code(.bodyShorterThanHeader)
        /// The key id is not the 65-byte public key of the sender that RFC 8291 §4 requires.
        public static let invalidKeyIDLength = Code(.invalidKeyIDLength)
        /// The record size is below 18 (RFC 8188 §2: a record holds at least a delimiter and the 16-byte tag, and a
        /// byte of content), or a record size given to an encryptor is.
        public static let recordSizeTooSmall = Code(.recordSizeTooSmall)
        /// The key id of the body is not a valid P-256 public key (an uncompressed point on the curve).
        public static let invalidSenderPublicKey = Code(.invalidSenderPublicKey)
        /// A header is followed by no record at all.
        public static let missingRecords = Code(.missingRecords)
        /// A record failed AES-GCM authentication: the wrong keys, or a body changed in transit.
        public static let authenticationFailed = Code(.authenticationFailed)
        /// A record's plaintext is all zeros: it has no padding delimiter.
        public static let missingPaddingDelimiter = Code(.missingPaddingDelimiter)
        /// A record's padding delimiter is neither 1 nor 2.
        public static let invalidPaddingDelimiter = Code(.invalidPaddingDelimiter)
        /// A record before the last is marked as the last one (delimiter 2): more data follows the end.
        public static let dataAfterLastRecord = Code(.dataAfterLastRecord)
        /// The last record is marked as one with more to follow (delimiter 1): the body was truncated
        /// at a record boundary (RFC 8188 §2).
        public static let lastRecordNotMarkedLast = Code(.lastRecordNotMarkedLast)
        /// A record is too short to hold a delimiter and the authentication tag (17 bytes).
        public static let truncatedRecord = Code(.truncatedRecord)
        /// A plaintext with its padding does not fit into one record of the record size.
        public static let plaintextTooLarge = Code(.plaintextTooLarge)
        /// A padding length is negative, or leaves no room for content in a record before the last.
        public static let invalidPaddingLength = Code(.invalidPaddingLength)
        // MARK: VAPID (RFC 8292)

        /// The `Authorization` header is not `vapid t=<JWT>, k=<key>`.
        public static let malformedAuthorizationHeader = Code(.malformedAuthorizationHeader)
        /// The `t` parameter is not a JWT of three base64url parts with JSON header and claims; the
        /// associated value says what was wrong.
        public static let malformedJWT = Code(.malformedJWT)
        /// The JWT is signed with an algorithm other than ES256.
        public static let unsupportedJWTAlgorithm = Code(.unsupportedJWTAlgorithm)
        /// The JWT's signature is not a valid ES256 signature by the key in `k`.
        public static let invalidVAPIDSignature = Code(.invalidVAPIDSignature)
        /// The `k` parameter is not a 65-byte uncompressed P-256 point, in base64url.
        public static let invalidVAPIDPublicKey = Code(.invalidVAPIDPublicKey)
        /// The JWT's `aud` is not the origin the token was presented to.
        public static let audienceMismatch = Code(.audienceMismatch)
        /// A string given as an audience is not an origin (`https://host[:port]`).
        public static let invalidAudience = Code(.invalidAudience)
        /// The JWT's `exp` has passed (beyond the allowed clock skew).
        public static let vapidTokenExpired = Code(.vapidTokenExpired)
        /// The JWT's `exp` is more than 24 hours ahead (RFC 8292 §2), beyond the allowed clock skew.
        public static let vapidExpiryTooFarAhead = Code(.vapidExpiryTooFarAhead)
        /// A VAPID token was asked for with a lifetime that is not positive or exceeds 24 hours.
        public static let invalidVAPIDLifetime = Code(.invalidVAPIDLifetime)
        /// A VAPID signing key could not be read (raw scalar or PEM).
        public static let invalidSigningKey = Code(.invalidSigningKey)
        /// Signing or encoding a VAPID token failed.
        public static let vapidSigningFailed = Code(.vapidSigningFailed)

        /// The code's name, as in logs: `authentication-failed`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What went wrong, in a sentence.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong, in a sentence.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message: what went wrong, in a sentence.
    public var description: String { message }

    // MARK: Keys

    /// A private key is not a valid P-256 scalar (32 bytes, not zero, less than the group order).
    public static var invalidPrivateKey: WebPushError {
        WebPushError(.invalidPrivateKey, "the private key is not a valid P-256 scalar (32 bytes, 0 < d < n)")
    }

    /// An auth secret is not 16 bytes (RFC 8291 §3.2); the parameter is its length.
    public static func invalidAuthSecretLength(_ length: Int) -> WebPushError {
        WebPushError(.invalidAuthSecretLength, "the auth secret is \(length) bytes; RFC 8291 requires 16")
    }

    /// The receiver's public key, given to ``WebPushEncryption/encrypt(_:receiverPublicKey:authSecret:recordSize:paddingLength:salt:senderPrivateKey:)``,
    /// is not a 65-byte uncompressed point on P-256.
    public static var invalidReceiverPublicKey: WebPushError {
        WebPushError(.invalidReceiverPublicKey, "the receiver's public key is not a 65-byte uncompressed P-256 point")
    }

    /// A salt is not 16 bytes (RFC 8188 §2.1); the parameter is its length.
    public static func invalidSaltLength(_ length: Int) -> WebPushError {
        WebPushError(.invalidSaltLength, "the salt is \(length) bytes; RFC 8188 requires 16")
    }

    // MARK: Encrypted bodies (RFC 8188, RFC 8291)

    /// The body is shorter than its own header: 21 bytes, plus the key id its `idlen` announces.
    public static func bodyShorterThanHeader(length: Int) -> WebPushError {
        WebPushError(.bodyShorterThanHeader, "the body (\(length) bytes) is shorter than its aes128gcm header")
    }

    /// The key id is not the 65-byte public key of the sender that RFC 8291 §4 requires.
    public static func invalidKeyIDLength(_ length: Int) -> WebPushError {
        WebPushError(
            .invalidKeyIDLength, "the key id is \(length) bytes; RFC 8291 requires the sender's 65-byte public key")
    }

    /// The record size is below 18 (RFC 8188 §2: a record holds at least a delimiter and the 16-byte tag, and a
    /// byte of content), or a record size given to an encryptor is.
    public static func recordSizeTooSmall(_ size: UInt32) -> WebPushError {
        WebPushError(.recordSizeTooSmall, "the record size \(size) is below the minimum of 18")
    }

    /// The key id of the body is not a valid P-256 public key (an uncompressed point on the curve).
    public static var invalidSenderPublicKey: WebPushError {
        WebPushError(.invalidSenderPublicKey, "the key id is not a valid P-256 public key")
    }

    /// A header is followed by no record at all.
    public static var missingRecords: WebPushError {
        WebPushError(.missingRecords, "the body has a header but no record")
    }

    /// A record failed AES-GCM authentication: the wrong keys, or a body changed in transit.
    public static func authenticationFailed(record: Int) -> WebPushError {
        WebPushError(.authenticationFailed, "record \(record) failed authentication (wrong keys or a changed body)")
    }

    /// A record's plaintext is all zeros: it has no padding delimiter.
    public static func missingPaddingDelimiter(record: Int) -> WebPushError {
        WebPushError(.missingPaddingDelimiter, "record \(record) has no padding delimiter (its plaintext is all zeros)")
    }

    /// A record's padding delimiter is neither 1 nor 2.
    public static func invalidPaddingDelimiter(record: Int, delimiter: UInt8) -> WebPushError {
        WebPushError(
            .invalidPaddingDelimiter, "record \(record) has padding delimiter \(delimiter); only 1 and 2 are valid")
    }

    /// A record before the last is marked as the last one (delimiter 2): more data follows the end.
    public static func dataAfterLastRecord(record: Int) -> WebPushError {
        WebPushError(.dataAfterLastRecord, "record \(record) is marked as the last one, but more records follow")
    }

    /// The last record is marked as one with more to follow (delimiter 1): the body was truncated
    /// at a record boundary (RFC 8188 §2).
    public static func lastRecordNotMarkedLast(record: Int) -> WebPushError {
        WebPushError(
            .lastRecordNotMarkedLast,
            "the last record (\(record)) is marked as having more to follow: the body is truncated")
    }

    /// A record is too short to hold a delimiter and the authentication tag (17 bytes).
    public static func truncatedRecord(record: Int, length: Int) -> WebPushError {
        WebPushError(
            .truncatedRecord, "record \(record) is \(length) bytes, too short for a delimiter and the 16-byte tag")
    }

    /// A plaintext with its padding does not fit into one record of the record size.
    public static func plaintextTooLarge(length: Int, paddingLength: Int, recordSize: UInt32) -> WebPushError {
        WebPushError(
            .plaintextTooLarge,
            "\(length) bytes of plaintext with \(paddingLength) of padding do not fit in one record of \(recordSize)")
    }

    /// A padding length is negative, or leaves no room for content in a record before the last.
    public static func invalidPaddingLength(_ length: Int) -> WebPushError {
        WebPushError(.invalidPaddingLength, "the padding length \(length) is negative or leaves no room for content")
    }

    // MARK: VAPID (RFC 8292)

    /// The `Authorization` header is not `vapid t=<JWT>, k=<key>`; the parameter says how.
    public static func malformedAuthorizationHeader(_ reason: String) -> WebPushError {
        WebPushError(
            .malformedAuthorizationHeader, "the Authorization header is not 'vapid t=<JWT>, k=<key>': \(reason)")
    }

    /// The `t` parameter is not a JWT of three base64url parts with JSON header and claims; the
    /// parameter says what was wrong.
    public static func malformedJWT(_ reason: String) -> WebPushError {
        WebPushError(.malformedJWT, "the VAPID token is not a valid JWT: \(reason)")
    }

    /// The JWT is signed with an algorithm other than ES256; the parameter is its `alg`.
    public static func unsupportedJWTAlgorithm(_ algorithm: String) -> WebPushError {
        WebPushError(.unsupportedJWTAlgorithm, "the VAPID token is signed with '\(algorithm)'; RFC 8292 requires ES256")
    }

    /// The JWT's signature is not a valid ES256 signature by the key in `k`.
    public static var invalidVAPIDSignature: WebPushError {
        WebPushError(.invalidVAPIDSignature, "the VAPID token's signature does not verify with the key in 'k'")
    }

    /// The `k` parameter is not a 65-byte uncompressed P-256 point, in base64url.
    public static var invalidVAPIDPublicKey: WebPushError {
        WebPushError(.invalidVAPIDPublicKey, "the VAPID key 'k' is not a base64url 65-byte uncompressed P-256 point")
    }

    /// The JWT's `aud` is not the origin the token was presented to.
    public static func audienceMismatch(expected: String, actual: String) -> WebPushError {
        WebPushError(.audienceMismatch, "the VAPID token is for '\(actual)', not '\(expected)'")
    }

    /// A string given as an audience is not an origin (`https://host[:port]`).
    public static func invalidAudience(_ audience: String) -> WebPushError {
        WebPushError(.invalidAudience, "'\(audience)' is not an origin (scheme://host[:port])")
    }

    /// The JWT's `exp` has passed (beyond the allowed clock skew).
    public static func vapidTokenExpired(expiredAt: Date) -> WebPushError {
        WebPushError(
            .vapidTokenExpired, "the VAPID token expired at \(Int64(expiredAt.timeIntervalSince1970)) (Unix time)")
    }

    /// The JWT's `exp` is more than 24 hours ahead (RFC 8292 §2), beyond the allowed clock skew.
    public static func vapidExpiryTooFarAhead(expiresAt: Date) -> WebPushError {
        WebPushError(
            .vapidExpiryTooFarAhead,
            "the VAPID token expires at \(Int64(expiresAt.timeIntervalSince1970)) (Unix time), more than 24 h ahead")
    }

    /// A VAPID token was asked for with a lifetime that is not positive or exceeds 24 hours.
    public static func invalidVAPIDLifetime(_ lifetime: Duration) -> WebPushError {
        WebPushError(
            .invalidVAPIDLifetime, "a VAPID token's lifetime must be positive and at most 24 h, not \(lifetime)")
    }

    /// A VAPID signing key could not be read (raw scalar or PEM); the parameter says why.
    public static func invalidSigningKey(_ reason: String) -> WebPushError {
        WebPushError(.invalidSigningKey, "the VAPID signing key cannot be read: \(reason)")
    }

    /// Signing or encoding a VAPID token failed; the parameter says why.
    public static func vapidSigningFailed(_ reason: String) -> WebPushError {
        WebPushError(.vapidSigningFailed, "the VAPID token cannot be signed: \(reason)")
    }
}
