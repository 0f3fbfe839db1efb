/// What the window facts make of an app, in the order of the UIKit documents: activated → active;
/// visible but not activated → inactive (``ForegroundMode/desktop``) or background
/// (``ForegroundMode/single``); every window minimised, hidden or closed → background (then
/// suspended when its background time and tasks end, then frozen); activated again → thawed,
/// then active.
///
/// Sleep, lock and session switches still apply on top: the app combines these facts with them
/// (`Application`'s target state), so an activated app on a locked screen is inactive.
struct ForegroundPolicy: Sendable, Hashable {
    /// Whether the app is to be in the foreground, and whether it has the focus there.
    struct Placement: Sendable, Hashable {
        /// `HostEvent.foreground`: foreground (`true`) or background.
        var foreground: Bool
        /// `HostEvent.focused`: one of its windows has the focus.
        var focused: Bool
    }

    /// The treatment of a visible app without the focus.
    var mode: ForegroundMode

    /// Where an app in `state` belongs; `nil` for an app with no window (a service), whose place
    /// the windows do not decide.
    ///
    /// - Parameters:
    ///   - state: What the display server shows of it.
    func placement(for state: AppWindowState) -> Placement? {
        switch state {
        case .noWindow: return nil
        case .activated: return Placement(foreground: true, focused: true)
        case .visible: return Placement(foreground: mode == .desktop, focused: false)
        case .hidden, .closed: return Placement(foreground: false, focused: false)
        }
    }
}
