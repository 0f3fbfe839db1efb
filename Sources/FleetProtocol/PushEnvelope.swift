import Base64URLCoding

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// What the push gateway publishes to a device's ``FleetTopics/push`` topic: one Web Push
/// message, still encrypted for the app (RFC 8291), with the delivery attributes of RFC 8030.
///
/// On the wire it is a JSON object:
///
/// ```json
/// {"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"…","ttl":86400,
///  "urgency":"normal","topic":"news","received":1767225600000,"body":"…base64url…"}
/// ```
///
/// Decoding validates every field and throws ``FleetProtocolError`` with
/// ``FleetProtocolError/Code/invalidEnvelope`` for anything else.
public struct PushEnvelope: Codable, Sendable, Equatable {
    /// The only format version so far.
    public static let currentVersion = 1
    /// The longest TTL accepted, in seconds (28 days, as common push services cap it).
    public static let maximumTTL = 28 * 24 * 3600
    /// The largest encrypted body accepted: 4096 bytes, the record size every push service must
    /// accept (RFC 8030 §7.2, RFC 8291 §4).
    public static let maximumBodySize = 4096

    /// RFC 8030 §5.3 urgency.
    public enum Urgency: String, Codable, Sendable, Equatable, CaseIterable {
        /// `very-low`: on power and Wi-Fi.
        case veryLow = "very-low"
        /// `low`: on power or Wi-Fi.
        case low
        /// `normal`: on neither power nor Wi-Fi.
        case normal
        /// `high`: low battery.
        case high
    }

    /// The format version: ``currentVersion``.
    public var version: Int
    /// The message id: the gateway's random UUID string (the deduplication key).
    public var id: String
    /// The push endpoint token the message was sent to (a topic level: ``FleetTopics/isValidLevel(_:)``).
    public var token: String
    /// How long the message may be kept before delivery, in seconds (0 to ``maximumTTL``).
    public var ttl: Int
    /// The sender's urgency.
    public var urgency: Urgency
    /// The RFC 8030 Topic (replacing an undelivered message with the same topic): 1–32
    /// characters of the base64url alphabet, or `nil`.
    public var topic: String?
    /// When the gateway received the message, in Unix milliseconds.
    public var received: Int64
    /// The encrypted body (sent as base64url without padding), at most ``maximumBodySize`` bytes.
    public var body: [UInt8]

    /// When the message expires, in Unix milliseconds: ``received`` + ``ttl`` seconds.
    public var expiresAt: Int64 {
        let (sum, overflow) = received.addingReportingOverflow(Int64(ttl) * 1000)
        return overflow ? .max : sum
    }

    /// The latest `received` accepted: the last millisecond of the year 9999.
    public static let latestReceived: Int64 = 253_402_300_799_999

    /// Creates an envelope, validating it.
    ///
    /// - Parameters:
    ///   - id: The message id (a UUID string).
    ///   - token: The endpoint token.
    ///   - ttl: Seconds the message may wait.
    ///   - urgency: Its urgency.
    ///   - topic: Its RFC 8030 Topic, or `nil`.
    ///   - received: Unix milliseconds at the gateway.
    ///   - body: The encrypted body.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidEnvelope`` for an invalid field.
    public init(
        id: String, token: String, ttl: Int, urgency: Urgency = .normal, topic: String? = nil, received: Int64,
        body: [UInt8]
    ) throws {
        self.version = Self.currentVersion
        self.id = id
        self.token = token
        self.ttl = ttl
        self.urgency = urgency
        self.topic = topic
        self.received = received
        self.body = body
        try validate()
    }

    private enum CodingKeys: String, CodingKey {
        case version = "v"
        case id, token, ttl, urgency, topic, received, body
    }

    /// Decodes and validates an envelope.
    ///
    /// - Parameters:
    ///   - decoder: The decoder.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidEnvelope``, or the decoder's error
    ///   for malformed JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        id = try container.decode(String.self, forKey: .id)
        token = try container.decode(String.self, forKey: .token)
        ttl = try container.decode(Int.self, forKey: .ttl)
        let urgencyText = try container.decode(String.self, forKey: .urgency)
        guard let urgency = Urgency(rawValue: urgencyText) else {
            throw FleetProtocolError(.invalidEnvelope, "unknown urgency \"\(urgencyText)\"")
        }
        self.urgency = urgency
        topic = try container.decodeIfPresent(String.self, forKey: .topic)
        received = try container.decode(Int64.self, forKey: .received)
        let bodyText = try container.decode(String.self, forKey: .body)
        guard Base64URL.isAlphabet(bodyText), let body = Base64URL.decode(bodyText).map(Array.init) else {
            throw FleetProtocolError(.invalidEnvelope, "the body is not unpadded base64url")
        }
        self.body = body
        try validate()
    }

    /// Encodes the envelope (the body as base64url without padding).
    ///
    /// - Parameters:
    ///   - encoder: The encoder.
    /// - Throws: The encoder's error.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(id, forKey: .id)
        try container.encode(token, forKey: .token)
        try container.encode(ttl, forKey: .ttl)
        try container.encode(urgency.rawValue, forKey: .urgency)
        try container.encodeIfPresent(topic, forKey: .topic)
        try container.encode(received, forKey: .received)
        try container.encode(Base64URL.encode(Data(body)), forKey: .body)
    }

    /// The envelope as the JSON bytes of an MQTT payload.
    ///
    /// - Returns: UTF-8 JSON, keys sorted.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidEnvelope`` if a field is invalid.
    public func jsonPayload() throws -> [UInt8] {
        try validate()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            return Array(try encoder.encode(self))
        } catch {
            throw FleetProtocolError(.invalidEnvelope, "cannot encode: \(error)")
        }
    }

    /// Decodes an MQTT payload.
    ///
    /// - Parameters:
    ///   - payload: UTF-8 JSON.
    /// - Returns: The validated envelope.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidEnvelope`` for malformed JSON or an
    ///   invalid field.
    public static func decode(_ payload: [UInt8]) throws -> PushEnvelope {
        do {
            return try JSONDecoder().decode(PushEnvelope.self, from: Data(payload))
        } catch let error as FleetProtocolError {
            throw error
        } catch {
            throw FleetProtocolError(.invalidEnvelope, "malformed envelope JSON: \(error)")
        }
    }

    private func validate() throws {
        func invalid(_ why: String) -> FleetProtocolError { FleetProtocolError(.invalidEnvelope, why) }
        guard version == Self.currentVersion else { throw invalid("unsupported version \(version)") }
        guard UUID(uuidString: id) != nil else { throw invalid("the id is not a UUID") }
        guard FleetTopics.isValidLevel(token) else { throw invalid("invalid token") }
        guard (0...Self.maximumTTL).contains(ttl) else { throw invalid("ttl out of range: \(ttl)") }
        if let topic {
            guard (1...32).contains(topic.utf8.count), Base64URL.isAlphabet(topic) else {
                throw invalid("the topic must be 1-32 base64url characters")
            }
        }
        guard (0...Self.latestReceived).contains(received) else { throw invalid("received time out of range") }
        guard body.count <= Self.maximumBodySize else {
            throw invalid("the body exceeds \(Self.maximumBodySize) bytes")
        }
    }
}
