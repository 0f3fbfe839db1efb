import FoundationEssentials

/// What `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` hands the app: all its
/// server needs to send it a Web Push message, decoded.
///
/// The device token's bytes are the UTF-8 JSON of a W3C Push API subscription
/// (`PushSubscription.toJSON()`), the form every Web Push library takes as is (pywebpush's
/// `subscription_info`, the `web-push` npm package's `sendNotification`):
///
/// ```json
/// {"endpoint":"https://push.example.net/push/3q2-7w","keys":{"p256dh":"BP…","auth":"kX…"}}
/// ```
///
/// `endpoint` is the RFC 8030 capability URL (no secret other than itself); `p256dh` is the
/// app's P-256 public key (65 bytes, uncompressed) and `auth` its 16-byte authentication secret,
/// both base64url without padding (RFC 8291). An app sends the token to its server unchanged,
/// or reads its parts here.
public struct RemoteNotificationDeviceToken: Sendable, Hashable, Codable {
    /// The push endpoint the app's server POSTs to (RFC 8030).
    public var endpoint: URL
    /// The app's P-256 ECDH public key, 65 bytes, uncompressed point (`keys.p256dh`).
    public var publicKey: Data
    /// The 16-byte authentication secret (`keys.auth`).
    public var authSecret: Data

    /// Creates a token from its parts, after checking them.
    ///
    /// - Parameters:
    ///   - endpoint: An `https` or `http` URL of at most 1,000 bytes.
    ///   - publicKey: 65 bytes beginning with `0x04`.
    ///   - authSecret: 16 bytes.
    /// - Throws: ``ApplicationError/Code/invalidInput`` naming the part that is wrong.
    public init(endpoint: URL, publicKey: Data, authSecret: Data) throws(ApplicationError) {
        guard let scheme = endpoint.scheme?.lowercased(), scheme == "https" || scheme == "http",
            endpoint.host != nil, endpoint.absoluteString.utf8.count <= 1000
        else {
            throw ApplicationError(.invalidInput, "push endpoint '\(endpoint)' is not an http(s) URL of ≤ 1000 bytes")
        }
        guard publicKey.count == 65, publicKey.first == 0x04 else {
            throw ApplicationError(
                .invalidInput, "p256dh must be a 65-byte uncompressed P-256 point, not \(publicKey.count) bytes")
        }
        guard authSecret.count == 16 else {
            throw ApplicationError(.invalidInput, "auth must be 16 bytes, not \(authSecret.count)")
        }
        self.endpoint = endpoint
        self.publicKey = publicKey
        self.authSecret = authSecret
    }

    /// Decodes the bytes of a device token.
    ///
    /// - Parameters:
    ///   - deviceToken: What `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)` received.
    /// - Throws: ``ApplicationError/Code/invalidInput`` when it is not a subscription in the form above.
    public init(deviceToken: Data) throws(ApplicationError) {
        let wire: Wire
        do {
            wire = try JSONDecoder().decode(Wire.self, from: deviceToken)
        } catch {
            throw ApplicationError(.invalidInput, "a device token is a Push API subscription in JSON: \(error)")
        }
        guard let endpoint = URL(string: wire.endpoint) else {
            throw ApplicationError(.invalidInput, "'\(wire.endpoint)' is not a URL")
        }
        guard let publicKey = Self.base64URLDecoded(wire.keys.p256dh),
            let authSecret = Self.base64URLDecoded(wire.keys.auth)
        else {
            throw ApplicationError(.invalidInput, "keys.p256dh and keys.auth must be base64url")
        }
        try self.init(endpoint: endpoint, publicKey: publicKey, authSecret: authSecret)
    }

    /// The token's bytes: the subscription's JSON, keys in base64url without padding, sorted keys.
    public var deviceToken: Data {
        let wire = Wire(
            endpoint: endpoint.absoluteString,
            keys: .init(p256dh: Self.base64URLEncoded(publicKey), auth: Self.base64URLEncoded(authSecret)))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding two strings and a nested object of two strings cannot fail.
        return (try? encoder.encode(wire)) ?? Data()
    }

    /// Encodes as the subscription object itself (not as this struct's property names).
    public func encode(to encoder: any Encoder) throws {
        try Wire(
            endpoint: endpoint.absoluteString,
            keys: .init(p256dh: Self.base64URLEncoded(publicKey), auth: Self.base64URLEncoded(authSecret))
        ).encode(to: encoder)
    }

    /// Decodes the subscription object.
    public init(from decoder: any Decoder) throws {
        let wire = try Wire(from: decoder)
        guard let endpoint = URL(string: wire.endpoint), let publicKey = Self.base64URLDecoded(wire.keys.p256dh),
            let authSecret = Self.base64URLDecoded(wire.keys.auth)
        else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not a Push API subscription"))
        }
        try self.init(endpoint: endpoint, publicKey: publicKey, authSecret: authSecret)
    }

    /// The JSON form.
    private struct Wire: Codable {
        struct Keys: Codable {
            var p256dh: String
            var auth: String
        }
        var endpoint: String
        var keys: Keys
    }

    /// RFC 4648 §5 without padding.
    static func base64URLEncoded(_ data: Data) -> String {
        String(
            data.base64EncodedString().compactMap { character -> Character? in
                switch character {
                case "+": "-"
                case "/": "_"
                case "=": nil
                default: character
                }
            })
    }

    /// RFC 4648 §5, padding optional; `nil` for anything else (standard base64's `+` and `/` too).
    static func base64URLDecoded(_ text: String) -> Data? {
        guard text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") }) else { return nil }
        var standard = text.replacing("-", with: "+").replacing("_", with: "/")
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Data(base64Encoded: standard)
    }
}
