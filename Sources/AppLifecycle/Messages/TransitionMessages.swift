import FoundationEssentials

extension Application {
    /// `"UIApplicationDidFinishLaunchingNotification"`: posted shortly after
    /// `application(_:didFinishLaunchingWithOptions:)` returns; its userInfo is the launch options.
    public nonisolated static let didFinishLaunchingNotification = LifecycleNotification.Name(
        "UIApplicationDidFinishLaunchingNotification")
    /// `"UIApplicationDidBecomeActiveNotification"`: posted after `applicationDidBecomeActive(_:)`.
    public nonisolated static let didBecomeActiveNotification = LifecycleNotification.Name(
        "UIApplicationDidBecomeActiveNotification")
    /// `"UIApplicationWillResignActiveNotification"`: posted after `applicationWillResignActive(_:)`.
    public nonisolated static let willResignActiveNotification = LifecycleNotification.Name(
        "UIApplicationWillResignActiveNotification")
    /// `"UIApplicationDidEnterBackgroundNotification"`: posted after `applicationDidEnterBackground(_:)`.
    public nonisolated static let didEnterBackgroundNotification = LifecycleNotification.Name(
        "UIApplicationDidEnterBackgroundNotification")
    /// `"UIApplicationWillEnterForegroundNotification"`: posted shortly *before* `applicationWillEnterForeground(_:)`.
    public nonisolated static let willEnterForegroundNotification = LifecycleNotification.Name(
        "UIApplicationWillEnterForegroundNotification")
    /// `"UIApplicationWillTerminateNotification"`: posted after `applicationWillTerminate(_:)`.
    public nonisolated static let willTerminateNotification = LifecycleNotification.Name(
        "UIApplicationWillTerminateNotification")
    /// `"UIApplicationDidReceiveMemoryWarningNotification"`: posted after `applicationDidReceiveMemoryWarning(_:)`.
    public nonisolated static let didReceiveMemoryWarningNotification = LifecycleNotification.Name(
        "UIApplicationDidReceiveMemoryWarningNotification")
    /// `"UIApplicationSignificantTimeChangeNotification"`: posted *before* `applicationSignificantTimeChange(_:)`.
    public nonisolated static let significantTimeChangeNotification = LifecycleNotification.Name(
        "UIApplicationSignificantTimeChangeNotification")
    /// `"UIApplicationProtectedDataWillBecomeUnavailable"` (UIKit's raw string has no `Notification`
    /// suffix): posted after `applicationProtectedDataWillBecomeUnavailable(_:)`.
    public nonisolated static let protectedDataWillBecomeUnavailableNotification = LifecycleNotification.Name(
        "UIApplicationProtectedDataWillBecomeUnavailable")
    /// `"UIApplicationProtectedDataDidBecomeAvailable"`: posted after `applicationProtectedDataDidBecomeAvailable(_:)`.
    public nonisolated static let protectedDataDidBecomeAvailableNotification = LifecycleNotification.Name(
        "UIApplicationProtectedDataDidBecomeAvailable")
    /// `"ApplicationWillFinishLaunchingNotification"` (no UIKit counterpart): posted after
    /// `application(_:willFinishLaunchingWithOptions:)`; its userInfo is the launch options.
    public nonisolated static let willFinishLaunchingNotification = LifecycleNotification.Name(
        "ApplicationWillFinishLaunchingNotification")
    /// `"ApplicationStateDidChangeNotification"` (no UIKit counterpart): posted whenever
    /// ``Application/applicationState`` changes, including to suspended and not running.
    public nonisolated static let stateDidChangeNotification = LifecycleNotification.Name(
        "ApplicationStateDidChangeNotification")

    /// The typed form of ``didFinishLaunchingNotification``.
    public struct DidFinishLaunchingMessage: LifecycleMessage {
        /// ``Application/didFinishLaunchingNotification``.
        public static var name: LifecycleNotification.Name { Application.didFinishLaunchingNotification }
        /// The launch options.
        public var launchOptions: LaunchOptions
        /// Creates the message.
        public init(launchOptions: LaunchOptions) { self.launchOptions = launchOptions }
        /// The launch options under their raw keys.
        public var userInfo: UserInfo { launchOptions.userInfo }
        /// Reads the launch options from a userInfo (any userInfo is valid launch options).
        public init?(userInfo: UserInfo) { self.launchOptions = LaunchOptions(userInfo: userInfo) }
    }

    /// The typed form of ``willFinishLaunchingNotification``.
    public struct WillFinishLaunchingMessage: LifecycleMessage {
        /// ``Application/willFinishLaunchingNotification``.
        public static var name: LifecycleNotification.Name { Application.willFinishLaunchingNotification }
        /// The launch options.
        public var launchOptions: LaunchOptions
        /// Creates the message.
        public init(launchOptions: LaunchOptions) { self.launchOptions = launchOptions }
        /// The launch options under their raw keys.
        public var userInfo: UserInfo { launchOptions.userInfo }
        /// Reads the launch options from a userInfo.
        public init?(userInfo: UserInfo) { self.launchOptions = LaunchOptions(userInfo: userInfo) }
    }

    /// The typed form of ``didBecomeActiveNotification``.
    public struct DidBecomeActiveMessage: PayloadFreeLifecycleMessage {
        /// ``Application/didBecomeActiveNotification``.
        public static var name: LifecycleNotification.Name { Application.didBecomeActiveNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``willResignActiveNotification``.
    public struct WillResignActiveMessage: PayloadFreeLifecycleMessage {
        /// ``Application/willResignActiveNotification``.
        public static var name: LifecycleNotification.Name { Application.willResignActiveNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``didEnterBackgroundNotification``.
    public struct DidEnterBackgroundMessage: PayloadFreeLifecycleMessage {
        /// ``Application/didEnterBackgroundNotification``.
        public static var name: LifecycleNotification.Name { Application.didEnterBackgroundNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``willEnterForegroundNotification``.
    public struct WillEnterForegroundMessage: PayloadFreeLifecycleMessage {
        /// ``Application/willEnterForegroundNotification``.
        public static var name: LifecycleNotification.Name { Application.willEnterForegroundNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``willTerminateNotification``.
    public struct WillTerminateMessage: PayloadFreeLifecycleMessage {
        /// ``Application/willTerminateNotification``.
        public static var name: LifecycleNotification.Name { Application.willTerminateNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``protectedDataWillBecomeUnavailableNotification``.
    public struct ProtectedDataWillBecomeUnavailableMessage: PayloadFreeLifecycleMessage {
        /// ``Application/protectedDataWillBecomeUnavailableNotification``.
        public static var name: LifecycleNotification.Name {
            Application.protectedDataWillBecomeUnavailableNotification
        }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``protectedDataDidBecomeAvailableNotification``.
    public struct ProtectedDataDidBecomeAvailableMessage: PayloadFreeLifecycleMessage {
        /// ``Application/protectedDataDidBecomeAvailableNotification``.
        public static var name: LifecycleNotification.Name { Application.protectedDataDidBecomeAvailableNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``didReceiveMemoryWarningNotification``, with the warning's level and source.
    public struct DidReceiveMemoryWarningMessage: LifecycleMessage {
        /// ``Application/didReceiveMemoryWarningNotification``.
        public static var name: LifecycleNotification.Name { Application.didReceiveMemoryWarningNotification }
        /// The warning.
        public var warning: MemoryWarning
        /// Creates the message.
        public init(warning: MemoryWarning) { self.warning = warning }
        /// ``ApplicationUserInfoKey/memoryWarningLevel`` and ``ApplicationUserInfoKey/memoryWarningSource``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.memoryWarningLevel: .string(warning.level.rawValue),
                ApplicationUserInfoKey.memoryWarningSource: .string(warning.source),
            ]
        }
        /// Reads the level and source; a missing level reads as `.low` (UIKit posts no level).
        public init?(userInfo: UserInfo) {
            let level: MemoryWarning.Level
            if let raw = userInfo[ApplicationUserInfoKey.memoryWarningLevel] {
                guard let parsed = raw.stringValue.flatMap(MemoryWarning.Level.init(rawValue:)) else { return nil }
                level = parsed
            } else {
                level = .low
            }
            self.warning = MemoryWarning(
                level: level, source: userInfo[ApplicationUserInfoKey.memoryWarningSource]?.stringValue ?? "unknown")
        }
    }

    /// The typed form of ``significantTimeChangeNotification``, with the reason.
    public struct SignificantTimeChangeMessage: LifecycleMessage {
        /// ``Application/significantTimeChangeNotification``.
        public static var name: LifecycleNotification.Name { Application.significantTimeChangeNotification }
        /// The change.
        public var change: SignificantTimeChange
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - change: The change.
        public init(change: SignificantTimeChange) { self.change = change }
        /// ``ApplicationUserInfoKey/significantTimeChangeReason`` and, when known, ``ApplicationUserInfoKey/timeZone``.
        public var userInfo: UserInfo {
            var info: UserInfo = [ApplicationUserInfoKey.significantTimeChangeReason: .string(change.reason.rawValue)]
            if let zone = change.timeZoneIdentifier { info[ApplicationUserInfoKey.timeZone] = .string(zone) }
            return info
        }
        /// Reads the reason (missing: `.clockSet`, as UIKit posts none) and the time zone.
        public init?(userInfo: UserInfo) {
            let reason: SignificantTimeChange.Reason
            if let raw = userInfo[ApplicationUserInfoKey.significantTimeChangeReason] {
                guard let parsed = raw.stringValue.flatMap(SignificantTimeChange.Reason.init(rawValue:)) else {
                    return nil
                }
                reason = parsed
            } else {
                reason = .clockSet
            }
            self.change = SignificantTimeChange(
                reason: reason, timeZoneIdentifier: userInfo[ApplicationUserInfoKey.timeZone]?.stringValue)
        }
    }

    /// The typed form of ``stateDidChangeNotification``.
    public struct StateDidChangeMessage: LifecycleMessage {
        /// ``Application/stateDidChangeNotification``.
        public static var name: LifecycleNotification.Name { Application.stateDidChangeNotification }
        /// The state before.
        public var previousState: ApplicationState
        /// The state after.
        public var state: ApplicationState
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - previousState: The state before.
        ///   - state: The state after.
        public init(previousState: ApplicationState, state: ApplicationState) {
            self.previousState = previousState
            self.state = state
        }
        /// ``ApplicationUserInfoKey/previousState`` and ``ApplicationUserInfoKey/state``.
        public var userInfo: UserInfo {
            [
                ApplicationUserInfoKey.previousState: .string(previousState.rawValue),
                ApplicationUserInfoKey.state: .string(state.rawValue),
            ]
        }
        /// Reads both states; `nil` when either is missing or unknown.
        public init?(userInfo: UserInfo) {
            guard
                let previous = userInfo[ApplicationUserInfoKey.previousState]?.stringValue.flatMap(
                    ApplicationState.init(rawValue:)),
                let state = userInfo[ApplicationUserInfoKey.state]?.stringValue.flatMap(
                    ApplicationState.init(rawValue:))
            else { return nil }
            self.init(previousState: previous, state: state)
        }
    }
}
