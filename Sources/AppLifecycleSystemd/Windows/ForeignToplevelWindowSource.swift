import Logging
import SystemdBus

/// The windows of a wlroots-based Wayland compositor (sway, phoc, wayfire, labwc, Hyprland), read
/// through its `zwlr_foreign_toplevel_manager_v1` global (wlr-protocols' foreign-toplevel management,
/// version 3), as whole sets of ``TopLevelWindow``s.
///
/// It runs on a SystemdBus `EventLoop` and never creates a thread: the Wayland socket is an fd watch
/// of that loop, read with libwayland-client's `prepare_read` / `read_events` / `dispatch_pending`,
/// and the requests it queues are flushed from the same thread (the socket is watched for writing
/// only while it is full). Nothing polls: a report is the compositor's own event.
///
/// ```swift
/// let source = ForeignToplevelWindowSource(
///     socketPath: try ForeignToplevelWindowSource.socketPath(environment: environment),
///     loop: loop, logger: logger)
/// try await source.start()  // throws HostSourceError: no compositor, no foreign-toplevel manager
/// for await update in source.updates { … }  // .windows([…]) after each change, .unavailable while gone
/// source.stop()
/// ```
///
/// ## What it reports
///
/// ``start()`` returns once the compositor's existing windows are known and reported as the first
/// ``WindowSourceUpdate/windows(_:)``, possibly empty. After that, each batch of events read from the
/// socket that completed a window's change (its `done`) or closed one (`closed`) is reported as the
/// whole set, if the set differs from the one reported last: a focus moving from one window to
/// another, which the compositor sends as two `state` events and two `done`s in one flush, is one
/// report in which exactly one window is activated. A window is reported from its first `done` on;
/// title, app id and state changes apply at `done`, as the protocol says. A window that closes in
/// the middle of a batch is simply absent.
///
/// What a compositor says differs: sway 1.7 never reports `minimized` (it has no minimising and
/// ignores `set_minimized`), and a window it moved to the scratchpad or that is on a workspace not
/// shown stays in the set, on its output, only no longer activated (seen against sway 1.7 and
/// asserted by the tests).
///
/// ## Losing the compositor
///
/// When the compositor goes away (it exits, crashes or restarts, or withdraws the manager with
/// `finished`), the source reports ``WindowSourceUpdate/unavailable(reason:)`` once and tries again
/// on a timer of the loop with the delays of `reconnectBackoff`; once connected again it reports a
/// fresh set (window ids are not reused). Failed attempts in between are logged at debug level.
///
/// libwayland-client is loaded (`dlopen`) when the first source starts, not linked: a process that
/// never follows a Wayland session does not map it.
public final class ForeignToplevelWindowSource: Sendable {
    /// The name in ``HostSourceError/source`` and the logs: `"wayland-foreign-toplevel"`.
    public static let sourceName = "wayland-foreign-toplevel"
    /// The global this source binds.
    public static let managerInterface = "zwlr_foreign_toplevel_manager_v1"
    /// The reconnect delays when none are given: 100 ms doubling up to 5 s, so a compositor that
    /// restarts is followed again within about its own start-up time.
    public static let defaultReconnectBackoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5))

    /// The compositor's socket.
    public let socketPath: String
    /// The loop whose thread makes every libwayland-client call of this source.
    public let loop: EventLoop
    /// The reports, for one consumer: the whole set after each change, `unavailable` while the
    /// compositor is gone. It finishes when the source stops (or its start failed). The newest 16
    /// are buffered: a consumer that falls behind loses older sets, never the latest.
    public let updates: AsyncStream<WindowSourceUpdate>
    private let core: LoopBoundBox<ForeignToplevelCore>

    /// Creates a source for the compositor listening on `socketPath`; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - socketPath: The compositor's Unix socket (see ``socketPath(environment:)``).
    ///   - loop: The event loop to run on (the caller owns it and shuts it down after stopping this).
    ///   - reconnectBackoff: The delays between reconnection attempts after the compositor went away.
    ///   - answerTimeout: How long a compositor that accepted the connection may take to list its
    ///     windows before the attempt counts as failed (a stopped or hung compositor).
    ///   - logger: Where the source logs (info: connected, lost; debug: each change and attempt).
    public init(
        socketPath: String, loop: EventLoop, reconnectBackoff: Backoff = defaultReconnectBackoff,
        answerTimeout: Duration = .seconds(5),
        logger: Logger
    ) {
        self.socketPath = socketPath
        self.loop = loop
        (core, updates) = ForeignToplevelCore.make(
            socketPath: socketPath, windowProtocol: .wlrForeignToplevel, loop: loop, reconnectBackoff: reconnectBackoff,
            answerTimeout: answerTimeout, logger: logger, sourceName: Self.sourceName)
    }

    deinit {
        ForeignToplevelCore.stop(core, on: loop)
    }

    /// The compositor's socket for a session's environment: `$WAYLAND_DISPLAY` as an absolute path,
    /// or relative to `$XDG_RUNTIME_DIR`, as libwayland-client resolves it.
    ///
    /// - Parameters:
    ///   - environment: The session's environment.
    /// - Returns: The socket's path.
    /// - Throws: ``HostSourceError`` with ``HostSourceError/Code/notFound`` if `$WAYLAND_DISPLAY` is
    ///   unset or empty (no Wayland session), ``HostSourceError/Code/invalidConfiguration`` if it is
    ///   relative and `$XDG_RUNTIME_DIR` is unset or not absolute.
    public static func socketPath(environment: [String: String]) throws(HostSourceError) -> String {
        guard let display = environment["WAYLAND_DISPLAY"], !display.isEmpty else {
            throw HostSourceError(code: .notFound, source: sourceName, message: "WAYLAND_DISPLAY is not set")
        }
        if display.hasPrefix("/") { return display }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            throw HostSourceError(
                code: .invalidConfiguration, source: sourceName,
                message: "WAYLAND_DISPLAY=\(display) is relative and XDG_RUNTIME_DIR is not an absolute path")
        }
        return runtime.hasSuffix("/") ? runtime + display : runtime + "/" + display
    }

    /// Connects, binds the compositor's foreign-toplevel manager, and reports its windows.
    ///
    /// Returns once the first ``WindowSourceUpdate/windows(_:)`` is in ``updates``; from then on the
    /// source follows the compositor, and reconnects, until ``stop()``.
    ///
    /// - Throws: ``HostSourceError``, and then there is no source (``updates`` finishes, nothing is
    ///   retried): ``HostSourceError/Code/unsupported`` if the compositor does not offer
    ///   `zwlr_foreign_toplevel_manager_v1` or libwayland-client is not installed,
    ///   ``HostSourceError/Code/notFound`` or ``HostSourceError/Code/permissionDenied`` if the socket
    ///   cannot be connected to, ``HostSourceError/Code/sourceGone`` if the compositor hung up during
    ///   the start, did not list its windows within `answerTimeout`, or ``stop()`` came first, ``HostSourceError/Code/invalidArgument`` for a second start.
    public func start() async throws(HostSourceError) {
        try await ForeignToplevelCore.start(core, on: loop, sourceName: Self.sourceName)
    }

    /// Disconnects and ends the source; ``updates`` finishes. Returns at once; safe to call more than once.
    public func stop() {
        ForeignToplevelCore.stop(core, on: loop)
    }
}
