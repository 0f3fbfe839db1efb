#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What a verified VAPID `Authorization` header says about the application server.
///
/// ``VAPID/verify(authorizationHeader:expectedAudience:now:)`` returns it only once the token's
/// signature, audience and expiry have been checked.
public struct VAPIDCredentials: Sendable, Equatable {
    /// The application server's public key (`k`), 65 bytes uncompressed: compare it with the
    /// subscription's `applicationServerKey` to restrict a subscription to its server.
    public let publicKey: Data
    /// The `sub` claim, a contact such as `mailto:ops@example.com`, if the token has one.
    public let subject: String?
    /// The `exp` claim.
    public let expiresAt: Date
    /// The `aud` claim, as the token wrote it.
    public let audience: String

    /// Credentials from their parts (``VAPID`` makes them; tests compare with them).
    ///
    /// - Parameters:
    ///   - publicKey: The 65-byte public key.
    ///   - subject: The `sub` claim.
    ///   - expiresAt: The `exp` claim.
    ///   - audience: The `aud` claim.
    public init(publicKey: Data, subject: String?, expiresAt: Date, audience: String) {
        self.publicKey = publicKey
        self.subject = subject
        self.expiresAt = expiresAt
        self.audience = audience
    }
}
