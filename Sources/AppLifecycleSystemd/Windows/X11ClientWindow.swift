import Glibc

/// What the EWMH window source knows of one client window of `_NET_CLIENT_LIST`: the properties
/// it reads, each updated by its own `GetProperty` reply.
struct X11ClientWindow: Sendable, Hashable {
    /// The X window id.
    var id: UInt32
    /// `_NET_WM_PID`.
    var processID: pid_t?
    /// `WM_CLASS`'s instance part.
    var instanceName: String?
    /// `WM_CLASS`'s class part.
    var className: String?
    /// `_NET_WM_NAME` (UTF-8).
    var netName: String?
    /// `WM_NAME` (ICCCM; Latin-1 or compound text, read as UTF-8 with replacements).
    var wmName: String?
    /// `_NET_WM_STATE` contains `_NET_WM_STATE_HIDDEN`.
    var isHidden = false
    /// `WM_STATE`'s state is IconicState (3).
    var isIconic = false

    /// ICCCM's `WM_STATE` value for a minimised (iconified) window.
    static let iconicState: UInt32 = 3

    /// Applies one property's value as read from the server.
    ///
    /// - Parameters:
    ///   - atom: Which property.
    ///   - value: Its value (``X11PropertyValue/absent`` when the window has none).
    ///   - hiddenAtom: The connection's `_NET_WM_STATE_HIDDEN` atom.
    mutating func apply(_ atom: X11Atom, _ value: X11PropertyValue, hiddenAtom: UInt32) {
        switch atom {
        case .pid:
            processID = value.firstItem32.flatMap { $0 > 0 && $0 <= UInt32(Int32.max) ? pid_t($0) : nil }
        case .wmClass:
            let parts = value.strings
            instanceName = parts.first.flatMap { $0.isEmpty ? nil : $0 }
            className = parts.dropFirst().first.flatMap { $0.isEmpty ? nil : $0 }
        case .netName:
            netName = value.text
        case .wmName:
            wmName = value.text
        case .netState:
            isHidden = value.items32.contains(hiddenAtom)
        case .wmState:
            isIconic = value.firstItem32 == Self.iconicState
        default:
            break
        }
    }

    /// The window as the source reports it.
    ///
    /// - Parameters:
    ///   - isActivated: Whether it is `_NET_ACTIVE_WINDOW`.
    func topLevelWindow(isActivated: Bool) -> TopLevelWindow {
        TopLevelWindow(
            id: UInt64(id), appID: className, instanceName: instanceName, title: netName ?? wmName,
            processID: processID, isActivated: isActivated, isMinimized: isHidden || isIconic)
    }
}
