/// What the HTTP side needs of the broker: its state, and a QoS 1 publish that returns once the
/// broker has the message (PUBACK). ``BrokerPushPublisher`` is the real one; tests use fakes.
package protocol PushPublisher: Sendable {
    /// Whether messages can be published now.
    var brokerStatus: BrokerStatus { get }

    /// Publishes one message to its device's `push` topic, returning after the broker's PUBACK.
    ///
    /// - Throws: When the broker is not connected or the publish fails or is cut off.
    func publish(_ message: OutgoingPush) async throws
}

/// The broker connection's state as `/health` reports it.
package enum BrokerStatus: String, Sendable {
    /// Connected (CONNACK received): pushes are published.
    case connected
    /// Connecting or reconnecting: pushes get 503.
    case connecting
    /// Stopped, or failing to connect: pushes get 503.
    case disconnected
}
