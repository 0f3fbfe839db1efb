/// A message the broker delivered to a ``BrokerConnection``.
public struct BrokerMessage: Sendable, Equatable {
    /// The topic it was published to.
    public var topic: String
    /// The payload bytes (copied out of libmosquitto's buffer).
    public var payload: [UInt8]
    /// The QoS it was delivered with: 0 or 1.
    public var qos: Int
    /// Whether it is a retained message (delivered because of a new subscription).
    public var retain: Bool
    /// The packet identifier of a QoS 1 delivery (0 for QoS 0). It identifies the delivery, not
    /// the message: a redelivery after a reconnect may carry another one, so deduplicate by an
    /// id inside the payload.
    public var mid: Int

    /// Creates a message.
    ///
    /// - Parameters:
    ///   - topic: The topic.
    ///   - payload: The payload.
    ///   - qos: 0 or 1.
    ///   - retain: Whether it was retained.
    ///   - mid: The packet identifier (0 for QoS 0).
    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool, mid: Int) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.mid = mid
    }

    /// The payload decoded as UTF-8 (invalid sequences replaced).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}
