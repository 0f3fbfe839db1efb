/// The Last Will and Testament the broker publishes when the connection ends without a
/// DISCONNECT (a crash, a lost network, ``BrokerConnection/abort()``).
///
/// It is registered with `mosquitto_will_set` before every connection attempt; a clean
/// ``BrokerConnection/stop()`` suppresses it. lifecycled's presence will is a retained `offline`
/// on the device's presence topic (FleetProtocol's `FleetTopics`).
public struct BrokerWill: Sendable, Equatable {
    /// The topic the broker publishes the will to.
    public var topic: String
    /// The will's payload.
    public var payload: [UInt8]
    /// Its QoS: 0 or 1.
    public var qos: Int
    /// Whether the broker keeps it as the topic's retained message.
    public var retain: Bool

    /// Creates a will.
    ///
    /// - Parameters:
    ///   - topic: The topic (no wildcards).
    ///   - payload: The payload.
    ///   - qos: 0 or 1.
    ///   - retain: Whether it is retained.
    public init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
