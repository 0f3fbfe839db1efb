import Base64URLCoding
import FoundationEssentials

/// One Web Push registration of a device, as lifecycled publishes it (retained) on
/// `applifecycle/v1/<device>/registrations/<token>` and the push gateway reads it.
///
/// The JSON form is `{"v":1,"token":"…","app":"org.example.App","vapid":"<key>","created":<unix ms>}`;
/// `vapid` is absent when the app registered without a VAPID key. An empty retained payload on the
/// topic removes the registration (it is not a record). Decoding validates every field
/// (``validate()``), so a record read from the broker is either well formed or rejected with
/// a ``FleetProtocolError`` of code ``FleetProtocolError/Code/invalidRecord``; the gateway also checks that ``token`` equals the topic's last level.
public struct PushRegistrationRecord: Codable, Sendable, Equatable {
    /// The only version of the format (`v`); a record with another version is rejected, so a later
    /// format is a new topic layout or a new value here, never a silent misreading.
    public static let currentVersion = 1

    /// The shortest and longest token (RFC 8030 leaves the form to the push service; UnifiedPush
    /// tokens are at most 100 bytes, and fewer than 16 base64url characters carry too little
    /// randomness to be a capability).
    public static let tokenLengths = 16...100

    /// The format version (`v`), ``currentVersion``.
    public var version: Int
    /// The registration's token: the last level of the endpoint URL and of the topic.
    public var token: String
    /// The app's reverse-DNS id (the D-Bus application-id rules).
    public var app: String
    /// The app server's VAPID public key (RFC 8292): an uncompressed P-256 point (65 bytes starting
    /// with 0x04) in unpadded base64url; `nil` when pushes need no VAPID authorization.
    public var vapid: String?
    /// When the device registered, in milliseconds since the Unix epoch.
    public var created: Int64

    enum CodingKeys: String, CodingKey {
        case version = "v"
        case token, app, vapid, created
    }

    /// Creates a record of the current version; call ``validate()`` before publishing it.
    ///
    /// - Parameters:
    ///   - token: The registration's token.
    ///   - app: The app's reverse-DNS id.
    ///   - vapid: The app server's VAPID public key in base64url, or `nil`.
    ///   - created: When the device registered, in Unix milliseconds.
    public init(token: String, app: String, vapid: String? = nil, created: Int64) {
        self.version = Self.currentVersion
        self.token = token
        self.app = app
        self.vapid = vapid
        self.created = created
    }

    /// Decodes a record and validates it.
    ///
    /// - Parameters:
    ///   - decoder: The decoder.
    /// - Throws: A `DecodingError` for malformed JSON, ``FleetProtocolError`` (``FleetProtocolError/Code/invalidRecord``)
    ///   for a well-formed but invalid record.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        token = try container.decode(String.self, forKey: .token)
        app = try container.decode(String.self, forKey: .app)
        vapid = try container.decodeIfPresent(String.self, forKey: .vapid)
        created = try container.decode(Int64.self, forKey: .created)
        try validate()
    }

    /// Checks every field: the version, the token's syntax (``isValidToken(_:)``), the app id, the
    /// VAPID key's form (``isValidVAPIDKey(_:)``) and a non-negative creation time.
    ///
    /// - Throws: ``FleetProtocolError`` (``FleetProtocolError/Code/invalidRecord``) naming the first bad field.
    public func validate() throws(FleetProtocolError) {
        guard version == Self.currentVersion else {
            throw FleetProtocolError(.invalidRecord, "unsupported version \(version)")
        }
        guard Self.isValidToken(token) else {
            throw FleetProtocolError(.invalidRecord, "token is not 16-100 base64url characters")
        }
        guard Self.isValidAppID(app) else {
            throw FleetProtocolError(.invalidRecord, "app is not a reverse-DNS app id")
        }
        if let vapid, !Self.isValidVAPIDKey(vapid) {
            throw FleetProtocolError(.invalidRecord, "vapid is not a base64url uncompressed P-256 public key")
        }
        guard created >= 0 else { throw FleetProtocolError(.invalidRecord, "created is negative") }
    }

    /// Decodes a record from a retained message's payload.
    ///
    /// - Parameters:
    ///   - payload: The JSON bytes (not empty: an empty payload removes a registration).
    /// - Returns: The validated record.
    /// - Throws: A `DecodingError`, or a ``FleetProtocolError`` (``FleetProtocolError/Code/invalidRecord``).
    public static func decode(_ payload: some Collection<UInt8>) throws -> PushRegistrationRecord {
        try JSONDecoder().decode(PushRegistrationRecord.self, from: Data(payload))
    }

    /// The record's JSON, as published (keys sorted, so equal records are equal bytes).
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and integers into JSON cannot fail.
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Whether `token` is 16 to 100 characters of the base64url alphabet (`A-Z a-z 0-9 - _`).
    ///
    /// - Parameters:
    ///   - token: The candidate, for example the last path segment of a push endpoint.
    public static func isValidToken(_ token: some StringProtocol) -> Bool {
        tokenLengths.contains(token.utf8.count) && Base64URL.isAlphabet(String(token))
    }

    /// Whether `key` is an uncompressed P-256 point (65 bytes, the first 0x04) in unpadded base64url.
    ///
    /// Only the form is checked (that the point is on the curve is for whoever verifies a signature).
    ///
    /// - Parameters:
    ///   - key: The candidate.
    public static func isValidVAPIDKey(_ key: String) -> Bool {
        // 65 bytes are 87 unpadded characters; decoding refuses non-zero leftover bits.
        guard key.utf8.count == 87, Base64URL.isAlphabet(key), let point = Base64URL.decode(key) else { return false }
        return point.count == 65 && point.first == 0x04
    }

    /// Whether a string is a reverse-DNS app id: 2+ dot-separated elements of `[A-Za-z0-9_-]`, none
    /// empty or starting with a digit or `-`, at most 255 bytes (lifecycled's manifest rule).
    ///
    /// - Parameters:
    ///   - id: The candidate.
    public static func isValidAppID(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 255 else { return false }
        let elements = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { element in
            guard let first = element.first, isLetter(first) || first == UInt8(ascii: "_") else { return false }
            return Base64URL.isAlphabet(String(decoding: element, as: UTF8.self))
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

}
