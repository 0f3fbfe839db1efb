import FoundationEssentials

/// A typed notification: a payload type with a named form.
///
/// Every lifecycle notification exists twice: as a value of a `LifecycleMessage` type (for
/// example ``Application/DidBecomeActiveMessage``), and as a named notification whose name is
/// UIKit's raw string (`"UIApplicationDidBecomeActiveNotification"`) and whose userInfo is the
/// message's ``userInfo``. ``LifecycleNotificationCenter`` bridges the two forms in both
/// directions: a typed post reaches name observers in the userInfo form, and a named post whose
/// userInfo decodes (``init(userInfo:)``) reaches typed observers.
public protocol LifecycleMessage: Sendable {
    /// The name of the message's named form.
    static var name: LifecycleNotification.Name { get }

    /// The message's payload in its named form.
    var userInfo: UserInfo { get }

    /// Decodes a message from a named notification's userInfo, or returns `nil` when it does not fit.
    ///
    /// - Parameters:
    ///   - userInfo: The userInfo of a named post.
    init?(userInfo: UserInfo)
}
