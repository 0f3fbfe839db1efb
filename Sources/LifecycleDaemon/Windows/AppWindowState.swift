import AppLifecycleSystemd

/// What the display server shows of one app: the fact the foreground policy turns into its state.
///
/// From the app's windows (``TopLevelWindow``) as the window source reports them, matched to the
/// app by ``WindowOwnership``. An app that has never had a window (a service) stays
/// ``noWindow`` and keeps the lifecycle it had without a window source.
enum AppWindowState: String, Sendable, Hashable {
    /// The app has never had a window while lifecycled watched: a service; the windows decide nothing.
    case noWindow = "no-window"
    /// One of its windows has the focus: the user works in it.
    case activated
    /// A window is shown but another app's has the focus.
    case visible
    /// Every window is minimised or hidden.
    case hidden
    /// It had windows and has none now.
    case closed

    /// The state its current windows give, given the one before (no window at all is ``closed``
    /// once it had one, else ``noWindow``).
    ///
    /// - Parameters:
    ///   - windows: The app's windows now.
    ///   - previous: Its state before this set.
    init(windows: [TopLevelWindow], previous: AppWindowState) {
        if windows.isEmpty {
            self = previous == .noWindow ? .noWindow : .closed
        } else if windows.contains(where: { $0.isActivated && !$0.isMinimized }) {
            self = .activated
        } else if windows.contains(where: { !$0.isMinimized }) {
            self = .visible
        } else {
            self = .hidden
        }
    }
}
