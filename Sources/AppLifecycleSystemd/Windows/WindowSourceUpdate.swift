/// What a window source reports: the whole set of top-level windows after each change the display
/// server made atomically (Wayland's `done`; a batch of X11 property events), or that it lost the
/// display server.
///
/// A whole set, not deltas: a consumer that missed nothing and one that just started see the same
/// thing, and a window that vanished mid-event is simply absent from the next set. Sets are small
/// (the windows of one session).
public enum WindowSourceUpdate: Sendable, Hashable {
    /// Every top-level window the display server has now, in the order it first reported them.
    case windows([TopLevelWindow])
    /// The connection to the display server is gone (it exited, restarted, or refused us). The
    /// consumer keeps acting on the last set; the source reconnects with backoff and reports a
    /// fresh `windows` set when it is back.
    case unavailable(reason: String)
}
