internal import CWayland
import Glibc
import Logging
import SystemdBus

/// The windows of KDE Plasma's compositor, KWin, read through its `org_kde_plasma_window_management`
/// global (plasma-wayland-protocols' window management, version 16: what plasmashell's task manager
/// reads), as whole sets of ``TopLevelWindow``s with each window's pid.
///
/// It works as ``ForeignToplevelWindowSource`` does (the same connection, fd watch, reconnection and
/// reports, on a SystemdBus `EventLoop`, no thread, no polling); only the protocol differs. A window
/// is announced by a uuid and asked for (`get_window_by_uuid`; by its numeric id before version 13);
/// it is reported from its `initial_state` on, with its app id, pid, title, and `active` and
/// `minimized` state bits. A report is made after the whole read, and never while an announced
/// window still lacks its `initial_state`: a focus moving from one window to another (two
/// `state_changed` events in one flush, or a new window that takes the focus) is one report in
/// which exactly one window is activated.
///
/// ## KWin withholds the global
///
/// KWin (5.27) offers `org_kde_plasma_window_management` only to a program whose desktop file lists
/// it in `X-KDE-Wayland-Interfaces` and whose `Exec` is that program's real path (`/proc/PID/exe`);
/// to others the global is simply not listed. ``start()`` then throws
/// ``HostSourceError/Code/permissionDenied`` naming the desktop file to install
/// (``desktopFileName``, shipped in the package with `Exec=/usr/bin/lifecycled`). KWin reads new
/// desktop files while it runs: the next start (or reconnection) is offered the global.
///
/// ```swift
/// let source = PlasmaWindowSource(
///     socketPath: try ForeignToplevelWindowSource.socketPath(environment: environment),
///     loop: loop, logger: logger)
/// try await source.start()  // throws HostSourceError: no compositor, not KWin, no desktop file
/// for await update in source.updates { … }
/// source.stop()
/// ```
public final class PlasmaWindowSource: Sendable {
    /// The name in ``HostSourceError/source`` and the logs: `"wayland-plasma"`.
    public static let sourceName = "wayland-plasma"
    /// The global this source binds.
    public static let managementInterface = "org_kde_plasma_window_management"
    /// The desktop file that makes KWin offer ``managementInterface`` to lifecycled, installed in
    /// `/usr/share/applications` (the package's `dist/applications`).
    public static let desktopFileName = "org.applifecycle.lifecycled.desktop"

    /// The compositor's socket.
    public let socketPath: String
    /// The loop whose thread makes every libwayland-client call of this source.
    public let loop: EventLoop
    /// The reports, for one consumer, as ``ForeignToplevelWindowSource/updates``.
    public let updates: AsyncStream<WindowSourceUpdate>
    private let core: LoopBoundBox<ForeignToplevelCore>

    /// Creates a source for the compositor listening on `socketPath`; nothing happens until ``start()``.
    ///
    /// - Parameters:
    ///   - socketPath: The compositor's Unix socket (``ForeignToplevelWindowSource/socketPath(environment:)``).
    ///   - loop: The event loop to run on (the caller owns it and shuts it down after stopping this).
    ///   - reconnectBackoff: The delays between reconnection attempts after the compositor went away.
    ///   - answerTimeout: How long a compositor that accepted the connection may take to list its
    ///     windows before the attempt counts as failed (a stopped or hung compositor).
    ///   - logger: Where the source logs (info: connected, lost; debug: each change and attempt).
    public init(
        socketPath: String, loop: EventLoop,
        reconnectBackoff: Backoff = ForeignToplevelWindowSource.defaultReconnectBackoff,
        answerTimeout: Duration = .seconds(5), logger: Logger
    ) {
        self.socketPath = socketPath
        self.loop = loop
        (core, updates) = ForeignToplevelCore.make(
            socketPath: socketPath, windowProtocol: .plasmaWindowManagement, loop: loop,
            reconnectBackoff: reconnectBackoff,
            answerTimeout: answerTimeout, logger: logger, sourceName: Self.sourceName)
    }

    deinit {
        ForeignToplevelCore.stop(core, on: loop)
    }

    /// Connects, binds KWin's window management, and reports its windows.
    ///
    /// Returns once the first ``WindowSourceUpdate/windows(_:)`` is in ``updates``; from then on the
    /// source follows the compositor, and reconnects, until ``stop()``.
    ///
    /// - Throws: ``HostSourceError``, and then there is no source (``updates`` finishes):
    ///   ``HostSourceError/Code/permissionDenied`` if the compositor is KWin and withholds the global
    ///   from this program (no desktop file: the message says which to install),
    ///   ``HostSourceError/Code/unsupported`` if the compositor is not KWin, offers a version older
    ///   than 4, or libwayland-client is not installed, and the errors of
    ///   ``ForeignToplevelWindowSource/start()`` for the connection itself.
    public func start() async throws(HostSourceError) {
        try await ForeignToplevelCore.start(core, on: loop, sourceName: Self.sourceName)
    }

    /// Asks KWin to activate a window (give it the focus, raising and unminimising it), as
    /// plasmashell's task manager does (`set_state`). The change arrives on ``updates``.
    ///
    /// - Parameters:
    ///   - windowID: A ``TopLevelWindow/id`` of the last set.
    /// - Throws: ``HostSourceError/Code/notFound`` if no window of the connection has that id.
    public func activate(windowID: UInt64) async throws(HostSourceError) {
        let active = UInt32(CWAYLAND_PLASMA_STATE_ACTIVE.rawValue)
        try await setState(windowID: windowID, flags: active, state: active)
    }

    /// Asks KWin to minimise a window (`set_state`). The change arrives on ``updates``.
    ///
    /// - Parameters:
    ///   - windowID: A ``TopLevelWindow/id`` of the last set.
    /// - Throws: ``HostSourceError/Code/notFound`` if no window of the connection has that id.
    public func minimize(windowID: UInt64) async throws(HostSourceError) {
        let minimized = UInt32(CWAYLAND_PLASMA_STATE_MINIMIZED.rawValue)
        try await setState(windowID: windowID, flags: minimized, state: minimized)
    }

    private func setState(windowID: UInt64, flags: UInt32, state: UInt32) async throws(HostSourceError) {
        let core = core
        let sent = await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
            let accepted = loop.perform {
                waiter.resume(returning: core.value.plasmaSetState(windowID: windowID, flags: flags, state: state))
            }
            if !accepted { waiter.resume(returning: false) }
        }
        guard sent else {
            throw HostSourceError(
                code: .notFound, source: Self.sourceName, message: "no window \(windowID) on \(socketPath)")
        }
    }

    /// Disconnects and ends the source; ``updates`` finishes. Returns at once; safe to call more than once.
    public func stop() {
        ForeignToplevelCore.stop(core, on: loop)
    }

    /// This program's real path, as KWin compares it with a desktop file's `Exec` (`/proc/self/exe`).
    public static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
