/// The `[lifecycle]` section of `lifecycled.conf`: how the windows move apps.
///
/// ```ini
/// [lifecycle]
/// foreground-mode = single   # desktop (default) or single: phones and kiosks
/// freeze-delay = 10          # seconds (0…3600) a program that does not adopt AppLifecycle runs
///                            # on in the background before it is frozen
/// window-source = auto       # auto (from $WAYLAND_DISPLAY, then $DISPLAY), wayland, x11, off
/// orientation-lock = false    # true: the accelerometer turns no app's status bar
/// ```
///
/// Absent keys keep the daemon's configuration (``DaemonConfiguration``).
struct LifecycleSettings: Sendable, Equatable {
    /// Where the window facts come from.
    enum WindowSource: String, Sendable, CaseIterable {
        /// The session's display server: Wayland when `$WAYLAND_DISPLAY` is set, else X11 when
        /// `$DISPLAY` is, else none.
        case auto
        /// The wlroots foreign-toplevel protocol on `$WAYLAND_DISPLAY`.
        case wayland
        /// An EWMH window manager on `$DISPLAY`.
        case x11
        /// No window source: apps move only with launches, banners, `Activate` and the session.
        case off
    }

    /// Without a `[lifecycle]` section: desktop mode, plain programs frozen 10 s after their windows
    /// leave the foreground (as Android and Tizen; Lomiri waits 1.5 s), the session's display server.
    static let defaults = LifecycleSettings(
        foregroundMode: .desktop, freezeDelay: .seconds(10), windowSource: .auto, orientationLocked: false)

    /// The keys of the section.
    static let keys: Set<String> = ["foreground-mode", "freeze-delay", "window-source", "orientation-lock"]

    /// How a visible app without the focus is treated.
    var foregroundMode: ForegroundMode
    /// How long a program that does not adopt AppLifecycle runs on after its windows leave the
    /// foreground before it is frozen; an app that adopts AppLifecycle is frozen when it reports
    /// `suspended` instead.
    var freezeDelay: Duration
    /// Where the window facts come from.
    var windowSource: WindowSource
    /// The user's orientation lock: while set, the accelerometer's readings turn no app's status bar
    /// (the desktops' own locks, GNOME's and Phosh's `orientation-lock` in GSettings, are not read).
    var orientationLocked: Bool

    /// The settings of `section`, over `defaults`.
    ///
    /// - Parameters:
    ///   - section: The `[lifecycle]` keys and values (empty when the file has none).
    ///   - defaults: What an absent key keeps.
    ///   - path: The file, for messages.
    /// - Throws: ``FleetConfiguration/Invalid`` (`setting`) naming the bad value and what is allowed.
    init(section: [String: String], defaults: LifecycleSettings, path: String) throws(FleetConfiguration.Invalid) {
        self = defaults
        if let mode = section["foreground-mode"] {
            guard let value = ForegroundMode(rawValue: mode) else {
                throw FleetConfiguration.Invalid(
                    .setting, "\(path): foreground-mode must be desktop or single, not '\(mode)'")
            }
            foregroundMode = value
        }
        if let delay = section["freeze-delay"] {
            guard let seconds = Int(delay), (0...3600).contains(seconds) else {
                throw FleetConfiguration.Invalid(
                    .setting, "\(path): freeze-delay must be 0…3600 seconds, not '\(delay)'")
            }
            freezeDelay = .seconds(seconds)
        }
        if let source = section["window-source"] {
            guard let value = WindowSource(rawValue: source) else {
                throw FleetConfiguration.Invalid(
                    .setting, "\(path): window-source must be auto, wayland, x11 or off, not '\(source)'")
            }
            windowSource = value
        }
        if let lock = section["orientation-lock"] {
            switch lock {
            case "true", "yes", "on": orientationLocked = true
            case "false", "no", "off": orientationLocked = false
            default:
                throw FleetConfiguration.Invalid(
                    .setting, "\(path): orientation-lock must be true or false, not '\(lock)'")
            }
        }
    }

    /// Settings as given.
    init(foregroundMode: ForegroundMode, freezeDelay: Duration, windowSource: WindowSource, orientationLocked: Bool) {
        self.foregroundMode = foregroundMode
        self.freezeDelay = freezeDelay
        self.windowSource = windowSource
        self.orientationLocked = orientationLocked
    }
}
