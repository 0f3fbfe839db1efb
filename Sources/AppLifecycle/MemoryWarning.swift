import FoundationEssentials

/// A memory warning and its severity.
public struct MemoryWarning: Sendable, Hashable, Codable {
    /// How severe the shortage is.
    public enum Level: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
        /// Some tasks stall on memory (PSI `some`, low-memory-monitor level 50).
        case low
        /// Memory is short enough that the system reclaims aggressively (low-memory-monitor level 100).
        case medium
        /// All tasks stall on memory; the OOM killer is near (PSI `full`, low-memory-monitor level 255).
        case critical

        /// The level low-memory-monitor would report for this severity (50, 100 or 255).
        public var lowMemoryMonitorValue: UInt8 {
            switch self {
            case .low: return 50
            case .medium: return 100
            case .critical: return 255
            }
        }

        /// The level for a low-memory-monitor `LowMemoryWarning(y)` value, or `nil` for 0 (no warning).
        ///
        /// - Parameters:
        ///   - value: The byte low-memory-monitor sent.
        public init?(lowMemoryMonitorValue value: UInt8) {
            switch value {
            case 0: return nil
            case 1...50: self = .low
            case 51...100: self = .medium
            default: self = .critical
            }
        }

        private var rank: Int {
            switch self {
            case .low: return 0
            case .medium: return 1
            case .critical: return 2
            }
        }

        /// Orders levels by severity.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// How severe the shortage is.
    public var level: Level
    /// Which source reported it (`"psi"`, `"memory-pressure-watch"`, `"low-memory-monitor"`, `"host"`).
    public var source: String

    /// Creates a memory warning.
    ///
    /// - Parameters:
    ///   - level: How severe the shortage is.
    ///   - source: Which source reported it.
    public init(level: Level, source: String) {
        self.level = level
        self.source = source
    }
}
