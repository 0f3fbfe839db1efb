/// The options that come with a request to open a URL: who asked, and what they sent along.
///
/// Mirrors the options dictionary of UIKit's `application(_:open:options:)`. The named form
/// (``userInfo``) uses UIKit's raw key strings.
public struct OpenURLOptions: Sendable, Hashable, Codable {
    /// A key of the options dictionary, with UIKit's raw string.
    public struct Key: RawRepresentable, Sendable, Hashable, Codable {
        /// The raw key string.
        public var rawValue: String
        /// Creates a key from its raw string.
        ///
        /// - Parameters:
        ///   - rawValue: The raw key string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The identifier of the app that asked (`UIApplicationOpenURLOptionsSourceApplicationKey`).
        public static let sourceApplication = Key(rawValue: "UIApplicationOpenURLOptionsSourceApplicationKey")
        /// The property-list value the asking app sent along (`UIApplicationOpenURLOptionsAnnotationKey`).
        public static let annotation = Key(rawValue: "UIApplicationOpenURLOptionsAnnotationKey")
        /// Whether the file must be opened in place rather than copied (`UIApplicationOpenURLOptionsOpenInPlaceKey`).
        public static let openInPlace = Key(rawValue: "UIApplicationOpenURLOptionsOpenInPlaceKey")
    }

    /// The identifier of the app (on Linux: its desktop-file id, unit name or executable) that asked.
    public var sourceApplication: String?
    /// The property-list value the asking app sent along.
    public var annotation: UserInfoValue?
    /// Whether the file must be opened in place rather than copied.
    public var openInPlace: Bool

    /// Creates options.
    ///
    /// - Parameters:
    ///   - sourceApplication: The identifier of the app that asked.
    ///   - annotation: The property-list value the asking app sent along.
    ///   - openInPlace: Whether the file must be opened in place.
    public init(sourceApplication: String? = nil, annotation: UserInfoValue? = nil, openInPlace: Bool = false) {
        self.sourceApplication = sourceApplication
        self.annotation = annotation
        self.openInPlace = openInPlace
    }

    /// The options as a dictionary with UIKit's raw keys.
    public var userInfo: UserInfo {
        var info = UserInfo()
        if let sourceApplication { info[Key.sourceApplication] = .string(sourceApplication) }
        if let annotation { info[Key.annotation] = annotation }
        info[Key.openInPlace] = .bool(openInPlace)
        return info
    }

    /// Reads options from a dictionary with UIKit's raw keys; unknown keys are ignored.
    ///
    /// - Parameters:
    ///   - userInfo: The dictionary.
    public init(userInfo: UserInfo) {
        self.sourceApplication = userInfo[Key.sourceApplication]?.stringValue
        self.annotation = userInfo[Key.annotation]
        self.openInPlace = userInfo[Key.openInPlace]?.boolValue ?? false
    }
}
