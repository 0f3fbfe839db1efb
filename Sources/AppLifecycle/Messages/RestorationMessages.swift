import FoundationEssentials

extension Application {
    /// `"ApplicationShouldSaveApplicationStateNotification"` (no UIKit counterpart): posted after the
    /// delegate answered `application(_:shouldSaveApplicationState:)`, with its answer.
    public nonisolated static let shouldSaveApplicationStateNotification = LifecycleNotification.Name(
        "ApplicationShouldSaveApplicationStateNotification")
    /// `"ApplicationShouldRestoreApplicationStateNotification"`: posted after the delegate answered
    /// `application(_:shouldRestoreApplicationState:)`, with its answer.
    public nonisolated static let shouldRestoreApplicationStateNotification = LifecycleNotification.Name(
        "ApplicationShouldRestoreApplicationStateNotification")
    /// `"ApplicationWillEncodeRestorableStateNotification"`: posted after
    /// `application(_:willEncodeRestorableStateWith:)`, with the restorable objects' paths.
    public nonisolated static let willEncodeRestorableStateNotification = LifecycleNotification.Name(
        "ApplicationWillEncodeRestorableStateNotification")
    /// `"ApplicationDidDecodeRestorableStateNotification"`: posted after
    /// `application(_:didDecodeRestorableStateWith:)`, with the restorable objects' paths.
    public nonisolated static let didDecodeRestorableStateNotification = LifecycleNotification.Name(
        "ApplicationDidDecodeRestorableStateNotification")
    /// `"ApplicationRestorableObjectNotification"`: posted after the delegate answered
    /// `application(_:restorableObjectWithIdentifierPath:coder:)`, with the path and whether it gave an object.
    public nonisolated static let restorableObjectNotification = LifecycleNotification.Name(
        "ApplicationRestorableObjectNotification")

    /// The typed form of ``shouldSaveApplicationStateNotification``.
    public struct ShouldSaveApplicationStateMessage: LifecycleMessage {
        /// ``Application/shouldSaveApplicationStateNotification``.
        public static var name: LifecycleNotification.Name { Application.shouldSaveApplicationStateNotification }
        /// The delegate's answer.
        public var result: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - result: The delegate's answer.
        public init(result: Bool) { self.result = result }
        /// ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.result: .bool(result)] }
        /// Reads the answer.
        public init?(userInfo: UserInfo) {
            guard let result = userInfo[ApplicationUserInfoKey.result]?.boolValue else { return nil }
            self.result = result
        }
    }

    /// The typed form of ``shouldRestoreApplicationStateNotification``.
    public struct ShouldRestoreApplicationStateMessage: LifecycleMessage {
        /// ``Application/shouldRestoreApplicationStateNotification``.
        public static var name: LifecycleNotification.Name { Application.shouldRestoreApplicationStateNotification }
        /// The delegate's answer.
        public var result: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - result: The delegate's answer.
        public init(result: Bool) { self.result = result }
        /// ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.result: .bool(result)] }
        /// Reads the answer.
        public init?(userInfo: UserInfo) {
            guard let result = userInfo[ApplicationUserInfoKey.result]?.boolValue else { return nil }
            self.result = result
        }
    }

    /// The typed form of ``willEncodeRestorableStateNotification``.
    public struct WillEncodeRestorableStateMessage: LifecycleMessage {
        /// ``Application/willEncodeRestorableStateNotification``.
        public static var name: LifecycleNotification.Name { Application.willEncodeRestorableStateNotification }
        /// The identifier paths of the restorable objects encoded.
        public var restorableObjectPaths: [[String]]
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - restorableObjectPaths: The identifier paths.
        public init(restorableObjectPaths: [[String]]) { self.restorableObjectPaths = restorableObjectPaths }
        /// ``ApplicationUserInfoKey/restorableObjectPaths``.
        public var userInfo: UserInfo {
            [ApplicationUserInfoKey.restorableObjectPaths: Self.encode(restorableObjectPaths)]
        }
        /// Reads the paths (missing: none).
        public init?(userInfo: UserInfo) {
            guard let paths = Self.decode(userInfo[ApplicationUserInfoKey.restorableObjectPaths]) else { return nil }
            self.restorableObjectPaths = paths
        }
        static func encode(_ paths: [[String]]) -> UserInfoValue {
            .array(paths.map { .array($0.map(UserInfoValue.string)) })
        }
        static func decode(_ value: UserInfoValue?) -> [[String]]? {
            guard let value else { return [] }
            guard let outer = value.arrayValue else { return nil }
            var paths: [[String]] = []
            for path in outer {
                guard let components = path.arrayValue?.map(\.stringValue), !components.contains(nil) else {
                    return nil
                }
                paths.append(components.map { $0! })
            }
            return paths
        }
    }

    /// The typed form of ``didDecodeRestorableStateNotification``.
    public struct DidDecodeRestorableStateMessage: LifecycleMessage {
        /// ``Application/didDecodeRestorableStateNotification``.
        public static var name: LifecycleNotification.Name { Application.didDecodeRestorableStateNotification }
        /// The identifier paths of the restorable objects in the archive.
        public var restorableObjectPaths: [[String]]
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - restorableObjectPaths: The identifier paths.
        public init(restorableObjectPaths: [[String]]) { self.restorableObjectPaths = restorableObjectPaths }
        /// ``ApplicationUserInfoKey/restorableObjectPaths``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.restorableObjectPaths: WillEncodeRestorableStateMessage.encode(
                    restorableObjectPaths)
            ]
        }
        /// Reads the paths (missing: none).
        public init?(userInfo: UserInfo) {
            guard
                let paths = WillEncodeRestorableStateMessage.decode(
                    userInfo[ApplicationUserInfoKey.restorableObjectPaths])
            else { return nil }
            self.restorableObjectPaths = paths
        }
    }

    /// The typed form of ``restorableObjectNotification``.
    public struct RestorableObjectMessage: LifecycleMessage {
        /// ``Application/restorableObjectNotification``.
        public static var name: LifecycleNotification.Name { Application.restorableObjectNotification }
        /// The identifier path asked for.
        public var identifierPath: [String]
        /// Whether the delegate gave an object.
        public var restored: Bool
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - identifierPath: The identifier path asked for.
        ///   - restored: Whether the delegate gave an object.
        public init(identifierPath: [String], restored: Bool) {
            self.identifierPath = identifierPath
            self.restored = restored
        }
        /// ``ApplicationUserInfoKey/identifierPath`` and ``ApplicationUserInfoKey/result``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.identifierPath: .array(identifierPath.map(UserInfoValue.string)),
                ApplicationUserInfoKey.result: .bool(restored),
            ]
        }
        /// Reads the path and result.
        public init?(userInfo: UserInfo) {
            guard
                let components = userInfo[ApplicationUserInfoKey.identifierPath]?.arrayValue?.compactMap(\.stringValue),
                let restored = userInfo[ApplicationUserInfoKey.result]?.boolValue
            else { return nil }
            self.init(identifierPath: components, restored: restored)
        }
    }
}
