import FleetProtocol
import FoundationEssentials

/// Push envelopes (the JSON the gateway publishes to a device's push topic), decoded as lifecycled
/// decodes an MQTT payload; one that decodes must encode (`jsonPayload`) and decode back to itself.
/// The input is also parsed as a fleet topic name (what arrives with every MQTT message).
enum PushEnvelopeFuzzing {
    static let target = FuzzTarget(name: "push-envelope", summary: "push envelopes and fleet topic names") { bytes in
        if let envelope = try? PushEnvelope.decode(bytes) {
            do {
                let again = try PushEnvelope.decode(envelope.jsonPayload())
                guard again == envelope else { FuzzTarget.fail("envelope changed on a round trip") }
            } catch {
                FuzzTarget.fail("a decoded envelope does not encode and decode: \(error)")
            }
            guard envelope.expiresAt >= envelope.received else { FuzzTarget.fail("expires before it was received") }
        }
        let topic = String(decoding: bytes, as: UTF8.self)
        if let parsed = FleetTopics.parse(topic) {
            guard FleetTopics.isValidLevel(parsed.device) else {
                FuzzTarget.fail("topic '\(topic)' parsed with device '\(parsed.device)'")
            }
        }
    }
}
