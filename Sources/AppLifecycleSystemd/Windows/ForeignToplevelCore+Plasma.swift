internal import CWayland
import Glibc

/// KDE Plasma's window management, inside `wl_display_dispatch_pending` like the rest of the core.
///
/// The manager announces each window by a uuid (`window_with_uuid`, version 13 on; a numeric id
/// with `window` before), and the client asks for it (`get_window_by_uuid`, `get_window`): the
/// window's proxy then receives its title, app id, pid and state, ended by `initial_state`. From
/// then on each event is the window's new value at once (the protocol has no `done`); the core
/// reports after the whole read, so a focus moving from one window to another (two `state_changed`
/// events KWin sends in one flush) is one report. `unmapped` ends a window.
extension ForeignToplevelCore {
    /// Asks the compositor to set the `flags` bits of window `id`'s state to those of `state`
    /// (`set_state`), and sends it at once. The window's new state arrives as its events.
    ///
    /// - Returns: `false` if no reported window has that id (gone, or not yet described).
    func plasmaSetState(windowID id: UInt64, flags: UInt32, state: UInt32) -> Bool {
        loop.assertInEventLoop()
        guard windowProtocol == .plasmaWindowManagement, phase == .running, let f = functions,
            let proxy = toplevels.first(where: { $0.value.current?.id == id })?.key
        else { return false }
        cwayland_plasma_window_set_state(f, proxy, flags, state)
        flushRequests()
        return true
    }

    func plasmaManagementEvent(opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>) {
        guard let f = functions, let manager else { return }
        let byUUID = boundVersion >= UInt32(CWAYLAND_PLASMA_WINDOW_WITH_UUID_VERSION)
        let window: OpaquePointer?
        switch opcode {
        case UInt32(CWAYLAND_PLASMA_MANAGEMENT_WINDOW_WITH_UUID.rawValue) where byUUID:
            guard let uuid = arguments[1].s else { return }
            window = cwayland_plasma_get_window_by_uuid(f, manager, uuid)
        case UInt32(CWAYLAND_PLASMA_MANAGEMENT_WINDOW.rawValue) where !byUUID:
            // Before version 13 the numeric id is the only name (from 13 on KWin sends `window_with_uuid` instead).
            window = cwayland_plasma_get_window(f, manager, arguments[0].u)
        default:
            // show_desktop_changed, the stacking order: not part of the window fact.
            return
        }
        guard let window else {
            failure = lostError(during: "asking for a window")
            return
        }
        _ = f.pointee.proxy_add_dispatcher(
            window, foreignToplevelDispatcher, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), nil)
        toplevels[window] = Toplevel(pending: TopLevelWindow(id: nextWindowID), current: nil)
        nextWindowID += 1
    }

    func plasmaWindowEvent(_ proxy: OpaquePointer, opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>) {
        guard var toplevel = toplevels[proxy] else { return }
        switch opcode {
        case UInt32(CWAYLAND_PLASMA_WINDOW_TITLE_CHANGED.rawValue):
            toplevel.pending.title = arguments[0].s.map { String(cString: $0) }
        case UInt32(CWAYLAND_PLASMA_WINDOW_APP_ID_CHANGED.rawValue):
            toplevel.pending.appID = arguments[0].s.map { String(cString: $0) }
        case UInt32(CWAYLAND_PLASMA_WINDOW_PID_CHANGED.rawValue):
            let pid = pid_t(bitPattern: arguments[0].u)
            toplevel.pending.processID = pid > 0 ? pid : nil
        case UInt32(CWAYLAND_PLASMA_WINDOW_STATE_CHANGED.rawValue):
            let flags = arguments[0].u
            toplevel.pending.isActivated = flags & UInt32(CWAYLAND_PLASMA_STATE_ACTIVE.rawValue) != 0
            toplevel.pending.isMinimized = flags & UInt32(CWAYLAND_PLASMA_STATE_MINIMIZED.rawValue) != 0
        case UInt32(CWAYLAND_PLASMA_WINDOW_INITIAL_STATE.rawValue):
            toplevel.current = toplevel.pending
        case UInt32(CWAYLAND_PLASMA_WINDOW_UNMAPPED.rawValue):
            // The window is gone on the compositor's side: destroy ours; no event names it again.
            toplevels[proxy] = nil
            if let f = functions { cwayland_plasma_window_destroy(f, proxy) }
            changed = true
            return
        default:
            // Geometry, icons, virtual desktops, activities, the parent, the application menu.
            return
        }
        // After `initial_state`, every change is the window's state at once.
        if toplevel.current != nil {
            toplevel.current = toplevel.pending
            changed = true
        }
        toplevels[proxy] = toplevel
    }
}
