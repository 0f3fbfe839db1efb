/// A named group of actions a local notification refers to through ``LocalNotification/category``:
/// the counterpart of `UIUserNotificationCategory`.
public struct UserNotificationCategory: Sendable, Hashable, Codable {
    /// The name notifications refer to.
    public var identifier: String
    /// The banner's buttons, in order (servers show the first few; four is a safe number).
    public var actions: [UserNotificationAction]

    /// Creates a category.
    ///
    /// - Parameters:
    ///   - identifier: The name ``LocalNotification/category`` refers to.
    ///   - actions: The banner's buttons, in order.
    public init(identifier: String, actions: [UserNotificationAction]) {
        self.identifier = identifier
        self.actions = actions
    }
}
