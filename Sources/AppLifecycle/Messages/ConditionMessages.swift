import FoundationEssentials

extension Application {
    /// `"NSProcessInfoPowerStateDidChangeNotification"`: posted when ``Application/isLowPowerModeEnabled``
    /// changed; no userInfo (read the property), as on iOS.
    public nonisolated static let powerStateDidChangeNotification = LifecycleNotification.Name(
        "NSProcessInfoPowerStateDidChangeNotification")
    /// `"NSProcessInfoThermalStateDidChangeNotification"`: posted when ``Application/thermalState``
    /// changed; no userInfo (read the property), as on iOS.
    public nonisolated static let thermalStateDidChangeNotification = LifecycleNotification.Name(
        "NSProcessInfoThermalStateDidChangeNotification")
    /// `"UIApplicationBackgroundRefreshStatusDidChangeNotification"`: posted when
    /// ``Application/backgroundRefreshStatus`` changed; no userInfo (read the property), as on iOS.
    public nonisolated static let backgroundRefreshStatusDidChangeNotification = LifecycleNotification.Name(
        "UIApplicationBackgroundRefreshStatusDidChangeNotification")

    /// The typed form of ``powerStateDidChangeNotification``.
    public struct PowerStateDidChangeMessage: PayloadFreeLifecycleMessage {
        /// ``Application/powerStateDidChangeNotification``.
        public static var name: LifecycleNotification.Name { Application.powerStateDidChangeNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``thermalStateDidChangeNotification``.
    public struct ThermalStateDidChangeMessage: PayloadFreeLifecycleMessage {
        /// ``Application/thermalStateDidChangeNotification``.
        public static var name: LifecycleNotification.Name { Application.thermalStateDidChangeNotification }
        /// Creates the message.
        public init() {}
    }

    /// The typed form of ``backgroundRefreshStatusDidChangeNotification``.
    public struct BackgroundRefreshStatusDidChangeMessage: PayloadFreeLifecycleMessage {
        /// ``Application/backgroundRefreshStatusDidChangeNotification``.
        public static var name: LifecycleNotification.Name {
            Application.backgroundRefreshStatusDidChangeNotification
        }
        /// Creates the message.
        public init() {}
    }
}
