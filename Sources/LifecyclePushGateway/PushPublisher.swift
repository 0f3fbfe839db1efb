/// What the HTTP side needs of the broker: its state, and a QoS 1 publish that returns once the
/// broker has the message (PUBACK). ``BrokerPushPublisher`` is the real one; tests use fakes.
package protocol PushPublisher: Sendable {
    /// Whether messages can be published now.
    var brokerStatus: BrokerStatus { get }

    /// Publishes one message to its device's `push` topic, returning after the broker's PUBACK.
    ///
    /// - Throws: When the broker is not connected or the publish fails or is cut off.
    func publish(_ message: OutgoingPush) async throws

    /// The same publish with its outcome passed to `completion` (on any thread, once) instead of
    /// awaited, so an event loop can publish without a task and the hops to and from the task
    /// pool. Without a PUBACK it may never be called: the caller times it out.
    func publish(_ message: OutgoingPush, completion: @escaping @Sendable (Result<Void, any Error>) -> Void)
}

extension PushPublisher {
    /// Through ``publish(_:)``, in a task.
    package func publish(_ message: OutgoingPush, completion: @escaping @Sendable (Result<Void, any Error>) -> Void) {
        Task {
            do {
                try await publish(message)
                completion(.success(()))
            } catch {
                completion(.failure(error))
            }
        }
    }
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
