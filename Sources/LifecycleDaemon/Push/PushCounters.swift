import Logging

/// What the ``PushDistributor`` did with pushes since lifecycled started. `lifecyclectl status` shows
/// them (`GetCounters`, with the queue's length and the registrations), and each log line of a
/// push's arrival, delivery or failed delivery carries them as journal fields (`PUSH_RECEIVED=…`).
struct PushCounters: Sendable, Equatable {
    /// Pushes from the broker for a registration of this device (a redelivery counts again).
    var received = 0
    /// Pushes the app's connector took (`Message` answered, or may have reached it).
    var delivered = 0
    /// `Message` calls that failed or timed out (each is retried).
    var failedDeliveries = 0
    /// Pushes whose TTL ran out before they could be delivered.
    var expired = 0
    /// Pushes for a token not registered here, dropped.
    var dropped = 0

    /// The counters by the names `GetCounters` and the journal use (`push-received`, …).
    var values: [String: Int] {
        [
            "push-received": received, "push-delivered": delivered, "push-failed-deliveries": failedDeliveries,
            "push-expired": expired, "push-dropped": dropped,
        ]
    }

    /// The counters as log metadata (journal fields `PUSH_RECEIVED`, …).
    var metadata: Logger.Metadata { values.mapValues { "\($0)" } }
}
