import FoundationEssentials

/// An activity that can be continued on another device or by another app.
///
/// The Linux counterpart of `NSUserActivity`, reduced to what crosses a process boundary:
/// a type, a title, a web page URL and property-list data.
public struct UserActivity: Sendable, Hashable, Codable {
    /// The activity type, a reverse-DNS string.
    public var activityType: String
    /// A human-readable title.
    public var title: String?
    /// A web page that continues the activity where the app cannot.
    public var webpageURL: URL?
    /// The activity's data.
    public var userInfo: UserInfo

    /// Creates an activity.
    ///
    /// - Parameters:
    ///   - activityType: The activity type.
    ///   - title: A human-readable title.
    ///   - webpageURL: A web page that continues the activity.
    ///   - userInfo: The activity's data.
    public init(activityType: String, title: String? = nil, webpageURL: URL? = nil, userInfo: UserInfo = [:]) {
        self.activityType = activityType
        self.title = title
        self.webpageURL = webpageURL
        self.userInfo = userInfo
    }
}
