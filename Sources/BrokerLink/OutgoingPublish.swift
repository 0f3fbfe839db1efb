/// A publish waiting for the connection (queued) or for its completion (in flight).
struct OutgoingPublish {
    /// Submission order, to put unsent QoS 0 publishes back in order after a disconnect.
    var sequence: UInt64
    var topic: String
    var payload: [UInt8]
    var qos: Int32
    var retain: Bool
    var completion: @Sendable (Result<Void, BrokerError>) -> Void
}
