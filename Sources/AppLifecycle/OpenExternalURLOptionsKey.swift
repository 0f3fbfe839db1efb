/// A key of the options of ``Application/open(_:options:completionHandler:)``, with UIKit's raw
/// string (`UIApplication.OpenExternalURLOptionsKey`).
public struct OpenExternalURLOptionsKey: RawRepresentable, Sendable, Hashable, Codable {
    /// The raw key string.
    public var rawValue: String
    /// Creates a key from its raw string.
    ///
    /// - Parameters:
    ///   - rawValue: The raw key string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `true`: open the URL only if an installed app claims it (on Linux: a scheme claimed by an
    /// app lifecycled hosts), never in the desktop's default handler or a portal's chooser
    /// (`UIApplicationOpenURLOptionUniversalLinksOnly`).
    public static let universalLinksOnly = OpenExternalURLOptionsKey(
        rawValue: "UIApplicationOpenURLOptionUniversalLinksOnly")
}
