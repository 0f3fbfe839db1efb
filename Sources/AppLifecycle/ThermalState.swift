/// How hot the device is, and so how much work it should take on (`ProcessInfo.ThermalState`).
///
/// On Linux the host derives it from power-profiles-daemon's `PerformanceDegraded` and the
/// kernel's thermal zones and their trip points; a host that knows neither reports ``nominal``.
public enum ThermalState: Int, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Within normal limits.
    case nominal = 0
    /// Slightly elevated: a passive trip point is near.
    case fair = 1
    /// High: a passive trip point was passed, or the CPU is throttled; defer discretionary work.
    case serious = 2
    /// Close to a hot or critical trip point: do as little as possible.
    case critical = 3

    public static func < (lhs: ThermalState, rhs: ThermalState) -> Bool { lhs.rawValue < rhs.rawValue }
}
