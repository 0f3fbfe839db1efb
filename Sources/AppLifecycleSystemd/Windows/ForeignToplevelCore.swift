internal import CWayland
import Glibc
import Logging
import SystemdBus

/// The connection and the windows of one ``ForeignToplevelWindowSource`` or ``PlasmaWindowSource``,
/// on its loop thread only: the two protocols differ in their events (``WindowProtocol``), not in
/// how the connection is made, read, lost and made again.
///
/// It lives in a `LoopBoundBox`; libwayland-client reaches it through the `implementation` pointer of
/// the one dispatcher every proxy of the connection has, and calls that dispatcher only inside the
/// `wl_display_dispatch_pending` this type makes from its fd watch, hence on the loop thread too.
/// libwayland-client has no thread of its own, and nothing else reads the display: this type is the
/// only reader, so `prepare_read` never waits for another.
///
/// The rule of every entry point (the fd watch, the timer, a call handed over by the public
/// API): make the libwayland calls, then ``settle()``, which handles a failure the dispatcher
/// recorded (tearing down is never done inside a dispatch) and only then reports, so no consumer
/// code runs inside libwayland.
final class ForeignToplevelCore {
    /// The protocol that lists the compositor's windows.
    enum WindowProtocol {
        /// wlroots' `zwlr_foreign_toplevel_manager_v1` (``ForeignToplevelWindowSource``).
        case wlrForeignToplevel
        /// KDE Plasma's `org_kde_plasma_window_management` (``PlasmaWindowSource``).
        case plasmaWindowManagement

        /// The global bound.
        var interfaceName: String {
            switch self {
            case .wlrForeignToplevel: ForeignToplevelWindowSource.managerInterface
            case .plasmaWindowManagement: PlasmaWindowSource.managementInterface
            }
        }

        /// The name in ``HostSourceError/source``.
        var sourceName: String {
            switch self {
            case .wlrForeignToplevel: ForeignToplevelWindowSource.sourceName
            case .plasmaWindowManagement: PlasmaWindowSource.sourceName
            }
        }
    }

    /// Where the connection is.
    enum Phase: Equatable {
        /// Created, not started.
        case idle
        /// Connected; the registry's globals are arriving, ended by the first `wl_display.sync`.
        case discovering
        /// The manager is bound; the compositor's existing toplevels are arriving, ended by a second sync.
        case listing
        /// The whole set is known and followed.
        case running
        /// Between two attempts: no connection, the retry timer armed.
        case waitingToRetry
        /// Over: ``stop()`` ran, or the first connection failed.
        case stopped
    }

    /// One toplevel handle: what the compositor has said since the last `done`, and what it said up to it.
    struct Toplevel {
        /// Accumulates `title`, `app_id` and `state` until `done` applies them (Plasma: also the pid,
        /// until `initial_state`).
        var pending: TopLevelWindow
        /// The window as of its last `done` (Plasma: as of now, from its `initial_state` on); `nil`
        /// before (it is not reported until then).
        var current: TopLevelWindow?
    }

    let socketPath: String
    let windowProtocol: WindowProtocol
    let loop: EventLoop
    let logger: Logger
    let continuation: AsyncStream<WindowSourceUpdate>.Continuation
    /// The box holding this core, for the `@Sendable` closures given to the loop (weak: the box holds the core).
    weak var box: LoopBoundBox<ForeignToplevelCore>?

    private(set) var phase = Phase.idle
    private var backoff: Backoff
    var functions: UnsafePointer<cwayland_functions>?
    private var display: OpaquePointer?
    private var io: EventSourceToken?
    private var watchingWritable = false
    private var registry: OpaquePointer?
    private var syncCallback: OpaquePointer?
    var manager: OpaquePointer?
    /// The version `manager` was bound at.
    var boundVersion: UInt32 = 0
    /// The registry listed a KWin global (`org_kde_plasma_shell`, `org_kde_kwin_*`): a manager it
    /// did not list was withheld from this program, not missing from the compositor.
    private var offersKWinGlobals = false
    var toplevels: [OpaquePointer: Toplevel] = [:]
    /// Window ids count up for the life of the source, across reconnections.
    var nextWindowID: UInt64 = 1
    /// How long a connection may take from `connect` to its first set before it counts as failed.
    private let answerTimeout: Duration
    /// The one timer: the next attempt while waiting to retry, the answer timeout while connecting.
    private var timer: EventSourceToken?
    /// The caller of `start()`, answered once the first set is known or the first attempt failed.
    private var startWaiter: ((Result<Void, HostSourceError>) -> Void)?

    /// A `done` or `closed` arrived since the last report (Plasma: a described window changed or went).
    var changed = false
    /// The next report goes out even if it equals the last one (the first set of a connection).
    private var mustReport = false
    private var lastReported: [TopLevelWindow]?
    /// Why the connection must end, recorded inside a dispatch and acted upon by ``settle()``.
    var failure: HostSourceError?

    init(
        socketPath: String, windowProtocol: WindowProtocol = .wlrForeignToplevel, loop: EventLoop,
        reconnectBackoff: Backoff, answerTimeout: Duration, logger: Logger,
        continuation: AsyncStream<WindowSourceUpdate>.Continuation
    ) {
        self.socketPath = socketPath
        self.windowProtocol = windowProtocol
        self.loop = loop
        self.backoff = reconnectBackoff
        self.answerTimeout = answerTimeout
        self.logger = logger
        self.continuation = continuation
    }

    // MARK: - Public operations (loop thread)

    /// Connects for the first time; `completion` is called once the first set was reported, or with
    /// why the source cannot start (nothing is retried then).
    func start(completion: @escaping (Result<Void, HostSourceError>) -> Void) {
        loop.assertInEventLoop()
        guard phase == .idle else {
            return completion(
                .failure(error(.invalidArgument, "the window source was already started or stopped")))
        }
        do {
            functions = try WaylandClientLibrary.functions().table
        } catch {
            phase = .stopped
            continuation.finish()
            return completion(.failure(error))
        }
        startWaiter = completion
        connect()
        settle()
    }

    /// Disconnects and ends the source: the update stream finishes. Idempotent.
    func stop() {
        loop.assertInEventLoop()
        guard phase != .stopped else { return }
        timer?.cancel()
        timer = nil
        disconnect()
        phase = .stopped
        if let waiter = startWaiter {
            startWaiter = nil
            waiter(.failure(error(.sourceGone, "the window source was stopped before it started")))
        }
        continuation.finish()
        logger.debug("stopped following the compositor's windows", metadata: ["socket": "\(socketPath)"])
    }

    // MARK: - Connecting

    /// Opens the socket, hands it to libwayland-client and asks for the registry; the rest arrives
    /// as events. Any failure is recorded in `failure` for ``settle()``.
    private func connect() {
        guard let f = functions else { return }
        failure = nil
        let fd: Int32
        switch Self.connectSocket(path: socketPath, source: windowProtocol.sourceName) {
        case .success(let connected): fd = connected
        case .failure(let error):
            failure = error
            return
        }
        guard let display = f.pointee.display_connect_to_fd(fd) else {
            let code = errno
            close(fd)
            failure = HostSourceError(
                errno: code, source: windowProtocol.sourceName,
                message: "wl_display_connect_to_fd on \(socketPath)")
            return
        }
        self.display = display
        // libwayland-client reaches this core through the dispatcher's implementation pointer, retained
        // until `disconnect()` destroyed every proxy that carries it.
        let context = UnsafeRawPointer(Unmanaged.passRetained(self).toOpaque())
        guard let registry = cwayland_display_get_registry(f, display),
            let sync = cwayland_display_sync(f, display)
        else {
            failure = lostError(during: "asking for the registry")
            return
        }
        _ = f.pointee.proxy_add_dispatcher(registry, foreignToplevelDispatcher, context, nil)
        _ = f.pointee.proxy_add_dispatcher(sync, foreignToplevelDispatcher, context, nil)
        self.registry = registry
        self.syncCallback = sync
        phase = .discovering
        // A compositor that accepts and then never answers (stopped, hung) must not hold the source
        // in `discovering` for good: past the timeout the attempt counts as failed.
        armTimer(after: answerTimeout)
        guard let box else { return }
        do {
            // The display owns the fd (wl_display_disconnect closes it); `disconnect()` cancels the
            // watch first, so the fd leaves epoll before it is closed.
            io = try loop.addIOOnLoop(fd: f.pointee.display_get_fd(display), events: EventLoop.IOEvents.readable) {
                revents in box.value.handleIO(revents)
            }
        } catch {
            failure = self.error(.systemCallFailed, "watching the Wayland socket: \(error)")
            return
        }
        flush()
    }

    /// A connected, non-blocking, close-on-exec Unix stream socket to `path`.
    private static func connectSocket(path: String, source: String) -> Result<Int32, HostSourceError> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            return .failure(
                HostSourceError(
                    code: .invalidConfiguration, source: source,
                    message: "\"\(path)\" is not a usable Unix socket path"))
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            return .failure(
                HostSourceError(errno: errno, source: source, message: "socket"))
        }
        // A Unix stream connect completes or fails at once (it never waits for the peer to accept);
        // only a full listen backlog would make it wait, so the socket turns non-blocking first and
        // EAGAIN is one more failed attempt.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            return .failure(
                HostSourceError(
                    errno: code, source: source, message: "connect to \(path)"))
        }
        return .success(fd)
    }

    /// Ends the connection, if any: the fd watch first, then every proxy, then the display (which
    /// closes the fd). The windows it had are forgotten.
    private func disconnect() {
        io?.cancel()
        io = nil
        watchingWritable = false
        guard let f = functions, let display else { return }
        for proxy in toplevels.keys { f.pointee.proxy_destroy(proxy) }
        toplevels = [:]
        // What the next compositor on this socket offers is its own (a KWin may give way to another).
        offersKWinGlobals = false
        if let manager { f.pointee.proxy_destroy(manager) }
        if let syncCallback { f.pointee.proxy_destroy(syncCallback) }
        if let registry { f.pointee.proxy_destroy(registry) }
        manager = nil
        syncCallback = nil
        registry = nil
        f.pointee.display_disconnect(display)
        self.display = nil
        Unmanaged.passUnretained(self).release()
    }

    // MARK: - Reading

    /// The fd watch: read what arrived, dispatch it, send what the dispatch queued.
    private func handleIO(_ revents: UInt32) {
        guard let f = functions, let display else { return }
        if revents & EventLoop.IOEvents.writable != 0 { flush() }
        if revents & (EventLoop.IOEvents.readable | EventLoop.IOEvents.hangUp | EventLoop.IOEvents.error) != 0 {
            // Events already queued are dispatched before the read (prepare_read refuses until they are).
            var prepared = true
            while f.pointee.display_prepare_read(display) != 0 {
                if f.pointee.display_dispatch_pending(display) < 0 {
                    prepared = false
                    break
                }
            }
            if prepared, f.pointee.display_get_error(display) == 0 {
                // On failure read_events releases the read itself and records the error on the display.
                if f.pointee.display_read_events(display) == 0 {
                    _ = f.pointee.display_dispatch_pending(display)
                }
            } else if prepared {
                // Only a read that was prepared is cancelled (libwayland counts its readers).
                f.pointee.display_cancel_read(display)
            }
            if failure == nil, f.pointee.display_get_error(display) != 0 {
                failure = lostError(during: "reading")
            }
        }
        if failure == nil { flush() }
        settle()
    }

    /// Sends the requests libwayland-client holds; watches for writability while the socket is full.
    private func flush() {
        guard let f = functions, let display, failure == nil else { return }
        let full = f.pointee.display_flush(display) < 0 && errno == EAGAIN
        if f.pointee.display_get_error(display) != 0 {
            failure = lostError(during: "writing")
            return
        }
        guard full != watchingWritable, let io else { return }
        let events = EventLoop.IOEvents.readable | (full ? EventLoop.IOEvents.writable : 0)
        do {
            try io.setIOEvents(events)
            watchingWritable = full
        } catch {
            failure = self.error(.systemCallFailed, "watching the Wayland socket for writing: \(error)")
        }
    }

    /// Why the display failed: its protocol error (the interface and code the compositor sent) or its errno.
    func lostError(during activity: String) -> HostSourceError {
        guard let f = functions, let display else {
            return error(.sourceGone, "the compositor connection is gone (\(activity))")
        }
        let code = f.pointee.display_get_error(display)
        if code == EPROTO {
            var interface: UnsafePointer<wl_interface>?
            var id: UInt32 = 0
            let protocolCode = f.pointee.display_get_protocol_error(display, &interface, &id)
            let name = interface.map { String(cString: $0.pointee.name) } ?? "?"
            return error(
                .sourceGone, "the compositor sent protocol error \(protocolCode) on \(name)@\(id) (\(activity))")
        }
        let text = code != 0 ? String(cString: strerror(code)) : "closed"
        let what = code == 0 || code == EPIPE || code == ECONNRESET ? "closed the connection" : "broke the connection"
        return HostSourceError(
            code: .sourceGone, source: windowProtocol.sourceName,
            message: "the compositor at \(socketPath) \(what) (\(activity): \(text))")
    }

    // MARK: - Events (inside wl_display_dispatch_pending)

    /// Handles one event of any proxy of the connection.
    func dispatch(proxy: OpaquePointer, opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>) {
        if proxy == registry {
            registryEvent(opcode: opcode, arguments: arguments)
        } else if proxy == syncCallback {
            syncDone()
        } else if proxy == manager {
            switch windowProtocol {
            case .wlrForeignToplevel: managerEvent(opcode: opcode, arguments: arguments)
            case .plasmaWindowManagement: plasmaManagementEvent(opcode: opcode, arguments: arguments)
            }
        } else if toplevels[proxy] != nil {
            switch windowProtocol {
            case .wlrForeignToplevel: toplevelEvent(proxy, opcode: opcode, arguments: arguments)
            case .plasmaWindowManagement: plasmaWindowEvent(proxy, opcode: opcode, arguments: arguments)
            }
        }
    }

    private func registryEvent(opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>) {
        guard opcode == UInt32(CWAYLAND_REGISTRY_GLOBAL.rawValue), manager == nil, let f = functions,
            let registry, let interface = arguments[1].s
        else { return }
        let name = String(cString: interface)
        if name == "org_kde_plasma_shell" || name.hasPrefix("org_kde_kwin_") { offersKWinGlobals = true }
        guard name == windowProtocol.interfaceName else { return }
        let offered = arguments[2].u
        let bound: OpaquePointer?
        switch windowProtocol {
        case .wlrForeignToplevel:
            boundVersion = min(offered, UInt32(CWAYLAND_FOREIGN_TOPLEVEL_VERSION))
            bound = cwayland_bind_foreign_toplevel_manager(f, registry, arguments[0].u, boundVersion)
        case .plasmaWindowManagement:
            guard offered >= UInt32(CWAYLAND_PLASMA_WINDOW_MANAGEMENT_MIN_VERSION) else {
                failure = error(
                    .unsupported,
                    "the compositor at \(socketPath) offers \(name) version \(offered); "
                        + "version \(CWAYLAND_PLASMA_WINDOW_MANAGEMENT_MIN_VERSION) or later is needed")
                return
            }
            boundVersion = min(offered, UInt32(CWAYLAND_PLASMA_WINDOW_MANAGEMENT_VERSION))
            bound = cwayland_bind_plasma_window_management(f, registry, arguments[0].u, boundVersion)
        }
        guard let bound else {
            failure = lostError(during: "binding \(name)")
            return
        }
        _ = f.pointee.proxy_add_dispatcher(
            bound, foreignToplevelDispatcher, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), nil)
        manager = bound
        logger.debug("bound \(name) version \(boundVersion)")
    }

    /// The sync sent after `get_registry` (every global is known) or after binding (every toplevel is).
    private func syncDone() {
        guard let f = functions, let display, let callback = syncCallback else { return }
        f.pointee.proxy_destroy(callback)
        syncCallback = nil
        switch phase {
        case .discovering:
            guard manager != nil else {
                // A global refused while it was listed (too old a version) said why already.
                failure = failure ?? missingManagerError()
                return
            }
            guard let sync = cwayland_display_sync(f, display) else {
                failure = lostError(during: "synchronising")
                return
            }
            _ = f.pointee.proxy_add_dispatcher(
                sync, foreignToplevelDispatcher, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), nil)
            syncCallback = sync
            phase = .listing
        case .listing:
            phase = .running
            mustReport = true
        default:
            break
        }
    }

    /// Why the registry had no manager to bind: not this kind of compositor, or (KWin) not for this program.
    private func missingManagerError() -> HostSourceError {
        switch windowProtocol {
        case .wlrForeignToplevel:
            return error(
                .unsupported,
                "the compositor at \(socketPath) does not offer \(windowProtocol.interfaceName) "
                    + "(not a wlroots-based compositor, or one that hides its windows)")
        case .plasmaWindowManagement where offersKWinGlobals:
            return error(
                .permissionDenied,
                "KWin at \(socketPath) withholds \(windowProtocol.interfaceName) from this program: KWin offers it "
                    + "only to programs with a desktop file listing it in X-KDE-Wayland-Interfaces whose Exec is "
                    + "the program's real path (\(PlasmaWindowSource.executablePath() ?? "?")): install "
                    + "/usr/share/applications/\(PlasmaWindowSource.desktopFileName)")
        case .plasmaWindowManagement:
            return error(
                .unsupported,
                "the compositor at \(socketPath) does not offer \(windowProtocol.interfaceName) (not KDE's KWin)")
        }
    }

    private func managerEvent(opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>) {
        switch opcode {
        case UInt32(CWAYLAND_MANAGER_TOPLEVEL.rawValue):
            guard let f = functions, let handle = arguments[0].o else { return }
            let proxy = handle  // a wl_object * is the wl_proxy * it begins
            _ = f.pointee.proxy_add_dispatcher(
                proxy, foreignToplevelDispatcher, UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()), nil)
            toplevels[proxy] = Toplevel(pending: TopLevelWindow(id: nextWindowID), current: nil)
            nextWindowID += 1
        case UInt32(CWAYLAND_MANAGER_FINISHED.rawValue):
            failure = error(
                .sourceGone,
                "the compositor at \(socketPath) finished \(ForeignToplevelWindowSource.managerInterface)")
        default:
            break
        }
    }

    private func toplevelEvent(
        _ proxy: OpaquePointer, opcode: UInt32, arguments: UnsafeMutablePointer<wl_argument>
    ) {
        switch opcode {
        case UInt32(CWAYLAND_HANDLE_TITLE.rawValue):
            toplevels[proxy]?.pending.title = arguments[0].s.map { String(cString: $0) }
        case UInt32(CWAYLAND_HANDLE_APP_ID.rawValue):
            toplevels[proxy]?.pending.appID = arguments[0].s.map { String(cString: $0) }
        case UInt32(CWAYLAND_HANDLE_STATE.rawValue):
            let states = Self.states(arguments[0].a)
            toplevels[proxy]?.pending.isActivated = states.contains(UInt32(CWAYLAND_STATE_ACTIVATED.rawValue))
            toplevels[proxy]?.pending.isMinimized = states.contains(UInt32(CWAYLAND_STATE_MINIMIZED.rawValue))
        case UInt32(CWAYLAND_HANDLE_DONE.rawValue):
            guard var toplevel = toplevels[proxy] else { return }
            toplevel.current = toplevel.pending
            toplevels[proxy] = toplevel
            changed = true
        case UInt32(CWAYLAND_HANDLE_CLOSED.rawValue):
            // The handle is dead on the compositor's side: destroy ours; no event names it again.
            toplevels[proxy] = nil
            if let f = functions { cwayland_handle_destroy(f, proxy) }
            changed = true
        default:
            // output_enter, output_leave, parent: not part of the window fact.
            break
        }
    }

    /// The `uint` values of a `state` array (a `wl_array` of native-endian 32-bit values).
    private static func states(_ array: UnsafeMutablePointer<wl_array>?) -> [UInt32] {
        guard let array, let data = array.pointee.data else { return [] }
        let count = array.pointee.size / MemoryLayout<UInt32>.size
        return Array(UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt32.self), count: count))
    }

    // MARK: - After each entry point

    /// Acts on what the dispatch recorded: a failure ends the connection (reported once per outage,
    /// then retried, or the start fails), a change is reported as the whole set.
    private func settle() {
        if let failure {
            self.failure = nil
            let wasRunning = phase == .running
            disconnect()
            if let waiter = startWaiter {
                // The first attempt: no source, the caller hears why.
                startWaiter = nil
                phase = .stopped
                continuation.finish()
                waiter(.failure(failure))
                return
            }
            if wasRunning {
                // Once per outage: the attempts that follow fail quietly until one succeeds.
                logger.info(
                    "lost the compositor's windows; reconnecting",
                    metadata: ["reason": "\(failure.message)", "socket": "\(socketPath)"])
                continuation.yield(.unavailable(reason: failure.message))
            } else {
                logger.debug("reconnecting failed", metadata: ["reason": "\(failure.message)"])
            }
            scheduleRetry()
            return
        }
        guard phase == .running, changed || mustReport else { return }
        // Plasma: a window announced but not yet described (its `initial_state` answers the request
        // this source sent, so it can come one read later) holds the report: the set would lack it,
        // and a focus given to it would show as a set without any.
        guard windowProtocol == .wlrForeignToplevel || !toplevels.values.contains(where: { $0.current == nil }) else {
            return
        }
        changed = false
        let windows = toplevels.values.compactMap(\.current).sorted { $0.id < $1.id }
        if mustReport || windows != lastReported {
            if mustReport {
                logger.info(
                    "following the compositor's windows",
                    metadata: ["socket": "\(socketPath)", "windows": "\(windows.count)"])
            } else {
                logger.debug("windows changed", metadata: ["windows": "\(windows)"])
            }
            mustReport = false
            lastReported = windows
            backoff.reset()
            continuation.yield(.windows(windows))
        }
        if let waiter = startWaiter {
            startWaiter = nil
            waiter(.success(()))
        }
    }

    /// Sends the queued requests from outside a dispatch (a call handed over by the public API),
    /// then acts on a failure that recorded, as every entry point does.
    func flushRequests() {
        flush()
        settle()
    }

    /// Arms the retry timer for the backoff's next delay.
    private func scheduleRetry() {
        phase = .waitingToRetry
        armTimer(after: backoff.next())
    }

    /// Arms the one timer `delay` from now (rearmed if it exists).
    private func armTimer(after delay: Duration) {
        let deadline = EventLoop.now(.monotonic) + delay
        do {
            if let timer {
                try timer.rearm(deadline: deadline)
            } else if let box {
                timer = try loop.addTimerOnLoop(on: .monotonic, deadline: deadline, leeway: .milliseconds(1)) { _ in
                    box.value.timerFired()
                }
            }
        } catch {
            logger.info("cannot arm the window source's timer; it stops", metadata: ["error": "\(error)"])
            disconnect()
            phase = .stopped
            continuation.finish()
        }
    }

    /// The next attempt, or the end of one the compositor did not answer in time.
    private func timerFired() {
        switch phase {
        case .waitingToRetry:
            logger.debug("reconnecting to the compositor", metadata: ["socket": "\(socketPath)"])
            connect()
        case .discovering, .listing:
            failure = error(
                .sourceGone, "the compositor at \(socketPath) did not list its windows within \(answerTimeout)")
        default:
            return
        }
        settle()
    }

    private func error(_ code: HostSourceError.Code, _ message: String) -> HostSourceError {
        HostSourceError(code: code, source: windowProtocol.sourceName, message: message)
    }
}

/// The one dispatcher of every proxy of a ``ForeignToplevelCore``'s connection: the implementation
/// pointer is the core (retained while the connection exists), the target the proxy.
let foreignToplevelDispatcher: wl_dispatcher_func_t = { implementation, target, opcode, _, arguments in
    guard let implementation, let target, let arguments else { return 0 }
    let core = Unmanaged<ForeignToplevelCore>.fromOpaque(implementation).takeUnretainedValue()
    core.dispatch(proxy: OpaquePointer(target), opcode: opcode, arguments: arguments)
    return 0
}

extension ForeignToplevelCore {
    /// A core bound to `loop` and the stream it reports on: what both Wayland sources (wlroots and
    /// KWin) are made of.
    ///
    /// - Parameters:
    ///   - socketPath: The compositor's Unix socket.
    ///   - windowProtocol: The window protocol the core binds.
    ///   - loop: The event loop it runs on.
    ///   - reconnectBackoff: The delays between reconnection attempts.
    ///   - answerTimeout: How long a compositor may take to list its windows.
    ///   - logger: Where the source logs; labelled here with `sourceName`.
    ///   - sourceName: The source's name (`window-source` in its log lines).
    static func make(
        socketPath: String, windowProtocol: WindowProtocol, loop: EventLoop, reconnectBackoff: Backoff,
        answerTimeout: Duration, logger: Logger, sourceName: String
    ) -> (core: LoopBoundBox<ForeignToplevelCore>, updates: AsyncStream<WindowSourceUpdate>) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: WindowSourceUpdate.self, bufferingPolicy: .bufferingNewest(16))
        var logger = logger
        logger[metadataKey: "window-source"] = "\(sourceName)"
        let box = LoopBoundBox.makeBoxSendingValue(
            ForeignToplevelCore(
                socketPath: socketPath, windowProtocol: windowProtocol, loop: loop,
                reconnectBackoff: reconnectBackoff, answerTimeout: answerTimeout, logger: logger,
                continuation: continuation),
            eventLoop: loop)
        // The core's way back to its box, queued before anything else its source hands the loop.
        loop.perform { box.value.box = box }
        return (box, stream)
    }

    /// Stops a core on its loop (a source's `stop()` and `deinit`); returns at once.
    static func stop(_ core: LoopBoundBox<ForeignToplevelCore>, on loop: EventLoop) {
        loop.perform { core.value.stop() }
    }

    /// Starts a core on its loop and waits until it reported its first set or failed: the start of
    /// both Wayland sources (wlroots and KWin).
    ///
    /// - Parameters:
    ///   - core: The source's core, bound to `loop`.
    ///   - loop: The loop the core runs on.
    ///   - sourceName: The source's name in the error when the loop has shut down.
    static func start(
        _ core: LoopBoundBox<ForeignToplevelCore>, on loop: EventLoop, sourceName: String
    ) async throws(HostSourceError) {
        let result = await withCheckedContinuation {
            (waiter: CheckedContinuation<Result<Void, HostSourceError>, Never>) in
            let accepted = loop.perform { core.value.start { waiter.resume(returning: $0) } }
            if !accepted {
                waiter.resume(
                    returning: .failure(
                        HostSourceError(
                            code: .sourceGone, source: sourceName, message: "the event loop has shut down")))
            }
        }
        try result.get()
    }
}
