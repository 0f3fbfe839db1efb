import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The key material of a receiving user agent (RFC 8291 §2): a P-256 key-agreement key pair and a
/// 16-byte auth secret.
///
/// The public key (`p256dh`) and the auth secret (`auth`) go to the application server with the
/// push subscription; the private key never leaves the user agent. Store ``privateKeyData`` and
/// ``authSecret`` (raw bytes) and rebuild the keys with ``init(privateKey:authSecret:)``.
public struct WebPushKeys: Sendable {
    /// The key-agreement private key.
    let privateKey: P256.KeyAgreement.PrivateKey

    /// The 16-byte auth secret shared with the application server.
    public let authSecret: Data

    /// Fresh keys: a random P-256 key pair and 16 random bytes of auth secret.
    public init() {
        privateKey = P256.KeyAgreement.PrivateKey()
        var generator = SystemRandomNumberGenerator()
        authSecret = Data((0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Keys from their stored bytes.
    ///
    /// - Parameters:
    ///   - privateKey: The private key as a 32-byte big-endian scalar (``privateKeyData``).
    ///   - authSecret: The 16-byte auth secret.
    /// - Throws: ``WebPushError/invalidPrivateKey`` if `privateKey` is not a valid P-256 scalar,
    ///   ``WebPushError/invalidAuthSecretLength(_:)`` if `authSecret` is not 16 bytes.
    public init(privateKey: Data, authSecret: Data) throws(WebPushError) {
        guard authSecret.count == 16 else { throw .invalidAuthSecretLength(authSecret.count) }
        guard privateKey.count == 32 else { throw .invalidPrivateKey }
        do {
            self.privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
        } catch {
            throw .invalidPrivateKey
        }
        self.authSecret = Data(authSecret)
    }

    /// The public key as a 65-byte uncompressed point (X9.63: `0x04 || x || y`), the subscription's
    /// `p256dh`.
    public var publicKey: Data { privateKey.publicKey.x963Representation }

    /// The private key as a 32-byte big-endian scalar.
    public var privateKeyData: Data { privateKey.rawRepresentation }
}
