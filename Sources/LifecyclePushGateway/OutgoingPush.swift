import BrokerLink
import FleetProtocol

/// One accepted push message on its way to a device: the envelope for
/// `applifecycle/v1/<device>/push`.
package struct OutgoingPush: Sendable, Equatable {
    /// The device whose `push` topic gets the message.
    package var device: String
    /// The message: its id is the `Location`'s last segment and the device's key for dropping
    /// QoS 1 duplicates; its body is byte for byte what the app server sent.
    package var envelope: PushEnvelope
}
