/// A quick action for the app: on Linux, a desktop-file action (`[Desktop Action …]`).
///
/// The counterpart of `UIApplicationShortcutItem`.
public struct ShortcutItem: Sendable, Hashable, Codable {
    /// The action's type, an app-defined string (the desktop action's id).
    public var type: String
    /// The title shown to the user.
    public var localizedTitle: String
    /// A subtitle shown under the title.
    public var localizedSubtitle: String?
    /// App-defined data.
    public var userInfo: UserInfo

    /// Creates a quick action.
    ///
    /// - Parameters:
    ///   - type: The action's type.
    ///   - localizedTitle: The title.
    ///   - localizedSubtitle: The subtitle.
    ///   - userInfo: App-defined data.
    public init(type: String, localizedTitle: String, localizedSubtitle: String? = nil, userInfo: UserInfo = [:]) {
        self.type = type
        self.localizedTitle = localizedTitle
        self.localizedSubtitle = localizedSubtitle
        self.userInfo = userInfo
    }
}
