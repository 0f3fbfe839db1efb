import Crypto
import FoundationEssentials

@testable import WebPush

/// VAPID `Authorization` headers (RFC 8292), checked against a fixed audience and clock. The
/// first byte chooses how the rest is used:
///
/// - even: the rest is the header value as sent;
/// - odd: the rest gives a JWT header, claims JSON and an audience, and the token is signed with
///   a fixed key, so the checks after the signature (claims, audience, expiry) are reached.
///
/// Also checked: an `Origin` that parses serialises to a string that parses to the same origin.
enum VAPIDFuzzing {
    static let audience = "https://push.example.net"
    static let now = Date(timeIntervalSince1970: 1_767_225_600)
    static let key: P256.Signing.PrivateKey = {
        do {
            return try P256.Signing.PrivateKey(rawRepresentation: Data(repeating: 0x44, count: 32))
        } catch {
            fatalError("fixed VAPID key rejected: \(error)")
        }
    }()

    static let target = FuzzTarget(name: "vapid", summary: "VAPID Authorization headers (RFC 8292)") { bytes in
        var input = FuzzInput(bytes)
        if input.byte() & 1 == 0 {
            let header = String(decoding: input.rest(), as: UTF8.self)
            if let credentials = try? VAPID.verify(authorizationHeader: header, expectedAudience: audience, now: now) {
                check(credentials)
            }
        } else {
            signed(&input)
        }
    }

    private static func signed(_ input: inout FuzzInput) {
        let header = input.flag() ? VAPIDToken.header : input.text()
        let claims = input.text()
        let expected = input.flag() ? audience : input.text(maximum: 64)
        checkOrigin(expected)
        let signingInput = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        guard let signature = try? key.signature(for: Data(signingInput.utf8)) else { return }
        let token = signingInput + "." + Base64URL.encode(signature.rawRepresentation)
        let publicKey = Base64URL.encode(key.publicKey.x963Representation)
        let value = input.flag() ? "vapid t=\(token), k=\(publicKey)" : "Vapid k=\"\(publicKey)\" ,t=\(token)"
        if let credentials = try? VAPID.verify(authorizationHeader: value, expectedAudience: expected, now: now) {
            check(credentials)
            checkOrigin(credentials.audience)
        }
    }

    private static func check(_ credentials: VAPIDCredentials) {
        guard P256PublicKeyParsing.signingKey(credentials.publicKey) != nil else {
            FuzzTarget.fail("verified a token for a key that does not parse")
        }
        let left = credentials.expiresAt.timeIntervalSince(now)
        guard left > -60, left <= 24 * 3600 + 60 else { FuzzTarget.fail("accepted an expiry \(left) s from now") }
    }

    private static func checkOrigin(_ text: String) {
        guard let origin = Origin(text) else { return }
        guard Origin(origin.serialized) == origin else {
            FuzzTarget.fail("origin '\(text)' serialises to '\(origin.serialized)', which reads differently")
        }
    }
}
