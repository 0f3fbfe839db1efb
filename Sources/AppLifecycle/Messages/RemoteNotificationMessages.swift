import FoundationEssentials

extension Application {
    /// `"ApplicationDidRegisterForRemoteNotificationsNotification"` (no UIKit counterpart): posted
    /// after `application(_:didRegisterForRemoteNotificationsWithDeviceToken:)`.
    public nonisolated static let didRegisterForRemoteNotificationsNotification = LifecycleNotification.Name(
        "ApplicationDidRegisterForRemoteNotificationsNotification")
    /// `"ApplicationDidFailToRegisterForRemoteNotificationsNotification"`: posted after
    /// `application(_:didFailToRegisterForRemoteNotificationsWithError:)`.
    public nonisolated static let didFailToRegisterForRemoteNotificationsNotification = LifecycleNotification.Name(
        "ApplicationDidFailToRegisterForRemoteNotificationsNotification")
    /// `"ApplicationDidReceiveRemoteNotificationNotification"`: posted after whichever
    /// `didReceiveRemoteNotification` variant was called.
    public nonisolated static let didReceiveRemoteNotificationNotification = LifecycleNotification.Name(
        "ApplicationDidReceiveRemoteNotificationNotification")
    /// `"ApplicationHandleRemoteNotificationActionNotification"`: posted after
    /// `application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:)`.
    public nonisolated static let handleRemoteNotificationActionNotification = LifecycleNotification.Name(
        "ApplicationHandleRemoteNotificationActionNotification")
    /// `"ApplicationDidReceiveLocalNotificationNotification"`: posted after `application(_:didReceive:)`.
    public nonisolated static let didReceiveLocalNotificationNotification = LifecycleNotification.Name(
        "ApplicationDidReceiveLocalNotificationNotification")
    /// `"ApplicationHandleLocalNotificationActionNotification"`: posted after
    /// `application(_:handleActionWithIdentifier:for:completionHandler:)`.
    public nonisolated static let handleLocalNotificationActionNotification = LifecycleNotification.Name(
        "ApplicationHandleLocalNotificationActionNotification")

    /// The typed form of ``didRegisterForRemoteNotificationsNotification``.
    public struct DidRegisterForRemoteNotificationsMessage: LifecycleMessage {
        /// ``Application/didRegisterForRemoteNotificationsNotification``.
        public static var name: LifecycleNotification.Name { Application.didRegisterForRemoteNotificationsNotification }
        /// The device token.
        public var deviceToken: Data
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - deviceToken: The device token.
        public init(deviceToken: Data) { self.deviceToken = deviceToken }
        /// ``ApplicationUserInfoKey/deviceToken``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.deviceToken: .data(deviceToken)] }
        /// Reads the token.
        public init?(userInfo: UserInfo) {
            guard let token = userInfo[ApplicationUserInfoKey.deviceToken]?.dataValue else { return nil }
            self.deviceToken = token
        }
    }

    /// The typed form of ``didFailToRegisterForRemoteNotificationsNotification``.
    public struct DidFailToRegisterForRemoteNotificationsMessage: LifecycleMessage {
        /// ``Application/didFailToRegisterForRemoteNotificationsNotification``.
        public static var name: LifecycleNotification.Name {
            Application.didFailToRegisterForRemoteNotificationsNotification
        }
        /// The error.
        public var error: ApplicationError
        /// Creates the message.
        public init(error: ApplicationError) { self.error = error }
        /// ``ApplicationUserInfoKey/errorCode`` and ``ApplicationUserInfoKey/errorMessage``.
        public var userInfo: UserInfo { error.userInfo }
        /// Reads the error.
        public init?(userInfo: UserInfo) {
            guard let error = ApplicationError(userInfo: userInfo) else { return nil }
            self.error = error
        }
    }

    /// The typed form of ``didReceiveRemoteNotificationNotification``.
    public struct DidReceiveRemoteNotificationMessage: LifecycleMessage {
        /// ``Application/didReceiveRemoteNotificationNotification``.
        public static var name: LifecycleNotification.Name { Application.didReceiveRemoteNotificationNotification }
        /// The payload.
        public var payload: UserInfo
        /// Creates the message.
        public init(payload: UserInfo) { self.payload = payload }
        /// ``ApplicationUserInfoKey/remoteNotification``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.remoteNotification: .dictionary(payload.values)] }
        /// Reads the payload.
        public init?(userInfo: UserInfo) {
            guard let payload = userInfo[ApplicationUserInfoKey.remoteNotification]?.dictionaryValue else { return nil }
            self.payload = UserInfo(payload)
        }
    }

    /// The typed form of ``handleRemoteNotificationActionNotification``.
    public struct HandleRemoteNotificationActionMessage: LifecycleMessage {
        /// ``Application/handleRemoteNotificationActionNotification``.
        public static var name: LifecycleNotification.Name { Application.handleRemoteNotificationActionNotification }
        /// The action's identifier.
        public var identifier: String?
        /// The notification's payload.
        public var payload: UserInfo
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - identifier: The action's identifier.
        ///   - payload: The remote notification's payload the action was chosen on.
        public init(identifier: String?, payload: UserInfo) {
            self.identifier = identifier
            self.payload = payload
        }
        /// ``ApplicationUserInfoKey/actionIdentifier`` and ``ApplicationUserInfoKey/remoteNotification``.
        public var userInfo: UserInfo {
            var info: UserInfo = [ApplicationUserInfoKey.remoteNotification: .dictionary(payload.values)]
            if let identifier { info[ApplicationUserInfoKey.actionIdentifier] = .string(identifier) }
            return info
        }
        /// Reads the identifier and payload.
        public init?(userInfo: UserInfo) {
            guard let payload = userInfo[ApplicationUserInfoKey.remoteNotification]?.dictionaryValue else { return nil }
            self.init(
                identifier: userInfo[ApplicationUserInfoKey.actionIdentifier]?.stringValue, payload: UserInfo(payload))
        }
    }

    /// The typed form of ``didReceiveLocalNotificationNotification``.
    public struct DidReceiveLocalNotificationMessage: LifecycleMessage {
        /// ``Application/didReceiveLocalNotificationNotification``.
        public static var name: LifecycleNotification.Name { Application.didReceiveLocalNotificationNotification }
        /// The notification.
        public var notification: LocalNotification
        /// Creates the message.
        public init(notification: LocalNotification) { self.notification = notification }
        /// ``ApplicationUserInfoKey/localNotification``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.localNotification: notification.propertyList] }
        /// Reads the notification.
        public init?(userInfo: UserInfo) {
            guard
                let notification = userInfo[ApplicationUserInfoKey.localNotification].flatMap(
                    LocalNotification.init(propertyList:))
            else { return nil }
            self.notification = notification
        }
    }

    /// The typed form of ``handleLocalNotificationActionNotification``.
    public struct HandleLocalNotificationActionMessage: LifecycleMessage {
        /// ``Application/handleLocalNotificationActionNotification``.
        public static var name: LifecycleNotification.Name { Application.handleLocalNotificationActionNotification }
        /// The action's identifier.
        public var identifier: String?
        /// The notification.
        public var notification: LocalNotification
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - identifier: The action's identifier.
        ///   - notification: The local notification the action was chosen on.
        public init(identifier: String?, notification: LocalNotification) {
            self.identifier = identifier
            self.notification = notification
        }
        /// ``ApplicationUserInfoKey/actionIdentifier`` and ``ApplicationUserInfoKey/localNotification``.
        public var userInfo: UserInfo {
            var info: UserInfo = [ApplicationUserInfoKey.localNotification: notification.propertyList]
            if let identifier { info[ApplicationUserInfoKey.actionIdentifier] = .string(identifier) }
            return info
        }
        /// Reads the identifier and notification.
        public init?(userInfo: UserInfo) {
            guard
                let notification = userInfo[ApplicationUserInfoKey.localNotification].flatMap(
                    LocalNotification.init(propertyList:))
            else { return nil }
            self.init(
                identifier: userInfo[ApplicationUserInfoKey.actionIdentifier]?.stringValue, notification: notification)
        }
    }
}

extension ApplicationError {
    /// The error under ``ApplicationUserInfoKey/errorCode`` and ``ApplicationUserInfoKey/errorMessage``.
    public var userInfo: UserInfo {
        [
            ApplicationUserInfoKey.errorCode: .string(code.description),
            ApplicationUserInfoKey.errorMessage: .string(message),
        ]
    }

    /// Reads an error from its userInfo form, or `nil` when the code is missing.
    public init?(userInfo: UserInfo) {
        guard let code = userInfo[ApplicationUserInfoKey.errorCode]?.stringValue else { return nil }
        self.init(Code(name: code), userInfo[ApplicationUserInfoKey.errorMessage]?.stringValue ?? "")
    }

    /// Wraps any error: an ``ApplicationError`` as itself, anything else with its description.
    ///
    /// - Parameters:
    ///   - code: The code for errors that are not ``ApplicationError``s.
    public init(wrapping error: any Error, code: Code) {
        if let error = error as? ApplicationError {
            self = error
        } else {
            self.init(code, String(describing: error))
        }
    }
}

extension Application {
    /// `"ApplicationDidRegisterUserNotificationSettingsNotification"` (no UIKit counterpart):
    /// posted after `application(_:didRegister:)`.
    public nonisolated static let didRegisterUserNotificationSettingsNotification = LifecycleNotification.Name(
        "ApplicationDidRegisterUserNotificationSettingsNotification")

    /// The typed form of ``didRegisterUserNotificationSettingsNotification``.
    public struct DidRegisterUserNotificationSettingsMessage: LifecycleMessage {
        /// ``Application/didRegisterUserNotificationSettingsNotification``.
        public static var name: LifecycleNotification.Name {
            Application.didRegisterUserNotificationSettingsNotification
        }
        /// The settings in force.
        public var settings: UserNotificationSettings
        /// Creates the message.
        public init(settings: UserNotificationSettings) { self.settings = settings }
        /// ``ApplicationUserInfoKey/userNotificationSettings``.
        public var userInfo: UserInfo {
            let categories = settings.categories.sorted { $0.identifier < $1.identifier }.map { category in
                UserInfoValue.dictionary([
                    "identifier": .string(category.identifier),
                    "actions": .array(
                        category.actions.map { action in
                            .dictionary([
                                "identifier": .string(action.identifier), "title": .string(action.title),
                                "activationMode": .string(action.activationMode.rawValue),
                                "destructive": .bool(action.isDestructive),
                                "authenticationRequired": .bool(action.isAuthenticationRequired),
                            ])
                        }),
                ])
            }
            return [
                ApplicationUserInfoKey.userNotificationSettings: .dictionary([
                    "types": .int(Int64(settings.types.rawValue)), "categories": .array(categories),
                ])
            ]
        }
        /// Reads the settings.
        public init?(userInfo: UserInfo) {
            guard let entries = userInfo[ApplicationUserInfoKey.userNotificationSettings]?.dictionaryValue,
                let types = entries["types"]?.intValue, let rawTypes = UInt(exactly: types)
            else { return nil }
            var categories: Set<UserNotificationCategory> = []
            for value in entries["categories"]?.arrayValue ?? [] {
                guard let category = value.dictionaryValue, let identifier = category["identifier"]?.stringValue
                else { return nil }
                var actions: [UserNotificationAction] = []
                for actionValue in category["actions"]?.arrayValue ?? [] {
                    guard let action = actionValue.dictionaryValue, let id = action["identifier"]?.stringValue,
                        let title = action["title"]?.stringValue,
                        let mode = action["activationMode"]?.stringValue.flatMap(
                            UserNotificationAction.ActivationMode.init(rawValue:))
                    else { return nil }
                    actions.append(
                        UserNotificationAction(
                            identifier: id, title: title, activationMode: mode,
                            isDestructive: action["destructive"]?.boolValue ?? false,
                            isAuthenticationRequired: action["authenticationRequired"]?.boolValue ?? false))
                }
                categories.insert(UserNotificationCategory(identifier: identifier, actions: actions))
            }
            self.settings = UserNotificationSettings(
                types: UserNotificationType(rawValue: rawTypes), categories: categories)
        }
    }
}
