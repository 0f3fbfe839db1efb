/// How urgently the battery needs a charger, as UPower's display device says (`WarningLevel`).
///
/// Fetches are deferred at ``low`` and above. UPower's 0 (unknown) is not a level: the
/// condition is then unknown (`nil`).
public enum BatteryWarningLevel: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// No warning: the battery is charged enough, or the device runs on mains.
    case none
    /// A UPS is discharging (UPower reports it for UPSes only).
    case discharging
    /// The battery is low.
    case low
    /// The battery is critically low.
    case critical
    /// The battery is so low that UPower is about to take its critical action (hibernate, power off).
    case action

    /// The level for UPower's `UpDeviceLevel` (1 none, 2 discharging, 3 low, 4 critical, 5 action),
    /// or `nil` for 0 (unknown) and any other number.
    ///
    /// - Parameters:
    ///   - upowerValue: The display device's `WarningLevel` property (`u`).
    public init?(upowerValue: UInt32) {
        switch upowerValue {
        case 1: self = .none
        case 2: self = .discharging
        case 3: self = .low
        case 4: self = .critical
        case 5: self = .action
        default: return nil
        }
    }

    private var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (lhs: BatteryWarningLevel, rhs: BatteryWarningLevel) -> Bool { lhs.rank < rhs.rank }
}
