import FoundationEssentials

extension Application {
    /// `"UIApplicationWillChangeStatusBarOrientationNotification"`: posted after
    /// `application(_:willChangeStatusBarOrientation:duration:)`; userInfo has the new orientation.
    public nonisolated static let willChangeStatusBarOrientationNotification = LifecycleNotification.Name(
        "UIApplicationWillChangeStatusBarOrientationNotification")
    /// `"UIApplicationDidChangeStatusBarOrientationNotification"`: posted after
    /// `application(_:didChangeStatusBarOrientation:)`; userInfo has the old orientation.
    public nonisolated static let didChangeStatusBarOrientationNotification = LifecycleNotification.Name(
        "UIApplicationDidChangeStatusBarOrientationNotification")
    /// `"UIApplicationWillChangeStatusBarFrameNotification"`: posted after
    /// `application(_:willChangeStatusBarFrame:)`; userInfo has the new frame.
    public nonisolated static let willChangeStatusBarFrameNotification = LifecycleNotification.Name(
        "UIApplicationWillChangeStatusBarFrameNotification")
    /// `"UIApplicationDidChangeStatusBarFrameNotification"`: posted after
    /// `application(_:didChangeStatusBarFrame:)`; userInfo has the old frame.
    public nonisolated static let didChangeStatusBarFrameNotification = LifecycleNotification.Name(
        "UIApplicationDidChangeStatusBarFrameNotification")
    /// `"ApplicationSupportedInterfaceOrientationsNotification"` (no UIKit counterpart): posted
    /// after the delegate answered `application(_:supportedInterfaceOrientationsFor:)`.
    public nonisolated static let supportedInterfaceOrientationsNotification = LifecycleNotification.Name(
        "ApplicationSupportedInterfaceOrientationsNotification")

    /// The typed form of ``willChangeStatusBarOrientationNotification``.
    public struct WillChangeStatusBarOrientationMessage: LifecycleMessage {
        /// ``Application/willChangeStatusBarOrientationNotification``.
        public static var name: LifecycleNotification.Name { Application.willChangeStatusBarOrientationNotification }
        /// The new orientation.
        public var orientation: InterfaceOrientation
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - orientation: The new orientation.
        public init(orientation: InterfaceOrientation) { self.orientation = orientation }
        /// ``ApplicationUserInfoKey/statusBarOrientation``.
        public var userInfo: UserInfo {
            [ApplicationUserInfoKey.statusBarOrientation: .int(Int64(orientation.rawValue))]
        }
        /// Reads the orientation.
        public init?(userInfo: UserInfo) {
            guard let orientation = Self.orientation(in: userInfo) else { return nil }
            self.orientation = orientation
        }
        static func orientation(in userInfo: UserInfo) -> InterfaceOrientation? {
            userInfo[ApplicationUserInfoKey.statusBarOrientation]?.intValue.flatMap {
                InterfaceOrientation(rawValue: Int($0))
            }
        }
    }

    /// The typed form of ``didChangeStatusBarOrientationNotification``.
    public struct DidChangeStatusBarOrientationMessage: LifecycleMessage {
        /// ``Application/didChangeStatusBarOrientationNotification``.
        public static var name: LifecycleNotification.Name { Application.didChangeStatusBarOrientationNotification }
        /// The previous orientation.
        public var previousOrientation: InterfaceOrientation
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - previousOrientation: The previous orientation.
        public init(previousOrientation: InterfaceOrientation) { self.previousOrientation = previousOrientation }
        /// ``ApplicationUserInfoKey/statusBarOrientation``.
        public var userInfo: UserInfo {
            [ApplicationUserInfoKey.statusBarOrientation: .int(Int64(previousOrientation.rawValue))]
        }
        /// Reads the orientation.
        public init?(userInfo: UserInfo) {
            guard let orientation = WillChangeStatusBarOrientationMessage.orientation(in: userInfo) else { return nil }
            self.previousOrientation = orientation
        }
    }

    /// The typed form of ``willChangeStatusBarFrameNotification``.
    public struct WillChangeStatusBarFrameMessage: LifecycleMessage {
        /// ``Application/willChangeStatusBarFrameNotification``.
        public static var name: LifecycleNotification.Name { Application.willChangeStatusBarFrameNotification }
        /// The new frame.
        public var frame: Rect
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - frame: The new frame.
        public init(frame: Rect) { self.frame = frame }
        /// ``ApplicationUserInfoKey/statusBarFrame``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.statusBarFrame: frame.propertyList] }
        /// Reads the frame.
        public init?(userInfo: UserInfo) {
            guard let frame = userInfo[ApplicationUserInfoKey.statusBarFrame].flatMap(Rect.init(propertyList:)) else {
                return nil
            }
            self.frame = frame
        }
    }

    /// The typed form of ``didChangeStatusBarFrameNotification``.
    public struct DidChangeStatusBarFrameMessage: LifecycleMessage {
        /// ``Application/didChangeStatusBarFrameNotification``.
        public static var name: LifecycleNotification.Name { Application.didChangeStatusBarFrameNotification }
        /// The previous frame.
        public var previousFrame: Rect
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - previousFrame: The previous frame.
        public init(previousFrame: Rect) { self.previousFrame = previousFrame }
        /// ``ApplicationUserInfoKey/statusBarFrame``.
        public var userInfo: UserInfo { [ApplicationUserInfoKey.statusBarFrame: previousFrame.propertyList] }
        /// Reads the frame.
        public init?(userInfo: UserInfo) {
            guard let frame = userInfo[ApplicationUserInfoKey.statusBarFrame].flatMap(Rect.init(propertyList:)) else {
                return nil
            }
            self.previousFrame = frame
        }
    }

    /// The typed form of ``supportedInterfaceOrientationsNotification``.
    public struct SupportedInterfaceOrientationsMessage: LifecycleMessage {
        /// ``Application/supportedInterfaceOrientationsNotification``.
        public static var name: LifecycleNotification.Name { Application.supportedInterfaceOrientationsNotification }
        /// The window asked about.
        public var window: Window?
        /// The delegate's answer.
        public var orientations: InterfaceOrientationMask
        /// Creates the message.
        ///
        /// - Parameters:
        ///   - window: The window asked about.
        ///   - orientations: The delegate's answer.
        public init(window: Window?, orientations: InterfaceOrientationMask) {
            self.window = window
            self.orientations = orientations
        }
        /// ``ApplicationUserInfoKey/window`` (when there is one) and ``ApplicationUserInfoKey/interfaceOrientations``.
        public var userInfo: UserInfo {
            var info: UserInfo = [ApplicationUserInfoKey.interfaceOrientations: .int(Int64(orientations.rawValue))]
            if let window { info[ApplicationUserInfoKey.window] = .string(window.identifier) }
            return info
        }
        /// Reads the answer and window.
        public init?(userInfo: UserInfo) {
            guard let raw = userInfo[ApplicationUserInfoKey.interfaceOrientations]?.intValue, raw >= 0 else {
                return nil
            }
            self.orientations = InterfaceOrientationMask(rawValue: UInt(raw))
            self.window = userInfo[ApplicationUserInfoKey.window]?.stringValue.map(Window.init(identifier:))
        }
    }
}
