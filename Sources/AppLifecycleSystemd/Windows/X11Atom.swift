/// The X atoms the EWMH window source reads, interned once per connection.
///
/// The raw value is the atom's name on the server. `WM_CLASS`, `WM_NAME` and the type atoms are
/// predefined by the core protocol; interning them too keeps one code path (the server answers
/// with the predefined value).
enum X11Atom: String, CaseIterable, Sendable {
    // Root window properties an EWMH window manager keeps.
    case supportingWMCheck = "_NET_SUPPORTING_WM_CHECK"
    case supported = "_NET_SUPPORTED"
    case activeWindow = "_NET_ACTIVE_WINDOW"
    case clientList = "_NET_CLIENT_LIST"
    // Client window properties.
    case pid = "_NET_WM_PID"
    case wmClass = "WM_CLASS"
    case netName = "_NET_WM_NAME"
    case wmName = "WM_NAME"
    case netState = "_NET_WM_STATE"
    case netStateHidden = "_NET_WM_STATE_HIDDEN"
    case wmState = "WM_STATE"
    // Property types.
    case window = "WINDOW"
    case cardinal = "CARDINAL"
    case atom = "ATOM"
    case string = "STRING"
    case utf8String = "UTF8_STRING"

    /// The client window properties the source follows, each asked for again on its
    /// `PropertyNotify`.
    static let clientProperties: [X11Atom] = [.pid, .wmClass, .netName, .wmName, .netState, .wmState]
}
