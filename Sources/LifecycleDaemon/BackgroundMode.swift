/// A reason an app may keep running code in the background (the `UIBackgroundModes` of iOS).
///
/// The documented set a manifest's `backgroundModes` may draw from; any other string is a
/// ``ManifestError/Code/unknownBackgroundMode`` error. Raw values are the manifest spelling.
enum BackgroundMode: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// Background fetch: the daemon may wake the app to fetch content.
    case fetch
    /// The app may be woken for a remote (push) notification.
    case remoteNotification = "remote-notification"
    /// The app plays audio in the background.
    case audio
    /// The app receives location updates in the background.
    case location
    /// The app runs deferrable processing tasks.
    case processing
    /// The app handles voice-over-IP calls.
    case voip

    /// Orders modes by their raw value, for stable output.
    ///
    /// - Parameters:
    ///   - lhs: A mode.
    ///   - rhs: Another mode.
    static func < (lhs: BackgroundMode, rhs: BackgroundMode) -> Bool { lhs.rawValue < rhs.rawValue }
}
