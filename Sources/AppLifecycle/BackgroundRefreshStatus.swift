/// Whether the app may be woken in the background to fetch (`UIBackgroundRefreshStatus`).
public enum BackgroundRefreshStatus: Int, Sendable, Hashable, Codable, CaseIterable {
    /// Background refresh is off for now, for a reason the user may not control (Low Power Mode).
    case restricted = 0
    /// The user turned background refresh off for this app.
    case denied = 1
    /// Background refresh is available.
    case available = 2
}
