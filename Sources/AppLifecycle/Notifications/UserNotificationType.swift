/// What a notification may do to get the user's attention: the counterpart of `UIUserNotificationType`.
public struct UserNotificationType: OptionSet, Sendable, Hashable, Codable {
    /// The bits.
    public var rawValue: UInt
    /// Creates a set from its bits.
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Set the app's badge (the launcher entry's `count`).
    public static let badge = UserNotificationType(rawValue: 1 << 0)
    /// Play a sound (the `sound-name` hint).
    public static let sound = UserNotificationType(rawValue: 1 << 1)
    /// Show a banner.
    public static let alert = UserNotificationType(rawValue: 1 << 2)
}
