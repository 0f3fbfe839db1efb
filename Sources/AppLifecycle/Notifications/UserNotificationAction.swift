/// A button on a local notification's banner: the counterpart of `UIUserNotificationAction`.
///
/// On Linux each action becomes a pair of the `actions` argument of
/// `org.freedesktop.Notifications.Notify` (`identifier`, `title`); choosing it calls
/// `application(_:handleActionWithIdentifier:for:completionHandler:)` with ``identifier``.
public struct UserNotificationAction: Sendable, Hashable, Codable {
    /// How the app runs when the user chooses an action: the counterpart of `UIUserNotificationActivationMode`.
    public enum ActivationMode: String, Sendable, Hashable, Codable {
        /// The app comes to the foreground to handle the action.
        case foreground
        /// The app handles the action in the background (launched there if it was not running)
        /// and is suspended again once the completion handler ran.
        case background
    }

    /// The identifier the delegate receives; not empty, and not `default` (the banner's own click).
    public var identifier: String
    /// The button's label.
    public var title: String
    /// Whether handling it brings the app to the foreground.
    public var activationMode: ActivationMode
    /// Whether the action destroys data (servers may show it differently; none is required to).
    public var isDestructive: Bool
    /// Whether the action needs an unlocked session (it is not offered on a locked screen's banners).
    public var isAuthenticationRequired: Bool

    /// Creates an action.
    ///
    /// - Parameters:
    ///   - identifier: What the delegate receives as the action's identifier.
    ///   - title: The button's label.
    ///   - activationMode: Foreground or background handling (background by default, as in UIKit).
    ///   - isDestructive: Whether the action destroys data.
    ///   - isAuthenticationRequired: Whether it needs an unlocked session.
    public init(
        identifier: String, title: String, activationMode: ActivationMode = .background, isDestructive: Bool = false,
        isAuthenticationRequired: Bool = false
    ) {
        self.identifier = identifier
        self.title = title
        self.activationMode = activationMode
        self.isDestructive = isDestructive
        self.isAuthenticationRequired = isAuthenticationRequired
    }
}
