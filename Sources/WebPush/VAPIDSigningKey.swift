import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An application server's VAPID key (RFC 8292): a P-256 ECDSA private key that signs the
/// `Authorization` header of every push request.
///
/// The push service learns the public key (``publicKeyBase64URL``) from the subscription's
/// `applicationServerKey` and accepts only requests it signed. Keep the private key; store
/// ``rawRepresentation`` (or a PEM) and rebuild the key with ``init(rawRepresentation:)``.
public struct VAPIDSigningKey: Sendable {
    let privateKey: P256.Signing.PrivateKey

    /// A fresh random key.
    public init() {
        privateKey = P256.Signing.PrivateKey()
    }

    /// A key from its raw 32-byte big-endian scalar.
    ///
    /// - Parameters:
    ///   - rawRepresentation: The scalar, as ``rawRepresentation`` returns it.
    /// - Throws: ``WebPushError/invalidSigningKey(_:)`` unless it is a valid P-256 scalar.
    public init(rawRepresentation: Data) throws(WebPushError) {
        guard rawRepresentation.count == 32 else {
            throw .invalidSigningKey("\(rawRepresentation.count) bytes, not a 32-byte P-256 scalar")
        }
        do {
            privateKey = try P256.Signing.PrivateKey(rawRepresentation: rawRepresentation)
        } catch {
            throw .invalidSigningKey("not a valid P-256 scalar")
        }
    }

    /// A key from PEM: `EC PRIVATE KEY` (SEC 1) or `PRIVATE KEY` (PKCS #8, what py-vapid and
    /// `openssl genpkey` write).
    ///
    /// - Parameters:
    ///   - pemRepresentation: The PEM text.
    /// - Throws: ``WebPushError/invalidSigningKey(_:)`` unless it holds a P-256 private key.
    public init(pemRepresentation: String) throws(WebPushError) {
        do {
            privateKey = try P256.Signing.PrivateKey(pemRepresentation: pemRepresentation)
        } catch {
            throw .invalidSigningKey("not a PEM P-256 private key")
        }
    }

    /// The private key as a 32-byte big-endian scalar.
    public var rawRepresentation: Data { privateKey.rawRepresentation }

    /// The public key as a 65-byte uncompressed point (`0x04 || x || y`).
    public var publicKey: Data { privateKey.publicKey.x963Representation }

    /// ``publicKey`` in base64url: the `k` of the header and the browser's `applicationServerKey`.
    public var publicKeyBase64URL: String { Base64URL.encode(publicKey) }

    /// The `Authorization` header value for a push request: `vapid t=<JWT>, k=<public key>`.
    ///
    /// The JWT's header is `{"typ":"JWT","alg":"ES256"}`; its claims are `aud`, `exp` (Unix
    /// seconds, `now` plus `expiresIn`, rounded down) and `sub`; its signature is ES256 over
    /// `header.claims`, as the 64 bytes `r || s` (RFC 7518 §3.4).
    ///
    /// - Parameters:
    ///   - audience: The origin of the push endpoint, such as `https://push.example.net`. It is
    ///     written as RFC 6454 serialises it: lowercased, no default port, no trailing slash; a
    ///     path, query or user info is refused.
    ///   - subject: A contact for the application server's operator, `mailto:` or `https:`
    ///     (RFC 8292 §2.1); an empty string leaves the `sub` claim out.
    ///   - expiresIn: The token's lifetime: positive, at most 24 hours.
    ///   - now: The time the token is made at.
    /// - Returns: The header value.
    /// - Throws: ``WebPushError/invalidAudience(_:)``, ``WebPushError/invalidVAPIDLifetime(_:)``,
    ///   ``WebPushError/vapidSigningFailed(_:)``.
    public func authorization(
        audience: String, subject: String, expiresIn: Duration = .seconds(12 * 3600), now: Date = Date()
    ) throws(WebPushError) -> String {
        guard let origin = Origin(audience) else { throw .invalidAudience(audience) }
        guard expiresIn > .zero, expiresIn <= VAPID.maximumLifetime else { throw .invalidVAPIDLifetime(expiresIn) }
        let expiry = Int64(now.timeIntervalSince1970.rounded(.down)) + expiresIn.components.seconds
        let claims = VAPIDToken.Claims(aud: origin.serialized, exp: expiry, sub: subject.isEmpty ? nil : subject)
        let signingInput = Base64URL.encode(Data(VAPIDToken.header.utf8)) + "." + (try VAPIDToken.encodeClaims(claims))
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try privateKey.signature(for: Data(signingInput.utf8))
        } catch {
            throw .vapidSigningFailed("ECDSA signing failed: \(error)")
        }
        let token = signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        return "vapid t=\(token), k=\(publicKeyBase64URL)"
    }
}
