/// A source of the session's top-level windows: what the display server says the user sees.
///
/// `EWMHWindowSource` (X11, any EWMH window manager), `ForeignToplevelWindowSource` (Wayland,
/// wlroots compositors) and `PlasmaWindowSource` (Wayland, KDE's KWin) all run on an `EventLoop` of
/// the caller's and report on ``updates``.
public protocol WindowSource: AnyObject, Sendable {
    /// Whole window sets after each change, and `unavailable` while the display server is gone;
    /// ends after ``stop()``.
    var updates: AsyncStream<WindowSourceUpdate> { get }

    /// Connects and returns once the first set is on ``updates``.
    ///
    /// - Throws: Why there is no source (no display, the server lacks the protocol, …); the
    ///   source is stopped then.
    func start() async throws

    /// Disconnects and ends ``updates``; returns at once.
    func stop()
}

extension EWMHWindowSource: WindowSource {}

extension ForeignToplevelWindowSource: WindowSource {}

extension PlasmaWindowSource: WindowSource {}
