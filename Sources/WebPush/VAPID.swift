import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Verifying Voluntary Application Server Identification (RFC 8292), as a push service does.
///
/// Only RFC 8292's `vapid` scheme is accepted: `Authorization: vapid t=<JWT>, k=<key>`. The
/// drafts' older form, `Authorization: WebPush <JWT>` with the key in
/// `Crypto-Key: p256ecdsa=<key>`, is refused as a malformed header.
public enum VAPID {
    /// How far clocks may disagree: a token counts as expired only once `exp` is this far in the
    /// past, and as too far ahead only once it is more than 24 hours plus this in the future.
    public static let allowedClockSkew: Duration = .seconds(60)

    /// The longest lifetime RFC 8292 §2 allows a token: 24 hours.
    public static let maximumLifetime: Duration = .seconds(24 * 3600)

    /// Checks a VAPID `Authorization` header and returns what it says.
    ///
    /// The header is parsed tolerantly: the scheme in any case, parameters in any order, spaces
    /// around commas and `=`, values quoted or not, unknown parameters ignored. Then, in order:
    /// `k` must be a P-256 public key, `t` a JWT with `alg` ES256 whose signature verifies with
    /// `k`, `aud` the expected origin (scheme, host and port compared after lowercasing and
    /// filling in the default port; a trailing slash is ignored), and `exp` no more than
    /// ``allowedClockSkew`` in the past and no more than ``maximumLifetime`` plus
    /// ``allowedClockSkew`` in the future.
    ///
    /// - Parameters:
    ///   - authorizationHeader: The value of the `Authorization` header.
    ///   - expectedAudience: The push service's own origin, such as `https://push.example.net` or
    ///     `http://127.0.0.1:8080`.
    ///   - now: The time to check `exp` against.
    /// - Returns: The verified key, subject, expiry and audience.
    /// - Throws: ``WebPushError/malformedAuthorizationHeader(_:)``, ``WebPushError/invalidVAPIDPublicKey``,
    ///   ``WebPushError/malformedJWT(_:)``, ``WebPushError/unsupportedJWTAlgorithm(_:)``,
    ///   ``WebPushError/invalidVAPIDSignature``, ``WebPushError/invalidAudience(_:)`` (for
    ///   `expectedAudience`), ``WebPushError/audienceMismatch(expected:actual:)``,
    ///   ``WebPushError/vapidTokenExpired(expiredAt:)``, ``WebPushError/vapidExpiryTooFarAhead(expiresAt:)``.
    public static func verify(
        authorizationHeader: String, expectedAudience: String, now: Date = Date()
    ) throws(WebPushError) -> VAPIDCredentials {
        guard let expectedOrigin = Origin(expectedAudience) else { throw .invalidAudience(expectedAudience) }
        let parameters = try parseHeader(authorizationHeader)
        guard let token = parameters["t"] else { throw .malformedAuthorizationHeader("no 't' parameter") }
        guard let keyText = parameters["k"] else { throw .malformedAuthorizationHeader("no 'k' parameter") }
        guard let keyBytes = Base64URL.decode(keyText), let key = P256PublicKeyParsing.signingKey(keyBytes) else {
            throw .invalidVAPIDPublicKey
        }

        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformedJWT("\(parts.count) parts separated by '.', not 3") }
        let header = try VAPIDToken.decodePart(VAPIDToken.Header.self, parts[0], name: "header")
        guard let algorithm = header.alg else { throw .malformedJWT("the header has no 'alg'") }
        guard algorithm == "ES256" else { throw .unsupportedJWTAlgorithm(algorithm) }
        guard let signatureBytes = Base64URL.decode(String(parts[2])) else {
            throw .malformedJWT("the signature is not base64url")
        }
        guard signatureBytes.count == 64,
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureBytes),
            key.isValidSignature(signature, for: Data(token.utf8[..<parts[1].endIndex]))
        else { throw .invalidVAPIDSignature }

        let claims = try VAPIDToken.decodePart(VAPIDToken.Claims.self, parts[1], name: "claims")
        guard let audience = claims.aud else { throw .malformedJWT("the claims have no 'aud'") }
        guard let expiry = claims.exp else { throw .malformedJWT("the claims have no 'exp'") }
        guard Origin(audience) == expectedOrigin else {
            throw .audienceMismatch(expected: expectedOrigin.serialized, actual: audience)
        }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        let skew = TimeInterval(allowedClockSkew.components.seconds)
        guard expiresAt.timeIntervalSince(now) > -skew else { throw .vapidTokenExpired(expiredAt: expiresAt) }
        guard expiresAt.timeIntervalSince(now) <= TimeInterval(maximumLifetime.components.seconds) + skew else {
            throw .vapidExpiryTooFarAhead(expiresAt: expiresAt)
        }
        return VAPIDCredentials(publicKey: keyBytes, subject: claims.sub, expiresAt: expiresAt, audience: audience)
    }

    /// The auth-params of a `vapid` credential (RFC 7235 §2.1), names lowercased.
    private static func parseHeader(_ header: String) throws(WebPushError) -> [String: String] {
        let trimmed = header.trimmingSpaces
        guard !trimmed.isEmpty else { throw .malformedAuthorizationHeader("it is empty") }
        guard let space = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }) else {
            throw .malformedAuthorizationHeader("no parameters after the scheme")
        }
        let scheme = trimmed[..<space]
        guard scheme.lowercased() == "vapid" else {
            throw .malformedAuthorizationHeader("the scheme is '\(scheme)', not 'vapid'")
        }
        var parameters: [String: String] = [:]
        for item in trimmed[space...].split(separator: ",") {
            let item = item.trimmingSpaces
            if item.isEmpty { continue }
            guard let equals = item.firstIndex(of: "=") else {
                throw .malformedAuthorizationHeader("'\(item)' is not name=value")
            }
            let name = item[..<equals].trimmingSpaces.lowercased()
            var value = item[item.index(after: equals)...].trimmingSpaces
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            guard !name.isEmpty, !value.isEmpty else {
                throw .malformedAuthorizationHeader("'\(item)' has an empty name or value")
            }
            guard parameters.updateValue(value, forKey: name) == nil else {
                throw .malformedAuthorizationHeader("'\(name)' appears twice")
            }
        }
        return parameters
    }
}
