import Glibc

/// One top-level window as the display server reports it: the fact lifecycled turns into an app's
/// foreground or background (the compositor decides the foreground, as SpringBoard does on iOS).
///
/// A window source (the wlroots foreign-toplevel protocol, KDE Plasma's window management, an EWMH
/// window manager's root window properties) fills what its protocol gives: wlroots gives no pid,
/// KWin gives the client's, X11 has `_NET_WM_PID` when the client sets it. Matching a window to a
/// hosted app is the daemon's job (the pid inside the app's cgroup first, else ``appID`` against the
/// manifest's id and the desktop entry's `StartupWMClass`).
public struct TopLevelWindow: Sendable, Hashable, CustomStringConvertible {
    /// The source's handle for the window, unique among the windows it reports at one time (the
    /// X11 window id; a counter per Wayland toplevel handle). Not stable across reconnections.
    public var id: UInt64
    /// The application id: Wayland's `app_id` (toolkits set it to the desktop-entry id), X11's
    /// `WM_CLASS` class part. `nil` when the client set none. Made ``printable(_:limit:)`` (255)
    /// however it is set, as are ``instanceName`` and ``title`` (512): sources fill them in place.
    public var appID: String? { didSet { appID = appID.map { Self.printable($0, limit: 255) } } }
    /// X11's `WM_CLASS` instance part (`xterm -name`); `nil` on Wayland.
    public var instanceName: String? { didSet { instanceName = instanceName.map { Self.printable($0, limit: 255) } } }
    /// The window's title, for people reading `lifecyclectl apps` and `monitor`.
    public var title: String? { didSet { title = title.map { Self.printable($0, limit: 512) } } }
    /// The process that owns the window, when the protocol says (`_NET_WM_PID`, KWin's `pid_changed`);
    /// `nil` on wlroots compositors.
    public var processID: pid_t?
    /// The window has the keyboard focus: the user is working in it.
    public var isActivated: Bool
    /// The window is minimised or hidden (Wayland's `minimized` state, X11's
    /// `_NET_WM_STATE_HIDDEN` or `WM_STATE` IconicState): the user does not see it.
    public var isMinimized: Bool

    /// Creates a window fact.
    ///
    /// - Parameters:
    ///   - id: The source's handle for the window.
    ///   - appID: The application id or `WM_CLASS` class.
    ///   - instanceName: The `WM_CLASS` instance.
    ///   - title: The title.
    ///   - processID: The owning process, when known.
    ///   - isActivated: Whether it has the focus.
    ///   - isMinimized: Whether it is minimised or hidden.
    public init(
        id: UInt64, appID: String? = nil, instanceName: String? = nil, title: String? = nil,
        processID: pid_t? = nil, isActivated: Bool = false, isMinimized: Bool = false
    ) {
        self.id = id
        self.appID = appID.map { Self.printable($0, limit: 255) }
        self.instanceName = instanceName.map { Self.printable($0, limit: 255) }
        self.title = title.map { Self.printable($0, limit: 512) }
        self.processID = processID
        self.isActivated = isActivated
        self.isMinimized = isMinimized
    }

    /// `text` as any client's string may safely be shown, logged and sent over D-Bus: control
    /// characters (C0, DEL, C1: a title with escape sequences would rewrite the terminal of whoever
    /// runs `lifecyclectl apps`) become U+FFFD, and it is cut to `limit` characters.
    ///
    /// - Parameters:
    ///   - text: What the window's client set.
    ///   - limit: The most characters kept.
    public static func printable(_ text: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(limit) {
            let value = scalar.value
            let control = value < 0x20 || (0x7F...0x9F).contains(value)
            scalars.append(control ? "\u{FFFD}" : scalar)
        }
        return String(scalars)
    }

    /// `app_id (pid N) activated|visible|minimised "title"`, for logs and `lifecyclectl monitor`.
    public var description: String {
        var text = appID ?? "(no app id)"
        if let processID { text += " (pid \(processID))" }
        text += isActivated ? " activated" : isMinimized ? " minimised" : " visible"
        if let title { text += " \"\(title)\"" }
        return text
    }
}
