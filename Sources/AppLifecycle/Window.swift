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
