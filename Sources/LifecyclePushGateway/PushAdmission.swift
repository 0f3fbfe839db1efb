import BrokerLink
import FleetProtocol

/// A push request whose head passed every check: what is left is its body and the publish.
package struct PushAdmission: Sendable, Equatable {
    /// The registration's token.
    package var token: String
    /// The device that holds the token.
    package var device: String
    /// The `TTL` header, in seconds, at most ``PushEnvelope/maximumTTL`` (RFC 8030 §5.2 lets a push
    /// service shorten it; the 201 says how long it kept).
    package var ttl: Int
    /// The `Urgency` header, `normal` when absent.
    package var urgency: PushEnvelope.Urgency
    /// The `Topic` header, if any.
    package var topic: String?
    /// When the head was admitted (the publish latency runs from here to the PUBACK).
    package var received = ContinuousClock.now
}

/// What the check of a push request's head decided.
package enum AdmissionResult: Sendable, Equatable {
    /// The head passed: read the body.
    case admitted(PushAdmission)
    /// The answer that rejects the request.
    case rejected(GatewayResponse)
}
