import BrokerLink
import FleetProtocol

/// What the device's state allows by a push's RFC 8030 urgency, as UnifiedPush asks of a
/// distributor: `very-low` only on external power **and** an unmetered network (Wi-Fi),
/// `low` on power **or** an unmetered network, `normal` unless the battery is low, `high` always.
///
/// An unknown fact (no UPower, no NetworkManager) counts as the permissive answer: a desktop or
/// a kiosk without them is on mains power and a fixed network.
struct DeliveryConditions: Sendable, Equatable, CustomStringConvertible {
    /// Whether the machine runs on battery (UPower `OnBattery`); `nil` when unknown.
    var onBattery: Bool?
    /// Whether the battery is low (UPower's display device `WarningLevel` ≥ 3); `nil` when unknown.
    var batteryLow: Bool?
    /// Whether the network is metered (NetworkManager `Metered` 1 or 3); `nil` when unknown.
    var metered: Bool?

    func allows(_ urgency: PushEnvelope.Urgency) -> Bool {
        let power = onBattery != true
        let unmetered = metered != true
        switch urgency {
        case .veryLow: return power && unmetered
        case .low: return power || unmetered
        case .normal: return batteryLow != true
        case .high: return true
        }
    }

    var description: String {
        func text(_ value: Bool?) -> String { value.map { "\($0)" } ?? "unknown" }
        return "on battery \(text(onBattery)), battery low \(text(batteryLow)), metered \(text(metered))"
    }
}
