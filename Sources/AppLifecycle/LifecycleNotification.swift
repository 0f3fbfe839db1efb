import FoundationEssentials

/// A named notification: a name, an optional sender object and a userInfo.
///
/// The named form of every lifecycle notification, delivered to observers that subscribe by
/// name (or to all names). Unlike Foundation's `Notification` it is `Sendable`: its userInfo
/// is a ``UserInfo`` value and its object, when present, is a `Sendable` class instance.
public struct LifecycleNotification: Sendable, CustomStringConvertible {
    /// The notification's name (for lifecycle notifications, UIKit's raw string).
    public var name: LifecycleNotification.Name
    /// The object that posted it, if any.
    public var object: (any AnyObject & Sendable)?
    /// The payload.
    public var userInfo: UserInfo

    /// Creates a named notification.
    ///
    /// - Parameters:
    ///   - name: The name: UIKit's raw string for UIKit's notifications, such as `UIApplicationDidBecomeActiveNotification`.
    ///   - object: The posting object.
    ///   - userInfo: The payload.
    public init(
        name: LifecycleNotification.Name, object: (any AnyObject & Sendable)? = nil, userInfo: UserInfo = UserInfo()
    ) {
        self.name = name
        self.object = object
        self.userInfo = userInfo
    }

    /// `name {userInfo}`.
    public var description: String {
        userInfo.isEmpty ? name.rawValue : "\(name.rawValue) \(userInfo)"
    }
}
