/// The identifier of a background task (`UIBackgroundTaskIdentifier`).
public struct BackgroundTaskIdentifier: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The raw identifier.
    public var rawValue: Int
    /// Creates an identifier.
    ///
    /// - Parameters:
    ///   - rawValue: The raw identifier.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The identifier returned when no task could be begun (`UIBackgroundTaskInvalid`).
    public static let invalid = BackgroundTaskIdentifier(rawValue: 0)
    /// `task #<n>`.
    public var description: String { "task #\(rawValue)" }
}

/// The result of a background fetch (`UIBackgroundFetchResult`).
public enum BackgroundFetchResult: String, Sendable, Hashable, Codable, CaseIterable {
    /// New data was downloaded.
    case newData
    /// There was no new data.
    case noData
    /// The fetch failed.
    case failed
}

/// An app-extension point the delegate may refuse (`UIApplication.ExtensionPointIdentifier`).
public struct ExtensionPointIdentifier: RawRepresentable, Sendable, Hashable, Codable {
    /// The raw identifier.
    public var rawValue: String
    /// Creates an identifier.
    ///
    /// - Parameters:
    ///   - rawValue: The raw identifier.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Custom keyboards; on Linux, third-party input methods (IBus/Fcitx engines).
    public static let keyboard = ExtensionPointIdentifier(rawValue: "com.apple.keyboard-service")
}

/// A top-level surface of the app, as the host knows it.
///
/// UIKit's `window` is the `UIWindow` that presents a storyboard. AppLifecycle owns no
/// toolkit, so on Linux a `Window` only identifies a top-level surface (a Wayland
/// `xdg_toplevel`'s app id, or an X11 window id as a string) for the callbacks that name a
/// window, such as ``ApplicationDelegate/application(_:supportedInterfaceOrientationsFor:)``.
/// A delegate that has no window returns `nil` from ``ApplicationDelegate/window``.
public struct Window: Sendable, Hashable, Codable {
    /// The host's identifier for the surface.
    public var identifier: String
    /// Creates a window handle.
    ///
    /// - Parameters:
    ///   - identifier: The host's identifier for the surface.
    public init(identifier: String) { self.identifier = identifier }
}
