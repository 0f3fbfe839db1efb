/// Why the X11 window source could not start: no X library, no display, a display it cannot
/// reach, or a window manager that does not keep the EWMH root properties it needs.
///
/// Thrown only by ``EWMHWindowSource/start()``; once started, the source reports losing the
/// display or the window manager as ``WindowSourceUpdate/unavailable(reason:)`` and recovers on
/// its own. The caller logs ``description`` once and runs without an X11 source.
public struct EWMHWindowSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: Sendable, Hashable {
        /// `libxcb.so.1` (Debian's libxcb1) could not be loaded; the message says why.
        case libraryUnavailable
        /// No display was given and `$DISPLAY` is unset or empty.
        case noDisplay
        /// The X server could not be reached or refused the connection; the message has libxcb's reason.
        case cannotConnect
        /// The window manager is missing or not EWMH-compliant: no valid `_NET_SUPPORTING_WM_CHECK`
        /// window, or `_NET_SUPPORTED` lacks `_NET_CLIENT_LIST` or `_NET_ACTIVE_WINDOW`.
        case notEWMHCompliant
        /// ``EWMHWindowSource/stop()`` was called first, or `start()` was called twice.
        case stopped
    }

    /// The kind of failure.
    public let code: Code
    /// A human-readable explanation.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: A human-readable explanation.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// One log line: the message and the code.
    public var description: String { "X11 window source: \(message) [\(code)]" }
}
