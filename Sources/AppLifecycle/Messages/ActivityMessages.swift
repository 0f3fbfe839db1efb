import FoundationEssentials

extension Application {
    /// `"ApplicationPerformFetchNotification"` (no UIKit counterpart): posted when the fetch the
    /// host offered through `application(_:performFetchWithCompletionHandler:)` completed, with its result.
    public nonisolated static let performFetchNotification = LifecycleNotification.Name(
        "ApplicationPerformFetchNotification")
    /// `"ApplicationHandleEventsForBackgroundURLSessionNotification"`: posted after
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`.
    public nonisolated static let handleEventsForBackgroundURLSessionNotification = LifecycleNotification.Name(
        "ApplicationHandleEventsForBackgroundURLSessionNotification")
    /// `"ApplicationWillContinueUserActivityNotification"`: posted after
    /// `application(_:willContinueUserActivityWithType:)`, with the type and the answer.
    public nonisolated static let willContinueUserActivityNotification = LifecycleNotification.Name(
        "ApplicationWillContinueUserActivityNotification")
    /// `"ApplicationContinueUserActivityNotification"`: posted after
    /// `application(_:continue:restorationHandler:)`, with the activity and the answer.
    public nonisolated static let continueUserActivityNotification = LifecycleNotification.Name(
        "ApplicationContinueUserActivityNotification")
    /// `"ApplicationDidUpdateUserActivityNotification"`: posted after `application(_:didUpdate:)`.
    public nonisolated static let didUpdateUserActivityNotification = LifecycleNotification.Name(
        "ApplicationDidUpdateUserActivityNotification")
    /// `"ApplicationDidFailToContinueUserActivityNotification"`: posted after
    /// `application(_:didFailToContinueUserActivityWithType:error:)`.
    public nonisolated static let didFailToContinueUserActivityNotification = LifecycleNotification.Name(
        "ApplicationDidFailToContinueUserActivityNotification")
    /// `"ApplicationPerformActionForShortcutItemNotification"`: posted after
    /// `application(_:performActionFor:completionHandler:)`.
    public nonisolated static let performActionForShortcutItemNotification = LifecycleNotification.Name(
        "ApplicationPerformActionForShortcutItemNotification")

    /// The typed form of ``performFetchNotification``.
    public struct PerformFetchMessage: LifecycleMessage {
        /// ``Application/performFetchNotification``.
        public static var name: LifecycleNotification.Name { Application.performFetchNotification }
        /// The fetch's result.
        public var result: BackgroundFetchResult
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - result: The fetch's result.
        public init(result: BackgroundFetchResult) { self.result = result }
        /// ``ApplicationUserInfoKey/fetchResult``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.fetchResult: .string(result.rawValue)] }
        /// Reads the result.
        public init?(userInfo: UserInfo) {
            guard
                let result = userInfo[ApplicationUserInfoKey.fetchResult]?.stringValue.flatMap(
                    BackgroundFetchResult.init(rawValue:))
            else { return nil }
            self.result = result
        }
    }

    /// The typed form of ``handleEventsForBackgroundURLSessionNotification``.
    public struct HandleEventsForBackgroundURLSessionMessage: LifecycleMessage {
        /// ``Application/handleEventsForBackgroundURLSessionNotification``.
        public static var name: LifecycleNotification.Name {
            Application.handleEventsForBackgroundURLSessionNotification
        }
        /// The session's identifier.
        public var identifier: String
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - identifier: The session's identifier.
        public init(identifier: String) { self.identifier = identifier }
        /// ``ApplicationUserInfoKey/urlSessionIdentifier``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.urlSessionIdentifier: .string(identifier)] }
        /// Reads the identifier.
        public init?(userInfo: UserInfo) {
            guard let identifier = userInfo[ApplicationUserInfoKey.urlSessionIdentifier]?.stringValue else {
                return nil
            }
            self.identifier = identifier
        }
    }

    /// The typed form of ``willContinueUserActivityNotification``.
    public struct WillContinueUserActivityMessage: LifecycleMessage {
        /// ``Application/willContinueUserActivityNotification``.
        public static var name: LifecycleNotification.Name { Application.willContinueUserActivityNotification }
        /// The activity's type.
        public var activityType: String
        /// Whether the app notifies the user itself.
        public var result: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - activityType: The activity's type.
        ///   - result: The delegate's answer.
        public init(activityType: String, result: Bool) {
            self.activityType = activityType
            self.result = result
        }
        /// ``ApplicationUserInfoKey/userActivityType`` and ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.userActivityType: .string(activityType),
                ApplicationUserInfoKey.result: .bool(result),
            ]
        }
        /// Reads the type and answer.
        public init?(userInfo: UserInfo) {
            guard let type = userInfo[ApplicationUserInfoKey.userActivityType]?.stringValue else { return nil }
            self.init(activityType: type, result: userInfo[ApplicationUserInfoKey.result]?.boolValue ?? false)
        }
    }

    /// The typed form of ``continueUserActivityNotification``.
    public struct ContinueUserActivityMessage: LifecycleMessage {
        /// ``Application/continueUserActivityNotification``.
        public static var name: LifecycleNotification.Name { Application.continueUserActivityNotification }
        /// The activity.
        public var activity: UserActivity
        /// Whether the app continued it.
        public var result: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - activity: The activity the delegate was asked to continue.
        ///   - result: The delegate's answer.
        public init(activity: UserActivity, result: Bool) {
            self.activity = activity
            self.result = result
        }
        /// The activity's entries and ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo {
            activity.messageUserInfo.merging([ApplicationUserInfoKey.result: .bool(result)])
        }
        /// Reads the activity and answer.
        public init?(userInfo: UserInfo) {
            guard let activity = UserActivity(messageUserInfo: userInfo) else { return nil }
            self.init(activity: activity, result: userInfo[ApplicationUserInfoKey.result]?.boolValue ?? false)
        }
    }

    /// The typed form of ``didUpdateUserActivityNotification``.
    public struct DidUpdateUserActivityMessage: LifecycleMessage {
        /// ``Application/didUpdateUserActivityNotification``.
        public static var name: LifecycleNotification.Name { Application.didUpdateUserActivityNotification }
        /// The activity.
        public var activity: UserActivity
        /// Creates the message.
        public init(activity: UserActivity) { self.activity = activity }
        /// The activity's entries.
        public var userInfo: UserInfo { activity.messageUserInfo }
        /// Reads the activity.
        public init?(userInfo: UserInfo) {
            guard let activity = UserActivity(messageUserInfo: userInfo) else { return nil }
            self.activity = activity
        }
    }

    /// The typed form of ``didFailToContinueUserActivityNotification``.
    public struct DidFailToContinueUserActivityMessage: LifecycleMessage {
        /// ``Application/didFailToContinueUserActivityNotification``.
        public static var name: LifecycleNotification.Name { Application.didFailToContinueUserActivityNotification }
        /// The activity's type.
        public var activityType: String
        /// Why it failed.
        public var error: ApplicationError
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - activityType: The activity's type.
        ///   - error: Why it failed.
        public init(activityType: String, error: ApplicationError) {
            self.activityType = activityType
            self.error = error
        }
        /// ``ApplicationUserInfoKey/userActivityType`` and the error's entries.
        public var userInfo: UserInfo {
            error.userInfo.merging([ApplicationUserInfoKey.userActivityType: .string(activityType)])
        }
        /// Reads the type and error.
        public init?(userInfo: UserInfo) {
            guard let type = userInfo[ApplicationUserInfoKey.userActivityType]?.stringValue,
                let error = ApplicationError(userInfo: userInfo)
            else { return nil }
            self.init(activityType: type, error: error)
        }
    }

    /// The typed form of ``performActionForShortcutItemNotification``.
    public struct PerformActionForShortcutItemMessage: LifecycleMessage {
        /// ``Application/performActionForShortcutItemNotification``.
        public static var name: LifecycleNotification.Name { Application.performActionForShortcutItemNotification }
        /// The quick action.
        public var shortcutItem: ShortcutItem
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - shortcutItem: The quick action.
        public init(shortcutItem: ShortcutItem) { self.shortcutItem = shortcutItem }
        /// ``ApplicationUserInfoKey/shortcutItem``.
        public var userInfo: UserInfo {
            var options = LaunchOptions()
            options.shortcutItem = shortcutItem
            return [ApplicationUserInfoKey.shortcutItem: options[.shortcutItem] ?? .null]
        }
        /// Reads the quick action.
        public init?(userInfo: UserInfo) {
            var options = LaunchOptions()
            options[.shortcutItem] = userInfo[ApplicationUserInfoKey.shortcutItem]
            guard let item = options.shortcutItem else { return nil }
            self.shortcutItem = item
        }
    }
}

extension UserActivity {
    var messageUserInfo: UserInfo {
        var info: UserInfo = [
            ApplicationUserInfoKey.userActivityType: .string(activityType),
            ApplicationUserInfoKey.userActivityUserInfo: .dictionary(userInfo.values),
        ]
        if let title { info[ApplicationUserInfoKey.userActivityTitle] = .string(title) }
        if let webpageURL { info[ApplicationUserInfoKey.userActivityWebpageURL] = .string(webpageURL.absoluteString) }
        return info
    }

    init?(messageUserInfo info: UserInfo) {
        guard let type = info[ApplicationUserInfoKey.userActivityType]?.stringValue else { return nil }
        self.init(
            activityType: type, title: info[ApplicationUserInfoKey.userActivityTitle]?.stringValue,
            webpageURL: info[ApplicationUserInfoKey.userActivityWebpageURL]?.stringValue.flatMap(URL.init(string:)),
            userInfo: UserInfo(info[ApplicationUserInfoKey.userActivityUserInfo]?.dictionaryValue ?? [:]))
    }
}
