import Crypto
import Foundation
import Testing
import WebPush

@Suite("VAPID")
struct VAPIDTests {
    let key = VAPIDSigningKey()
    let audience = "https://push.example.net"
    let subject = "mailto:ops@example.com"
    /// A fixed "now", whole seconds, so expiries are exact.
    let now = Date(timeIntervalSince1970: 1_750_000_000)

    func header(expiresIn: Duration = .seconds(12 * 3600), audience: String? = nil) throws -> String {
        try key.authorization(audience: audience ?? self.audience, subject: subject, expiresIn: expiresIn, now: now)
    }

    /// The `t` and `k` values of a header this module wrote.
    func parts(_ header: String) throws -> (token: String, key: String) {
        let prefix = "vapid t="
        let separator = try #require(header.range(of: ", k="))
        #expect(header.hasPrefix(prefix))
        return (
            String(header[header.index(header.startIndex, offsetBy: prefix.count)..<separator.lowerBound]),
            String(header[separator.upperBound...])
        )
    }

    /// A token signed by `key` over hand-written header and claims JSON.
    func token(header: String, claims: String, signer: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(Data(header.utf8)) + "." + Base64URL.encode(Data(claims.utf8))
        let signature = try signer.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    func verify(_ header: String, audience: String? = nil, at time: Date? = nil) throws -> VAPIDCredentials {
        try VAPID.verify(authorizationHeader: header, expectedAudience: audience ?? self.audience, now: time ?? now)
    }

    // MARK: Signing

    @Test("a signed header verifies and gives back the key, subject, expiry and audience")
    func signThenVerify() throws {
        let credentials = try verify(header())
        #expect(
            credentials
                == VAPIDCredentials(
                    publicKey: key.publicKey, subject: subject, expiresAt: now.addingTimeInterval(12 * 3600),
                    audience: audience))
    }

    @Test("the header is 'vapid t=<JWT>, k=<key>' with an ES256 JWT")
    func headerShape() throws {
        let (token, keyText) = try parts(header())
        #expect(keyText == key.publicKeyBase64URL)
        #expect(try bytes(keyText) == key.publicKey)
        let segments = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(segments.count == 3)
        #expect(String(decoding: try bytes(segments[0]), as: UTF8.self) == #"{"typ":"JWT","alg":"ES256"}"#)
        struct Claims: Decodable, Equatable {
            var aud: String
            var exp: Int64
            var sub: String
        }
        let claims = try JSONDecoder().decode(Claims.self, from: bytes(segments[1]))
        #expect(claims == Claims(aud: audience, exp: 1_750_000_000 + 12 * 3600, sub: subject))
        #expect(try bytes(segments[2]).count == 64)
    }

    @Test("the audience is written as a serialised origin")
    func audienceSerialised() throws {
        let credentials = try verify(header(audience: "HTTPS://Push.Example.NET:443/"))
        #expect(credentials.audience == "https://push.example.net")
    }

    @Test("an empty subject leaves the sub claim out")
    func noSubject() throws {
        let header = try key.authorization(audience: audience, subject: "", now: now)
        #expect(try verify(header).subject == nil)
    }

    @Test("signing refuses an audience that is not an origin, and lifetimes beyond 24 h")
    func signingRefuses() {
        for bad in ["push.example.net", "https://push.example.net/path", "ftp://push.example.net", "https://"] {
            #expect(throws: WebPushError.invalidAudience(bad)) { try header(audience: bad) }
        }
        for lifetime: Duration in [.zero, .seconds(-1), .seconds(24 * 3600 + 1)] {
            #expect(throws: WebPushError.invalidVAPIDLifetime(lifetime)) { try header(expiresIn: lifetime) }
        }
    }

    @Test("a key survives its raw and PEM representations; bad ones are refused")
    func keyRepresentations() throws {
        let raw = try VAPIDSigningKey(rawRepresentation: key.rawRepresentation)
        #expect(raw.publicKey == key.publicKey)
        let pem = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation).pemRepresentation
        #expect(try VAPIDSigningKey(pemRepresentation: pem).publicKey == key.publicKey)
        #expect(key.publicKey.count == 65)
        #expect(throws: WebPushError.self) { try VAPIDSigningKey(rawRepresentation: Data(count: 32)) }
        #expect(throws: WebPushError.self) { try VAPIDSigningKey(rawRepresentation: Data(count: 31)) }
        #expect(throws: WebPushError.self) { try VAPIDSigningKey(pemRepresentation: "-----BEGIN NOTHING-----") }
    }

    // MARK: Header syntax

    @Test("the header is read in any case, order and spacing, quoted or not")
    func tolerantParsing() throws {
        let (token, keyText) = try parts(header())
        let variants = [
            "vapid t=\(token),k=\(keyText)",
            "VAPID k=\(keyText), t=\(token)",
            "  Vapid   t = \(token) ,  k=\"\(keyText)\"  ",
            "vapid\tt=\"\(token)\", k=\(keyText), extra=ignored",
        ]
        for variant in variants {
            #expect(try verify(variant).publicKey == key.publicKey, "\(variant)")
        }
    }

    @Test(
        "a header that is not 'vapid t=…, k=…' is refused",
        arguments: [
            "", "   ", "vapid", "Bearer abc.def.ghi", "vapid t=abc", "vapid k=BA", "vapid t=a, t=b, k=c",
            "vapid t, k=c", "vapid =x, t=a, k=b",
        ])
    func malformedHeader(header: String) {
        #expect {
            try verify(header)
        } throws: { error in
            (error as? WebPushError)?.code == .malformedAuthorizationHeader
        }
    }

    @Test("the drafts' 'WebPush <JWT>' form is refused (RFC 8292 only)")
    func legacyScheme() throws {
        let (token, _) = try parts(header())
        #expect(throws: WebPushError.malformedAuthorizationHeader("the scheme is 'WebPush', not 'vapid'")) {
            try verify("WebPush \(token)")
        }
    }

    // MARK: Key and token

    @Test("a k that is not a P-256 public key is refused")
    func badKey() throws {
        let (token, keyText) = try parts(header())
        var offCurve = key.publicKey
        offCurve.replaceSubrange(1..<65, with: Data(repeating: 0, count: 64))
        for bad in ["not*base64", Base64URL.encode(key.publicKey.prefix(33)), Base64URL.encode(offCurve)] {
            #expect(throws: WebPushError.invalidVAPIDPublicKey) { try verify("vapid t=\(token), k=\(bad)") }
        }
        _ = keyText
    }

    @Test("a token signed by another key than k is refused")
    func wrongKey() throws {
        let (token, _) = try parts(header())
        let other = VAPIDSigningKey().publicKeyBase64URL
        #expect(throws: WebPushError.invalidVAPIDSignature) { try verify("vapid t=\(token), k=\(other)") }
    }

    @Test("a changed signature or changed claims are refused")
    func tamperedToken() throws {
        let (token, keyText) = try parts(header())
        let segments = token.split(separator: ".").map(String.init)
        var signature = try bytes(segments[2])
        signature[10] ^= 1
        let changedSignature = segments[0] + "." + segments[1] + "." + Base64URL.encode(signature)
        let otherClaims = Base64URL.encode(Data(#"{"aud":"https://evil.example","exp":1750043200}"#.utf8))
        let changedClaims = segments[0] + "." + otherClaims + "." + segments[2]
        let shortSignature = segments[0] + "." + segments[1] + "." + Base64URL.encode(signature.prefix(63))
        for bad in [changedSignature, changedClaims, shortSignature] {
            #expect(throws: WebPushError.invalidVAPIDSignature) { try verify("vapid t=\(bad), k=\(keyText)") }
        }
    }

    @Test("a token with another algorithm than ES256 is refused")
    func wrongAlgorithm() throws {
        let signer = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        let claims = #"{"aud":"https://push.example.net","exp":1750043200}"#
        for algorithm in ["HS256", "none", "ES384"] {
            let token = try token(header: #"{"typ":"JWT","alg":"\#(algorithm)"}"#, claims: claims, signer: signer)
            #expect(throws: WebPushError.unsupportedJWTAlgorithm(algorithm)) {
                try verify("vapid t=\(token), k=\(key.publicKeyBase64URL)")
            }
        }
    }

    @Test("a t that is not a JWT is refused", arguments: ["abc", "a.b", "a.b.c.d", "*.e30.AAAA", "e30.e30.*"])
    func malformedToken(token: String) {
        #expect {
            try verify("vapid t=\(token), k=\(key.publicKeyBase64URL)")
        } throws: { error in
            (error as? WebPushError)?.code == .malformedJWT
        }
    }

    @Test("a valid token with parts added or removed is refused")
    func extraParts() throws {
        let (token, keyText) = try parts(header())
        let lastDot = try #require(token.lastIndex(of: "."))
        let withoutSignature = String(token[..<lastDot])
        for bad in [token + ".e30", token + ".", withoutSignature] {
            #expect {
                try verify("vapid t=\(bad), k=\(keyText)")
            } throws: { error in
                (error as? WebPushError)?.code == .malformedJWT
            }
        }
    }

    @Test("signed claims without aud or exp, or not JSON, are refused")
    func missingClaims() throws {
        let signer = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        for claims in [#"{"exp":1750043200}"#, #"{"aud":"https://push.example.net"}"#, "not json", #"{"exp":"soon"}"#] {
            let token = try token(header: VAPIDTestsHeader.es256, claims: claims, signer: signer)
            #expect("\(claims)".isEmpty == false)
            #expect {
                try verify("vapid t=\(token), k=\(key.publicKeyBase64URL)")
            } throws: { error in
                (error as? WebPushError)?.code == .malformedJWT
            }
        }
    }

    @Test("an exp with a fraction is read as whole seconds")
    func fractionalExpiry() throws {
        let signer = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        let claims = #"{"aud":"https://push.example.net","exp":1750043200.75}"#
        let token = try token(header: VAPIDTestsHeader.es256, claims: claims, signer: signer)
        let credentials = try verify("vapid t=\(token), k=\(key.publicKeyBase64URL)")
        #expect(credentials.expiresAt == Date(timeIntervalSince1970: 1_750_043_200))
        #expect(credentials.subject == nil)
    }

    // MARK: Audience

    @Test(
        "the audience matches after normalising scheme, host, default port and trailing slash",
        arguments: [
            "https://push.example.net", "https://push.example.net/", "HTTPS://PUSH.example.net",
            "https://push.example.net:443",
        ])
    func audienceMatches(expected: String) throws {
        #expect(try verify(header(), audience: expected).audience == audience)
    }

    @Test("a local http origin with a port works")
    func localOrigin() throws {
        let local = try header(audience: "http://127.0.0.1:8080")
        #expect(try verify(local, audience: "http://127.0.0.1:8080/").audience == "http://127.0.0.1:8080")
        let ipv6 = try header(audience: "http://[::1]:8080")
        #expect(try verify(ipv6, audience: "http://[::1]:8080").audience == "http://[::1]:8080")
    }

    @Test(
        "a token for another origin is refused",
        arguments: [
            "http://push.example.net", "https://push.example.net:8443", "https://other.example.net",
            "https://push.example.net.evil",
        ])
    func audienceMismatch(expected: String) throws {
        #expect(throws: WebPushError.audienceMismatch(expected: expected, actual: audience)) {
            try verify(header(), audience: expected)
        }
    }

    @Test("an expected audience that is not an origin is refused")
    func badExpectedAudience() throws {
        #expect(throws: WebPushError.invalidAudience("push.example.net")) {
            try verify(header(), audience: "push.example.net")
        }
    }

    // MARK: Expiry

    @Test("a token is accepted until 60 s after exp, and refused from then on")
    func expiry() throws {
        let header = try header(expiresIn: .seconds(3600))
        let expiry = now.addingTimeInterval(3600)
        #expect(try verify(header, at: expiry.addingTimeInterval(59)).expiresAt == expiry)
        for late in [60.0, 61, 86400] {
            #expect(throws: WebPushError.vapidTokenExpired(expiredAt: expiry)) {
                try verify(header, at: expiry.addingTimeInterval(late))
            }
        }
    }

    @Test("an exp more than 24 h (plus 60 s of skew) ahead is refused")
    func tooFarAhead() throws {
        let header = try header(expiresIn: .seconds(24 * 3600))
        let expiry = now.addingTimeInterval(24 * 3600)
        // A verifier whose clock is 60 s behind still accepts it; 61 s behind, it does not.
        #expect(try verify(header, at: now.addingTimeInterval(-60)).expiresAt == expiry)
        #expect(throws: WebPushError.vapidExpiryTooFarAhead(expiresAt: expiry)) {
            try verify(header, at: now.addingTimeInterval(-61))
        }
        // A token signed for far in the future by someone else.
        let signer = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        let claims = #"{"aud":"https://push.example.net","exp":1760000000}"#
        let token = try token(header: VAPIDTestsHeader.es256, claims: claims, signer: signer)
        #expect(throws: WebPushError.vapidExpiryTooFarAhead(expiresAt: Date(timeIntervalSince1970: 1_760_000_000))) {
            try verify("vapid t=\(token), k=\(key.publicKeyBase64URL)")
        }
    }

    @Test("every error says what was wrong")
    func descriptions() {
        let errors: [WebPushError] = [
            .invalidVAPIDSignature, .audienceMismatch(expected: "https://a.example", actual: "https://b.example"),
            .vapidTokenExpired(expiredAt: now), .authenticationFailed(record: 2),
        ]
        #expect(errors.map(\.description).allSatisfy { !$0.isEmpty })
        #expect(
            WebPushError.audienceMismatch(expected: "https://a.example", actual: "https://b.example")
                .description.contains("https://b.example"))
        #expect(WebPushError.authenticationFailed(record: 2).description.contains("record 2"))
    }
}

/// The JOSE header of an ES256 JWT, for hand-made tokens.
enum VAPIDTestsHeader {
    static let es256 = #"{"typ":"JWT","alg":"ES256"}"#
}
