import BrokerLink

/// A push request whose head passed every check: what is left is its body and the publish.
struct PushAdmission: Sendable, Equatable {
    /// The registration's token.
    var token: String
    /// The device that holds the token.
    var device: String
    /// The `TTL` header, in seconds, at most ``PushEnvelope/maximumTTL`` (RFC 8030 §5.2 lets a push
    /// service shorten it; the 201 says how long it kept).
    var ttl: Int
    /// The `Urgency` header, `normal` when absent.
    var urgency: PushEnvelope.Urgency
    /// The `Topic` header, if any.
    var topic: String?
}

/// What the check of a push request's head decided.
enum AdmissionResult: Sendable, Equatable {
    /// The head passed: read the body.
    case admitted(PushAdmission)
    /// The answer that rejects the request.
    case rejected(GatewayResponse)
}
