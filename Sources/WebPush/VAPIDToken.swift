#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON parts of a VAPID JWT (RFC 8292 §2, RFC 7519).
enum VAPIDToken {
    /// The header every VAPID token carries, byte for byte what py-vapid and web-push libraries write.
    static let header = #"{"typ":"JWT","alg":"ES256"}"#

    /// The JOSE header; only `alg` matters.
    struct Header: Decodable {
        var alg: String?
    }

    /// The claims VAPID defines. `exp` is a NumericDate: an integer, or a number with a fraction.
    struct Claims: Codable {
        var aud: String?
        var exp: Int64?
        var sub: String?

        init(aud: String, exp: Int64, sub: String?) {
            self.aud = aud
            self.exp = exp
            self.sub = sub
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            aud = try container.decodeIfPresent(String.self, forKey: .aud)
            sub = try container.decodeIfPresent(String.self, forKey: .sub)
            if let integer = try? container.decodeIfPresent(Int64.self, forKey: .exp) {
                exp = integer
            } else if let number = try container.decodeIfPresent(Double.self, forKey: .exp) {
                guard number.isFinite, abs(number) < 1e15 else {
                    throw DecodingError.dataCorruptedError(
                        forKey: .exp, in: container, debugDescription: "exp is out of range")
                }
                exp = Int64(number.rounded(.down))
            } else {
                exp = nil
            }
        }
    }

    /// Base64url of the claims as compact JSON with sorted keys and unescaped slashes.
    static func encodeClaims(_ claims: Claims) throws(WebPushError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return Base64URL.encode(try encoder.encode(claims))
        } catch {
            throw .vapidSigningFailed("the claims cannot be encoded as JSON: \(error)")
        }
    }

    /// Decodes one base64url JSON part of a JWT.
    static func decodePart<Part: Decodable>(_ type: Part.Type, _ text: Substring, name: String) throws(WebPushError)
        -> Part
    {
        guard let bytes = Base64URL.decode(String(text)) else { throw .malformedJWT("the \(name) is not base64url") }
        do {
            return try JSONDecoder().decode(Part.self, from: bytes)
        } catch {
            throw .malformedJWT("the \(name) is not the JSON object VAPID requires")
        }
    }
}
