/// What the app registered for with `registerUserNotificationSettings(_:)`: the counterpart of
/// `UIUserNotificationSettings`.
///
/// A Linux desktop asks no permission, so the settings the app registers are the settings in force.
public struct UserNotificationSettings: Sendable, Hashable, Codable {
    /// What notifications may do.
    public var types: UserNotificationType
    /// The categories notifications may name, by identifier.
    public var categories: Set<UserNotificationCategory>

    /// Creates settings.
    ///
    /// - Parameters:
    ///   - types: What notifications may do.
    ///   - categories: The categories notifications may name.
    public init(types: UserNotificationType, categories: Set<UserNotificationCategory>? = nil) {
        self.types = types
        self.categories = categories ?? []
    }

    /// The category with this identifier, if registered.
    public func category(_ identifier: String) -> UserNotificationCategory? {
        categories.first { $0.identifier == identifier }
    }
}
