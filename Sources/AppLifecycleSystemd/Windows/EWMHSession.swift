internal import CXCB
import Glibc
import Logging
import SystemdBus

/// The loop-confined state of an ``EWMHWindowSource``: one X connection at a time, the requests
/// in flight, the window manager's check, the client windows, and the reconnect timer.
///
/// Everything here runs on the source's loop thread (it lives in a `LoopBoundBox`). Only the
/// connection set-up, `xcb_connect` (a socket connect and the setup handshake, one round trip that
/// a stopped or hung server would never answer), runs on a `DetachedThread`; every other request
/// is sent with its cookie kept in ``pending``, and its reply is picked up with
/// `xcb_poll_for_reply` when the socket is readable, so the loop never waits for the server.
/// `xcb_flush` can block only while the socket's send buffer is full, which a few small requests
/// per event never fill.
final class EWMHSession {
    /// Where a connection is.
    enum Phase: Equatable {
        /// Not started, or waiting for the reconnect timer.
        case idle
        /// `xcb_connect` runs on its thread.
        case connecting
        /// The atoms are being interned.
        case interningAtoms
        /// Connected; no EWMH window manager (yet): waiting for the root properties to change.
        case waitingForWindowManager
        /// Connected to an EWMH window manager, following its client list.
        case running
        /// Stopped for good.
        case stopped
    }

    /// A request whose reply is still to be picked up.
    enum Request {
        case internAtom(X11Atom)
        /// A root window property the source follows (`_NET_CLIENT_LIST`, `_NET_ACTIVE_WINDOW`).
        case rootProperty(X11Atom)
        /// The root's `_NET_SUPPORTING_WM_CHECK`, for the window manager check numbered `check`.
        case checkRoot(check: Int)
        /// The check window's own `_NET_SUPPORTING_WM_CHECK`, which must name itself.
        case checkWindow(UInt32, check: Int)
        /// The check window's `_NET_WM_NAME`: the window manager's name, for the log.
        case checkWindowName(UInt32, check: Int)
        /// The root's `_NET_SUPPORTED`.
        case checkSupported(check: Int)
        /// A client window's property.
        case windowProperty(UInt32, X11Atom)
    }

    /// The window manager check under way: what its replies have said so far.
    struct WindowManagerCheck {
        var number: Int
        var checkWindow: UInt32?
        var checkWindowValid: Bool?
        var supported: [UInt32]?
        var name: String?
        var answered: Int = 0
    }

    let display: String?
    let loop: EventLoop
    let logger: Logger
    private var reconnectBackoff: Backoff
    private let continuation: AsyncStream<WindowSourceUpdate>.Continuation
    /// The way back to the box holding this session, for the closures given to the loop and the
    /// connect thread; set right after the box is made, cleared on stop (breaking the cycle).
    var box: LoopBoundBox<EWMHSession>?

    private(set) var phase = Phase.idle
    private var startCompletion: ((Result<Void, EWMHWindowSourceError>) -> Void)?
    private var connection: OpaquePointer?
    private var root: UInt32 = 0
    private var attempt = 0
    private var ioWatch: EventSourceToken?
    private var reconnectTimer: EventSourceToken?
    private var atoms: [X11Atom: UInt32] = [:]
    private var pending: [(sequence: UInt32, request: Request)] = []
    private var needsFlush = false
    private var checkNumber = 0
    private var check: WindowManagerCheck?
    private var supportingWindow: UInt32?
    private var clientList: [UInt32] = []
    private var activeWindow: UInt32 = 0
    private var windows: [UInt32: X11ClientWindow] = [:]
    /// Windows whose requests failed with `BadWindow` while still listed: dropped until the
    /// window manager lists them no more.
    private var destroyedWindows: Set<UInt32> = []
    private var lastReported: WindowSourceUpdate?

    init(
        display: String?, loop: EventLoop, reconnectBackoff: Backoff, logger: Logger,
        continuation: AsyncStream<WindowSourceUpdate>.Continuation
    ) {
        self.display = display
        self.loop = loop
        self.reconnectBackoff = reconnectBackoff
        self.logger = logger
        self.continuation = continuation
    }

    /// The display connected to, for messages: the one given, else `$DISPLAY`'s value at start.
    private var displayName = ""

    // MARK: Starting and stopping

    /// Starts the first connection; `completion` runs once, when the first window set is
    /// reported or with the reason there is none.
    func start(completion: @escaping (Result<Void, EWMHWindowSourceError>) -> Void) {
        guard phase == .idle, startCompletion == nil, attempt == 0 else {
            return completion(.failure(EWMHWindowSourceError(.stopped, "the source was started or stopped before")))
        }
        do {
            _ = try XCBLibrary.functions()
        } catch {
            return fail(error, completion: completion)
        }
        let name = display ?? getenv("DISPLAY").map { String(cString: $0) } ?? ""
        guard !name.isEmpty else {
            return fail(EWMHWindowSourceError(.noDisplay, "no X display: $DISPLAY is not set"), completion: completion)
        }
        displayName = name
        startCompletion = completion
        connect()
    }

    private func fail(
        _ error: EWMHWindowSourceError, completion: (Result<Void, EWMHWindowSourceError>) -> Void
    ) {
        stop()
        completion(.failure(error))
    }

    /// Ends the source: the connection closes, the timer goes, the update stream finishes.
    func stop() {
        guard phase != .stopped else { return }
        closeConnection()
        reconnectTimer?.cancel()
        reconnectTimer = nil
        phase = .stopped
        box = nil
        continuation.finish()
        if let completion = startCompletion {
            startCompletion = nil
            completion(.failure(EWMHWindowSourceError(.stopped, "the source was stopped before it started")))
        }
    }

    /// Finishes the start with `result` if it is still waiting.
    private func finishStart(_ result: Result<Void, EWMHWindowSourceError>) {
        guard let completion = startCompletion else { return }
        startCompletion = nil
        if case .failure(let error) = result {
            stop()
            logger.debug("X11 window source not started", metadata: ["reason": "\(error.message)"])
        }
        completion(result)
    }

    // MARK: Connecting

    /// Connects on a `DetachedThread` (`xcb_connect` waits for the server's setup reply) and
    /// hands the connection to the loop.
    private func connect() {
        guard let box else { return }
        phase = .connecting
        attempt += 1
        let attempt = attempt
        // The name resolved at start: every reconnect goes to the same display.
        let display = displayName
        let started = DetachedThread.start {
            var screen: Int32 = 0
            let xcb = XCBLibrary.loaded
            let connection = xcb.connect(display, &screen)
            let handle = ConnectionHandle(pointer: connection)
            let error = xcb.connection_has_error(connection)
            let screenNumber = screen
            let delivered = box.loop.perform {
                box.value.connected(handle, screen: screenNumber, error: error, attempt: attempt)
            }
            if !delivered, let connection { xcb.disconnect(connection) }
        }
        if started != 0 {
            connectionFailed("cannot start a thread to connect: \(String(cString: strerror(started)))")
        }
    }

    private func connected(_ handle: ConnectionHandle, screen: Int32, error: Int32, attempt: Int) {
        let xcb = XCBLibrary.loaded
        guard phase == .connecting, attempt == self.attempt else {
            if let pointer = handle.pointer { xcb.disconnect(pointer) }
            return
        }
        guard let pointer = handle.pointer, error == 0 else {
            if let pointer = handle.pointer { xcb.disconnect(pointer) }
            return connectionFailed(
                "cannot connect to X display \(displayName): \(XCBLibrary.describeConnectionError(error))")
        }
        var roots = xcb.setup_roots_iterator(xcb.get_setup(pointer))
        for _ in 0..<max(screen, 0) where roots.rem > 0 { xcb.screen_next(&roots) }
        guard let rootScreen = roots.data else {
            xcb.disconnect(pointer)
            return connectionFailed("X display \(displayName) has no screen \(screen)")
        }
        connection = pointer
        root = rootScreen.pointee.root
        do {
            ioWatch = try loop.addIOOnLoop(fd: xcb.get_file_descriptor(pointer), events: EventLoop.IOEvents.readable) {
                [box] _ in
                box?.value.pump()
            }
        } catch {
            closeConnection()
            return connectionFailed("cannot watch the X connection: \(error)")
        }
        logger.debug("connected to X display", metadata: ["display": "\(displayName)"])
        selectEvents(root, mask: XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue)
        phase = .interningAtoms
        for atom in X11Atom.allCases {
            let cookie = atom.rawValue.withCString { name in
                xcb.intern_atom(pointer, 0, UInt16(strlen(name)), name)
            }
            pending.append((cookie.sequence, .internAtom(atom)))
        }
        needsFlush = true
        pump()
    }

    /// The connection could not be made or was lost: a start fails; a running source reports
    /// `unavailable` and tries again after the backoff's next delay.
    private func connectionFailed(_ reason: String) {
        closeConnection()
        guard startCompletion == nil else {
            return finishStart(.failure(EWMHWindowSourceError(.cannotConnect, reason)))
        }
        guard phase != .stopped else { return }
        phase = .idle
        report(.unavailable(reason: reason))
        let delay = reconnectBackoff.next()
        logger.debug("reconnecting to the X display", metadata: ["in": "\(delay)", "reason": "\(reason)"])
        do {
            let deadline = EventLoop.now(.monotonic) + delay
            if let reconnectTimer {
                try reconnectTimer.rearm(deadline: deadline)
            } else {
                reconnectTimer = try loop.addTimerOnLoop(on: .monotonic, deadline: deadline) { [box] _ in
                    box?.value.connect()
                }
            }
        } catch {
            logger.info("X11 window source stopped: cannot arm its reconnect timer", metadata: ["error": "\(error)"])
            stop()
        }
    }

    private func closeConnection() {
        ioWatch?.cancel()
        ioWatch = nil
        if let connection { XCBLibrary.loaded.disconnect(connection) }
        connection = nil
        pending.removeAll()
        atoms.removeAll()
        check = nil
        supportingWindow = nil
        clientList.removeAll()
        activeWindow = 0
        windows.removeAll()
        destroyedWindows.removeAll()
        needsFlush = false
    }

    // MARK: Requests

    private func selectEvents(_ window: UInt32, mask: UInt32) {
        guard let connection else { return }
        var value = mask
        _ = XCBLibrary.loaded.change_window_attributes(connection, window, XCB_CW_EVENT_MASK.rawValue, &value)
        needsFlush = true
    }

    private func getProperty(_ window: UInt32, _ property: X11Atom, type: X11Atom?, length: UInt32, _ request: Request)
    {
        guard let connection, let propertyAtom = atoms[property] else { return }
        let typeAtom = type.flatMap { atoms[$0] } ?? 0
        let cookie = XCBLibrary.loaded.get_property(connection, 0, window, propertyAtom, typeAtom, 0, length)
        pending.append((cookie.sequence, request))
        needsFlush = true
    }

    /// Asks for a root property the source follows.
    private func fetchRoot(_ property: X11Atom) {
        switch property {
        case .clientList: getProperty(root, .clientList, type: .window, length: 1 << 16, .rootProperty(.clientList))
        case .activeWindow: getProperty(root, .activeWindow, type: .window, length: 1, .rootProperty(.activeWindow))
        default: break
        }
    }

    /// Asks for one property of a client window.
    private func fetch(_ property: X11Atom, of window: UInt32) {
        let request = Request.windowProperty(window, property)
        switch property {
        case .pid: getProperty(window, .pid, type: .cardinal, length: 1, request)
        case .wmClass: getProperty(window, .wmClass, type: .string, length: 256, request)
        case .netName: getProperty(window, .netName, type: .utf8String, length: 256, request)
        case .wmName: getProperty(window, .wmName, type: nil, length: 256, request)
        case .netState: getProperty(window, .netState, type: .atom, length: 64, request)
        case .wmState: getProperty(window, .wmState, type: .wmState, length: 2, request)
        default: break
        }
    }

    /// Starts a new window manager check (a newer one makes the replies of an older one moot).
    private func checkWindowManager() {
        checkNumber += 1
        check = WindowManagerCheck(number: checkNumber)
        getProperty(root, .supportingWMCheck, type: .window, length: 1, .checkRoot(check: checkNumber))
        getProperty(root, .supported, type: .atom, length: 1 << 16, .checkSupported(check: checkNumber))
    }

    // MARK: Events and replies

    /// Reads everything the server sent (events and replies), handles it, sends what that asks
    /// for, and reports the window set once at the end if it changed.
    func pump() {
        let xcb = XCBLibrary.loaded
        var progressed = true
        while progressed, let connection {
            progressed = false
            while let event = xcb.poll_for_event(connection) {
                progressed = true
                handle(event)
                free(event)
                guard self.connection != nil else { return }
            }
            while let first = pending.first {
                var reply: UnsafeMutableRawPointer?
                var error: UnsafeMutablePointer<xcb_generic_error_t>?
                guard xcb.poll_for_reply(connection, first.sequence, &reply, &error) != 0 else { break }
                pending.removeFirst()
                progressed = true
                handle(first.request, reply: reply, error: error)
                free(reply)
                free(error)
                guard self.connection != nil else { return }
            }
            if needsFlush {
                needsFlush = false
                progressed = true
                _ = xcb.flush(connection)
            }
            let error = xcb.connection_has_error(connection)
            if error != 0 {
                return connectionFailed(
                    "lost X display \(displayName): \(XCBLibrary.describeConnectionError(error))")
            }
        }
        reportIfSettled()
    }

    private func handle(_ event: UnsafeMutablePointer<xcb_generic_event_t>) {
        switch Int32(event.pointee.response_type & 0x7f) {
        case 0:
            // An error of a request without a reply: selecting events on a window already gone.
            let error = UnsafeMutableRawPointer(event).assumingMemoryBound(to: xcb_generic_error_t.self).pointee
            logger.trace(
                "X error", metadata: ["code": "\(error.error_code)", "resource": "\(error.resource_id)"])
        case XCB_PROPERTY_NOTIFY:
            let notify = UnsafeMutableRawPointer(event).assumingMemoryBound(to: xcb_property_notify_event_t.self)
                .pointee
            propertyChanged(window: notify.window, atom: notify.atom)
        case XCB_DESTROY_NOTIFY:
            let notify = UnsafeMutableRawPointer(event).assumingMemoryBound(to: xcb_destroy_notify_event_t.self)
                .pointee
            if notify.window == supportingWindow, phase == .running || phase == .waitingForWindowManager {
                supportingWindow = nil
                checkWindowManager()
            }
        default:
            break
        }
    }

    private func propertyChanged(window: UInt32, atom: UInt32) {
        guard phase == .running || phase == .waitingForWindowManager else { return }
        if window == root {
            if atom == atoms[.supportingWMCheck] || atom == atoms[.supported] {
                checkWindowManager()
            } else if phase == .running, atom == atoms[.clientList] {
                fetchRoot(.clientList)
            } else if phase == .running, atom == atoms[.activeWindow] {
                fetchRoot(.activeWindow)
            }
            return
        }
        guard phase == .running, windows[window] != nil,
            let property = X11Atom.clientProperties.first(where: { atoms[$0] == atom })
        else { return }
        fetch(property, of: window)
    }

    private func handle(
        _ request: Request, reply: UnsafeMutableRawPointer?, error: UnsafeMutablePointer<xcb_generic_error_t>?
    ) {
        switch request {
        case .internAtom(let atom):
            guard let reply else {
                return connectionFailed("the X server did not intern \(atom.rawValue)")
            }
            atoms[atom] = reply.assumingMemoryBound(to: xcb_intern_atom_reply_t.self).pointee.atom
            if atoms.count == X11Atom.allCases.count {
                phase = .waitingForWindowManager
                checkWindowManager()
            }
        case .checkRoot(let number):
            guard check?.number == number else { return }
            let window = property(reply).firstItem32 ?? 0
            check?.checkWindow = window
            check?.answered += 1
            if window != 0 {
                // The name first: its reply is then in before the one that concludes the check.
                getProperty(window, .netName, type: .utf8String, length: 64, .checkWindowName(window, check: number))
                getProperty(window, .supportingWMCheck, type: .window, length: 1, .checkWindow(window, check: number))
            } else {
                check?.checkWindowValid = false
            }
            concludeCheck()
        case .checkWindow(let window, let number):
            guard check?.number == number else { return }
            // BadWindow: the root names a window that is gone (a window manager that exited).
            check?.checkWindowValid = error == nil && property(reply).firstItem32 == window
            concludeCheck()
        case .checkWindowName(_, let number):
            guard check?.number == number else { return }
            check?.name = property(reply).text
        case .checkSupported(let number):
            guard check?.number == number else { return }
            check?.supported = property(reply).items32
            check?.answered += 1
            concludeCheck()
        case .rootProperty(.clientList):
            guard phase == .running else { return }
            updateClientList(property(reply).items32)
        case .rootProperty(.activeWindow):
            guard phase == .running else { return }
            activeWindow = property(reply).firstItem32 ?? 0
        case .rootProperty:
            break
        case .windowProperty(let window, let atom):
            guard windows[window] != nil else { return }
            if let error, error.pointee.error_code == UInt8(XCB_WINDOW) {
                // The window was destroyed since the client list named it: drop it.
                windows[window] = nil
                destroyedWindows.insert(window)
                return
            }
            windows[window]?.apply(atom, property(reply), hiddenAtom: atoms[.netStateHidden] ?? 0)
        }
    }

    /// Decides the check once both its answers are in (the root's two properties, and the check
    /// window's own property if the root named one).
    private func concludeCheck() {
        guard let check, check.answered == 2, let supported = check.supported, let valid = check.checkWindowValid
        else { return }
        self.check = nil
        let required: [X11Atom] = [.clientList, .activeWindow]
        let missing = required.filter { atom in !supported.contains(atoms[atom] ?? 0) }
        if valid, missing.isEmpty, let window = check.checkWindow {
            let wasRunning = phase == .running
            phase = .running
            if supportingWindow != window {
                supportingWindow = window
                // Its DestroyNotify tells that the window manager is gone.
                selectEvents(window, mask: XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue)
                logger.info(
                    "X11 window source follows the window manager",
                    metadata: ["display": "\(displayName)", "window-manager": "\(check.name ?? "unnamed")"])
            }
            if !wasRunning { reconnectBackoff.reset() }
            fetchRoot(.clientList)
            fetchRoot(.activeWindow)
            return
        }
        let reason =
            !valid
            ? "no EWMH window manager on X display \(displayName) (no valid _NET_SUPPORTING_WM_CHECK window)"
            : "the window manager on X display \(displayName) does not support "
                + missing.map(\.rawValue).joined(separator: " and ")
        if startCompletion != nil {
            return finishStart(.failure(EWMHWindowSourceError(.notEWMHCompliant, reason)))
        }
        if phase == .running {
            logger.info("X11 window source lost the window manager", metadata: ["reason": "\(reason)"])
        }
        phase = .waitingForWindowManager
        supportingWindow = nil
        clientList.removeAll()
        windows.removeAll()
        destroyedWindows.removeAll()
        activeWindow = 0
        report(.unavailable(reason: reason))
    }

    private func updateClientList(_ list: [UInt32]) {
        let listed = Set(list)
        destroyedWindows.formIntersection(listed)
        for window in windows.keys where !listed.contains(window) { windows[window] = nil }
        var seen: Set<UInt32> = []
        clientList = list.filter { seen.insert($0).inserted && $0 != 0 }
        for window in clientList where windows[window] == nil && !destroyedWindows.contains(window) {
            windows[window] = X11ClientWindow(id: window)
            // Events first: a change made after the reads below is then notified.
            selectEvents(window, mask: XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue)
            for property in X11Atom.clientProperties { fetch(property, of: window) }
        }
    }

    /// Reads a `GetProperty` reply (``X11PropertyValue/absent`` for none, an error, or another type).
    private func property(_ reply: UnsafeMutableRawPointer?) -> X11PropertyValue {
        guard let reply else { return .absent }
        let typed = reply.assumingMemoryBound(to: xcb_get_property_reply_t.self)
        let xcb = XCBLibrary.loaded
        let length = Int(xcb.get_property_value_length(typed))
        guard typed.pointee.type != 0, length > 0, let value = xcb.get_property_value(typed) else {
            return .absent
        }
        let bytes = [UInt8](UnsafeRawBufferPointer(start: value, count: length))
        return X11PropertyValue(type: typed.pointee.type, format: typed.pointee.format, bytes: bytes)
    }

    // MARK: Reporting

    /// Reports the window set once every reply it depends on is in, if it differs from the last
    /// report; the first report also completes the start.
    private func reportIfSettled() {
        guard phase == .running, pending.isEmpty else { return }
        let set = clientList.compactMap { id in
            windows[id]?.topLevelWindow(isActivated: id == activeWindow)
        }
        report(.windows(set))
        finishStart(.success(()))
    }

    /// Yields `update` unless it says nothing new: the same window set, or `unavailable` again
    /// (each failed reconnect has its own reason; the consumer needs only the first).
    private func report(_ update: WindowSourceUpdate) {
        guard update != lastReported else { return }
        if case .unavailable(let reason) = update {
            if case .unavailable = lastReported { return }
            logger.info("X11 window source unavailable", metadata: ["reason": "\(reason)"])
        }
        lastReported = update
        continuation.yield(update)
    }
}

/// An `xcb_connection_t` handed from the connect thread to the loop thread, which alone uses it.
struct ConnectionHandle: @unchecked Sendable {
    // Safe: made on the connect thread and not touched there after it is handed over.
    let pointer: OpaquePointer?
}
