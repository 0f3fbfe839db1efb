import FoundationEssentials

extension Application {
    /// `"ApplicationDidOpenURLNotification"` (UIKit has none: "there is no matching notification"):
    /// posted after whichever open method the delegate implements returned, with the URL, the
    /// options under UIKit's option keys, and whether it was handled.
    public nonisolated static let didOpenURLNotification = LifecycleNotification.Name(
        "ApplicationDidOpenURLNotification")
    /// `"ApplicationShouldAllowExtensionPointNotification"`: posted after the delegate answered
    /// `application(_:shouldAllowExtensionPointIdentifier:)`.
    public nonisolated static let shouldAllowExtensionPointNotification = LifecycleNotification.Name(
        "ApplicationShouldAllowExtensionPointNotification")

    /// The typed form of ``didOpenURLNotification``.
    public struct DidOpenURLMessage: LifecycleMessage {
        /// ``Application/didOpenURLNotification``.
        public static var name: LifecycleNotification.Name { Application.didOpenURLNotification }
        /// The URL.
        public var url: URL
        /// The options it came with.
        public var options: OpenURLOptions
        /// Whether the delegate handled it.
        public var handled: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - url: The URL the delegate was asked to open.
        ///   - options: Who asked to open it, and what they sent along.
        ///   - handled: Whether the delegate handled it.
        public init(url: URL, options: OpenURLOptions, handled: Bool) {
            self.url = url
            self.options = options
            self.handled = handled
        }
        /// ``ApplicationUserInfoKey/url``, ``ApplicationUserInfoKey/result`` and the ``OpenURLOptions/Key`` entries.
        public var userInfo: UserInfo {
            options.userInfo.merging([
                ApplicationUserInfoKey.url: .string(url.absoluteString), ApplicationUserInfoKey.result: .bool(handled),
            ])
        }
        /// Reads the URL, the result and the options.
        public init?(userInfo: UserInfo) {
            guard let url = userInfo[ApplicationUserInfoKey.url]?.stringValue.flatMap(URL.init(string:)) else {
                return nil
            }
            self.init(
                url: url, options: OpenURLOptions(userInfo: userInfo),
                handled: userInfo[ApplicationUserInfoKey.result]?.boolValue ?? false)
        }
    }

    /// The typed form of ``shouldAllowExtensionPointNotification``.
    public struct ShouldAllowExtensionPointMessage: LifecycleMessage {
        /// ``Application/shouldAllowExtensionPointNotification``.
        public static var name: LifecycleNotification.Name { Application.shouldAllowExtensionPointNotification }
        /// The extension point asked about.
        public var extensionPoint: ExtensionPointIdentifier
        /// The delegate's answer.
        public var result: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - extensionPoint: The extension point.
        ///   - result: The delegate's answer.
        public init(extensionPoint: ExtensionPointIdentifier, result: Bool) {
            self.extensionPoint = extensionPoint
            self.result = result
        }
        /// ``ApplicationUserInfoKey/extensionPointIdentifier`` and ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.extensionPointIdentifier: .string(extensionPoint.rawValue),
                ApplicationUserInfoKey.result: .bool(result),
            ]
        }
        /// Reads the identifier and answer.
        public init?(userInfo: UserInfo) {
            guard let identifier = userInfo[ApplicationUserInfoKey.extensionPointIdentifier]?.stringValue,
                let result = userInfo[ApplicationUserInfoKey.result]?.boolValue
            else { return nil }
            self.init(extensionPoint: ExtensionPointIdentifier(rawValue: identifier), result: result)
        }
    }
}
