/// Why the X11 window source could not start: no X library, no display, a display it cannot
/// reach, or a window manager that does not keep the EWMH root properties it needs.
///
/// Thrown only by ``EWMHWindowSource/start()``; once started, the source reports losing the
/// display or the window manager as ``WindowSourceUpdate/unavailable(reason:)`` and recovers on
/// its own. The caller logs ``description`` once and runs without an X11 source.
public struct EWMHWindowSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure this is: an opaque code over a private enum, compared with the static
    /// members (`error.code == .notEWMHCompliant`), so a new kind is not a breaking change.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case libraryUnavailable = "library-unavailable"
            case noDisplay = "no-display"
            case cannotConnect = "cannot-connect"
            case notEWMHCompliant = "not-ewmh-compliant"
            case stopped
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// `libxcb.so.1` (Debian's libxcb1) could not be loaded; the message says why.
        public static let libraryUnavailable = Code(.libraryUnavailable)
        /// No display was given and `$DISPLAY` is unset or empty.
        public static let noDisplay = Code(.noDisplay)
        /// The X server could not be reached or refused the connection; the message has libxcb's reason.
        public static let cannotConnect = Code(.cannotConnect)
        /// The window manager is missing or not EWMH-compliant: no valid `_NET_SUPPORTING_WM_CHECK`
        /// window, or `_NET_SUPPORTED` lacks `_NET_CLIENT_LIST` or `_NET_ACTIVE_WINDOW`.
        public static let notEWMHCompliant = Code(.notEWMHCompliant)
        /// ``EWMHWindowSource/stop()`` was called first, or `start()` was called twice.
        public static let stopped = Code(.stopped)

        /// The code's name, as in logs: `not-ewmh-compliant`.
        public var description: String { base.rawValue }
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
