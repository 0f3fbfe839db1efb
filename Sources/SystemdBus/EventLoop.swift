import CSystemd
import CSystemdShim
import Dispatch
import Glibc
import Logging
import Synchronization

/// One sd-event loop running on its own dedicated thread.
///
/// The loop thread blocks in `sd_event_run`, that is in `epoll_wait`, until one of its
/// sources is ready: there is no polling and no periodic wake-up. Work from other threads
/// is handed over with ``perform(_:)``, which queues the closure and writes to an eventfd
/// that the loop watches, so the loop wakes at once.
///
/// sd-event and sd-bus objects are not thread-safe. Every object of this package that
/// wraps one (``BusConnection``, ``EventSourceToken``) touches it only on this loop's
/// thread; handlers you register (``addIO(fd:events:ownsFD:handler:)``,
/// ``addTimer(on:deadline:leeway:handler:)``, bus signal
/// and method handlers) are always called on the loop thread, one at a time, so they must
/// return quickly: hand long work to a `Task` or another thread.
///
/// Sources live until their token is cancelled or the loop shuts down; dropping the token
/// does not cancel the source. Call ``shutdown()`` when done: it cancels every remaining
/// source, runs the shutdown hooks of attached connections, and joins the thread.
public final class EventLoop: @unchecked Sendable {
    // Why @unchecked Sendable is safe here:
    // - `event` and `wakeFD` are written once in `init` before the loop thread starts
    //   (pthread_create is a happens-before edge) and never written again.
    // - `wakeSource` is written in `init` before the thread starts, and cleared by the loop thread
    //   itself at the end of `run()`; no other thread reads it.
    // - `thread` is written in `init` right after pthread_create returns, and read only by
    //   `shutdown()` on another thread, which first takes the `joined` mutex; a shutdown cannot run
    //   before `init` has returned the loop to its caller.
    // - `confined` is read and written only on the loop thread (every access is inside a
    //   closure run by the loop, or in `run()` itself, which is the loop thread).
    // - `pending`, `handedOver` and `threadID` are synchronization primitives (Mutex, Atomic).

    /// The name of the loop, used for the thread name and in log messages.
    public let name: String

    let event: OpaquePointer
    private let wakeFD: Int32
    private var wakeSource: OpaquePointer?
    private var thread: pthread_t = 0
    private let threadID = Atomic<UInt>(0)
    private let joined = Mutex<Bool>(false)
    private let pending = Mutex<Pending>(Pending())
    /// Counts the work handed to the loop: released inside `perform`'s lock, acquired inside the
    /// loop's when it takes the queue. The Mutex already orders the two, but hands a contended lock
    /// over through a futex ThreadSanitizer cannot see; this atomic pair is the happens-before it
    /// can, so what a caller wrote before `perform` is seen as written before the work runs.
    private let handedOver = Atomic<UInt64>(0)
    private var confined = Confined()
    let logger: Logger

    private struct Pending: ~Copyable {
        var queue: [@Sendable () -> Void] = []
        var isShutDown = false
    }

    /// State touched only on the loop thread.
    private struct Confined {
        var stopping = false
        var sources: [ObjectIdentifier: EventSourceToken] = [:]
        var shutdownHooks: [(id: UInt64, hook: () -> Void)] = []
        var nextHookID: UInt64 = 1
    }

    /// Creates an sd-event loop and starts its dedicated thread.
    ///
    /// The loop is ready for ``perform(_:)`` and source registration when this returns.
    ///
    /// - Parameters:
    ///   - name: A short name for the thread (the first 15 bytes become the thread name) and logs.
    /// - Throws: ``BusError`` if sd-event, the eventfd or the thread cannot be created.
    public init(name: String = "sd-event") throws {
        self.name = name
        var logger = Logger(label: "SystemdBus")
        logger[metadataKey: "loop"] = "\(name)"
        self.logger = logger

        var event: OpaquePointer?
        try BusError.check(sd_event_new(&event), "sd_event_new")
        guard let event else { throw BusError(errno: ENOMEM, context: "sd_event_new") }
        self.event = event

        let fd = csd_eventfd_nonblock()
        if fd < 0 {
            let code = Glibc.errno
            sd_event_unref(event)
            throw BusError(errno: code, context: "eventfd")
        }
        self.wakeFD = fd

        var source: OpaquePointer?
        let r = sd_event_add_io(
            event, &source, fd, UInt32(EPOLLIN.rawValue),
            { _, _, _, userdata in
                Unmanaged<EventLoop>.fromOpaque(userdata!).takeUnretainedValue().drainQueue()
                return 0
            }, Unmanaged.passUnretained(self).toOpaque())
        if r < 0 {
            close(fd)
            sd_event_unref(event)
            throw BusError(errno: r, context: "sd_event_add_io(eventfd)")
        }
        self.wakeSource = source
        _ = sd_event_source_set_description(source, "wakeup")

        // The thread keeps the loop alive until it exits (balanced in the thread body).
        let context = Unmanaged.passRetained(self).toOpaque()
        var tid: pthread_t = 0
        let created = pthread_create(
            &tid, nil,
            { context in
                let loop = Unmanaged<EventLoop>.fromOpaque(context!).takeRetainedValue()
                loop.run()
                return nil
            }, context)
        if created != 0 {
            Unmanaged<EventLoop>.fromOpaque(context).release()
            sd_event_source_disable_unref(source)
            close(fd)
            sd_event_unref(event)
            throw BusError(errno: created, context: "pthread_create")
        }
        self.thread = tid
    }

    deinit {
        // The thread holds a strong reference while it runs, so deinit only happens after
        // the loop thread has finished its cleanup.
        close(wakeFD)
    }

    /// Whether the caller runs on this loop's thread.
    ///
    /// Handlers registered with the loop always run on it; use this in assertions.
    public var isOnLoopThread: Bool {
        threadID.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: UInt(pthread_self())))
    }

    /// Makes the next `sd_event_run` fail, as a broken epoll descriptor would (tests of the loop's
    /// failure path): /dev/null takes the place of its epoll fd (same number, so nothing else's fd
    /// is ever closed by mistake), and `epoll_wait` then fails with `EINVAL`.
    package func breakForTesting() {
        perform { [self] in
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard null >= 0 else { return }
            _ = dup2(null, sd_event_get_fd(event))
            close(null)
        }
    }

    /// Stops the program when the caller is not on this loop's thread, in every build.
    ///
    /// For code that touches what only the loop thread may touch (sd-event and sd-bus objects,
    /// loop-confined state): a call from the wrong thread stops at once instead of racing with the
    /// loop. ``LoopBoundBox`` checks every access with it.
    ///
    /// - Parameters:
    ///   - file: The caller's file, for the failure message.
    ///   - line: The caller's line.
    @inlinable
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(isOnLoopThread, "called off the \(name) loop thread", file: file, line: line)
    }

    /// Stops the program when the caller is not on this loop's thread, in debug builds only.
    ///
    /// For a function documented "loop thread only" whose unsafe accesses are checked anyway (by
    /// ``preconditionInEventLoop(file:line:)`` or a ``LoopBoundBox``): it fails earlier in tests,
    /// at the function's entry, and costs nothing in release builds.
    ///
    /// - Parameters:
    ///   - file: The caller's file, for the failure message.
    ///   - line: The caller's line.
    @inlinable
    public func assertInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoopThread, "called off the \(name) loop thread", file: file, line: line)
    }

    /// Whether the calling thread is the thread of some event loop (this one or another).
    package static var isOnAnyLoopThread: Bool { csd_is_event_loop_thread() != 0 }

    /// Whether the caller runs on the main thread or on the main dispatch queue.
    ///
    /// The main queue is the main actor's executor. On Linux, once an async `main` hands its thread
    /// to `dispatch_main`, that queue runs on a worker thread, so the thread alone would miss it.
    package static var isOnMainActorOrThread: Bool {
        csd_is_main_thread() != 0 || DispatchQueue.getSpecific(key: mainQueueKey) == true
    }

    /// Marks the main dispatch queue (set once, the first time it is read).
    nonisolated(unsafe) private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        // Safe: the key is immutable once made; Dispatch's specifics are thread-safe.
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Runs `body` on the loop thread, asynchronously and in submission order.
    ///
    /// Returns at once; the closure runs on the next loop iteration (even when called from
    /// the loop thread itself, the closure is queued, not run inline). Closures submitted
    /// after ``shutdown()`` are dropped.
    ///
    /// - Parameters:
    ///   - body: The work to run on the loop thread.
    /// - Returns: `false` if the loop has shut down and the closure was dropped.
    @discardableResult
    public func perform(_ body: @escaping @Sendable () -> Void) -> Bool {
        let accepted = pending.withLock { state -> Bool in
            if state.isShutDown { return false }
            state.queue.append(body)
            handedOver.wrappingAdd(1, ordering: .releasing)
            return true
        }
        if accepted {
            wake()
        } else {
            logger.debug("perform after shutdown: work dropped")
        }
        return accepted
    }

    /// Runs `body` on the loop thread and blocks the calling thread until it has run.
    ///
    /// For plain threads only (a command-line tool's set-up, a benchmark's worker thread): async
    /// code awaits ``run(_:)`` instead, which blocks nothing, and the compiler refuses this call
    /// there. It stops the program when called on the main actor or the main thread (it would block
    /// the main actor; synchronous code on it is refused at run time) or on any event loop's thread (a loop thread never blocks: waiting for itself would never
    /// end, and waiting for another loop can deadlock).
    ///
    /// - Parameters:
    ///   - body: The work to run on the loop thread.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or ``BusError`` if the loop has shut down.
    @available(*, noasync, message: "performAndWait blocks its thread; await run(_:) instead")
    public func performAndWait<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
        precondition(
            !Self.isOnMainActorOrThread,
            "performAndWait on the main actor or the main thread would block it; await \(name).run(_:) instead")
        precondition(
            !Self.isOnAnyLoopThread,
            "performAndWait on an event loop's thread would block that loop; use \(name).perform(_:) instead")
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
        defer {
            sem_destroy(semaphore)
            semaphore.deallocate()
        }
        let result = Mutex<Result<T, any Error>?>(nil)
        let signal = SemaphoreReference(semaphore)
        let accepted = perform {
            let value = Result { try body() }
            result.withLock { $0 = value }
            sem_post(signal.pointer)
        }
        guard accepted else { throw BusError.loopShutDown }
        while sem_wait(semaphore) != 0 && Glibc.errno == EINTR {}
        let value = result.withLock { $0.take() }
        return try value!.get()
    }

    /// Runs `body` on the loop thread and returns its result to the awaiting task.
    ///
    /// The task suspends (no thread blocks) until the loop has run `body`.
    ///
    /// - Parameters:
    ///   - body: The work to run on the loop thread.
    /// - Returns: What `body` returned.
    /// - Throws: What `body` threw, or ``BusError`` if the loop has shut down.
    public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let accepted = perform {
                continuation.resume(with: Result { try body() })
            }
            if !accepted { continuation.resume(throwing: BusError.loopShutDown) }
        }
    }

    /// Watches a file descriptor for readiness.
    ///
    /// The handler runs on the loop thread with the `revents` that `epoll` reported
    /// (`EPOLLIN`, `EPOLLPRI`, `EPOLLERR`, `EPOLLHUP`…) every time the fd is ready, until the
    /// token is cancelled. The watch is level-triggered: read or drain the fd in the handler,
    /// or it fires again at once. The caller keeps owning the fd: cancel the token *before*
    /// closing the fd (an fd may only be watched once per loop; a second watch fails with
    /// `EEXIST`). `EPOLLERR` and `EPOLLHUP` are always reported by epoll; a handler that sees
    /// them and does not want to spin should cancel its token.
    ///
    /// Typical uses: a timerfd (`EPOLLIN`), inotify (`EPOLLIN`), a PSI trigger on
    /// `memory.pressure` (`EPOLLPRI`), a FIFO (`EPOLLIN`).
    ///
    /// - Parameters:
    ///   - fd: The file descriptor to watch. It should be non-blocking.
    ///   - events: The `EPOLL*` event mask, for example `UInt32(EPOLLIN.rawValue)`.
    ///   - ownsFD: Whether the watch owns `fd`: it is closed once the watch is cancelled (after it
    ///     left epoll), or at once if the watch cannot be added. Watch a `dup` you own when another
    ///     library closes the original whenever it likes.
    ///   - handler: Called on the loop thread with the reported `revents`.
    /// - Returns: The token that cancels the watch.
    /// - Throws: ``BusError`` if sd-event refuses the fd (for example `EEXIST`, `EBADF`, `EPERM`)
    ///   or the loop has shut down.
    public func addIO(
        fd: Int32, events: UInt32, ownsFD: Bool = false, handler: @escaping @Sendable (_ revents: UInt32) -> Void
    ) async throws -> EventSourceToken {
        try await run { [self] in try addIOOnLoop(fd: fd, events: events, ownsFD: ownsFD, handler: handler) }
    }

    /// Watches a file descriptor for readiness, from the loop thread (preconditioned).
    ///
    /// What ``addIO(fd:events:ownsFD:handler:)`` does, for code that already runs on the loop
    /// thread (a handler, or a `perform` closure).
    ///
    /// - Parameters:
    ///   - fd: The file descriptor to watch. It should be non-blocking.
    ///   - events: The `EPOLL*` event mask.
    ///   - ownsFD: Whether the watch owns `fd` (see ``addIO(fd:events:ownsFD:handler:)``).
    ///   - handler: Called on the loop thread with the reported `revents`.
    /// - Returns: The token that cancels the watch.
    /// - Throws: ``BusError`` if sd-event refuses the fd.
    public func addIOOnLoop(
        fd: Int32, events: UInt32, ownsFD: Bool = false, handler: @escaping @Sendable (_ revents: UInt32) -> Void
    ) throws -> EventSourceToken {
        preconditionInEventLoop()
        let box = EventHandlerBox(io: handler)
        do {
            let token = EventSourceToken(loop: self, kind: .io)
            box.token = token
            var source: OpaquePointer?
            let userdata = Unmanaged.passRetained(box).toOpaque()
            let r = sd_event_add_io(
                event, &source, fd, events,
                { _, _, revents, userdata in
                    let box = Unmanaged<EventHandlerBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.io?(revents)
                    return 0
                }, userdata)
            if r < 0 {
                Unmanaged<EventHandlerBox>.fromOpaque(userdata).release()
                if ownsFD { close(fd) }
                throw BusError(errno: r, context: "sd_event_add_io(fd \(fd))")
            }
            // Closed by sd-event after the source left epoll, never before.
            if ownsFD { sd_event_source_set_io_fd_own(source, 1) }
            return adopt(source!, description: "io-\(fd)", token: token)
        }
    }

    /// Schedules a one-shot timer at an absolute time on a clock.
    ///
    /// The handler runs once on the loop thread when the clock reaches the deadline; the
    /// token can then be rearmed with ``EventSourceToken/rearm(deadline:)`` (also from inside the
    /// handler). sd-event may coalesce wake-ups within `leeway` after the deadline to save power;
    /// pass a microsecond for "as exact as possible".
    ///
    /// - Parameters:
    ///   - clock: The clock.
    ///   - deadline: The absolute deadline on that clock (see ``now(_:)``).
    ///   - leeway: The allowed lateness; zero means sd-event's default (250 ms).
    ///   - handler: Called on the loop thread with the token, so it can rearm or cancel.
    /// - Returns: The token that cancels or rearms the timer.
    /// - Throws: ``BusError`` if the clock is not supported or the loop has shut down.
    public func addTimer(
        on clock: TimerClock, deadline: Duration, leeway: Duration = .zero,
        handler: @escaping @Sendable (EventSourceToken) -> Void
    ) async throws -> EventSourceToken {
        try await run { [self] in
            try addTimerOnLoop(on: clock, deadline: deadline, leeway: leeway, handler: handler)
        }
    }

    /// Schedules a one-shot timer, from the loop thread (preconditioned).
    ///
    /// What ``addTimer(on:deadline:leeway:handler:)`` does, for code that already runs on the loop
    /// thread (a handler, or a `perform` closure).
    ///
    /// - Parameters:
    ///   - clock: The clock.
    ///   - deadline: The absolute deadline on that clock (see ``now(_:)``).
    ///   - leeway: The allowed lateness; zero means sd-event's default (250 ms).
    ///   - handler: Called on the loop thread with the token, so it can rearm or cancel.
    /// - Returns: The token that cancels or rearms the timer.
    /// - Throws: ``BusError`` if the clock is not supported.
    public func addTimerOnLoop(
        on clock: TimerClock, deadline: Duration, leeway: Duration = .zero,
        handler: @escaping @Sendable (EventSourceToken) -> Void
    ) throws -> EventSourceToken {
        preconditionInEventLoop()
        let box = EventHandlerBox(timer: handler)
        do {
            let token = EventSourceToken(loop: self, kind: .timer)
            box.token = token
            var source: OpaquePointer?
            let userdata = Unmanaged.passRetained(box).toOpaque()
            let r = sd_event_add_time(
                event, &source, clock.id, deadline.saturatingMicroseconds, leeway.saturatingMicroseconds,
                { _, _, userdata in
                    let box = Unmanaged<EventHandlerBox>.fromOpaque(userdata!).takeUnretainedValue()
                    if let token = box.token { box.timer?(token) }
                    return 0
                }, userdata)
            if r < 0 {
                Unmanaged<EventHandlerBox>.fromOpaque(userdata).release()
                throw BusError(errno: r, context: "sd_event_add_time(\(clock))")
            }
            return adopt(source!, description: "timer", token: token)
        }
    }

    /// Watches a file or directory with inotify (`sd_event_add_inotify`).
    ///
    /// sd-event owns the inotify instance (one for the loop, shared by every watch) and reads it;
    /// the handler runs on the loop thread with each event's mask and, for a directory, the name
    /// of the entry it is about (empty otherwise). The watch follows the inode `path` names now:
    /// when that inode goes (deleted, or replaced by a rename), the handler sees `IN_IGNORED`
    /// and hears nothing more from it; watch the path again to follow its new inode.
    /// `IN_Q_OVERFLOW` (events were lost) reaches every watch.
    ///
    /// - Parameters:
    ///   - path: The file or directory (with `IN_DONT_FOLLOW` in `mask`, a symlink itself).
    ///   - mask: The `IN_*` events to watch for, with flags such as `IN_ONLYDIR` or `IN_DONT_FOLLOW`.
    ///   - handler: Called on the loop thread with the event's mask and entry name.
    /// - Returns: The token that cancels the watch.
    /// - Throws: ``BusError`` if the path cannot be watched (`ENOENT`, `ENOTDIR`, `EACCES`…) or
    ///   the loop has shut down.
    public func addInotify(
        path: String, mask: UInt32, handler: @escaping @Sendable (_ mask: UInt32, _ name: String) -> Void
    ) async throws -> EventSourceToken {
        try await run { [self] in try addInotifyOnLoop(path: path, mask: mask, handler: handler) }
    }

    /// Watches a file or directory with inotify, from the loop thread (preconditioned).
    ///
    /// What ``addInotify(path:mask:handler:)`` does, for code that already runs on the loop thread.
    ///
    /// - Parameters:
    ///   - path: The file or directory.
    ///   - mask: The `IN_*` events and flags.
    ///   - handler: Called on the loop thread with the event's mask and entry name.
    /// - Returns: The token that cancels the watch.
    /// - Throws: ``BusError`` if the path cannot be watched.
    public func addInotifyOnLoop(
        path: String, mask: UInt32, handler: @escaping @Sendable (_ mask: UInt32, _ name: String) -> Void
    ) throws -> EventSourceToken {
        preconditionInEventLoop()
        let box = EventHandlerBox(inotify: handler)
        let token = EventSourceToken(loop: self, kind: .inotify)
        box.token = token
        var source: OpaquePointer?
        let userdata = Unmanaged.passRetained(box).toOpaque()
        let r = sd_event_add_inotify(
            event, &source, path, mask,
            { _, event, userdata in
                let box = Unmanaged<EventHandlerBox>.fromOpaque(userdata!).takeUnretainedValue()
                guard let event else { return 0 }
                // The name follows the fixed header, NUL-padded to `len` bytes.
                let length = Int(event.pointee.len)
                let name =
                    length == 0
                    ? ""
                    : String(
                        cString: (UnsafeRawPointer(event) + MemoryLayout<inotify_event>.size).assumingMemoryBound(
                            to: CChar.self))
                box.inotify?(event.pointee.mask, name)
                return 0
            }, userdata)
        if r < 0 {
            Unmanaged<EventHandlerBox>.fromOpaque(userdata).release()
            throw BusError(errno: r, context: "sd_event_add_inotify(\(path))")
        }
        return adopt(source!, description: "inotify", token: token)
    }

    /// Finishes adding a source whose userdata is a retained ``EventHandlerBox``: the box is
    /// released when sd-event destroys the source, and the token owns the source. Loop thread only.
    ///
    /// - Parameters:
    ///   - source: The new source.
    ///   - description: Its name in sd-event's debug output.
    ///   - token: The token that cancels it.
    /// - Returns: The token.
    private func adopt(_ source: OpaquePointer, description: String, token: EventSourceToken) -> EventSourceToken {
        preconditionInEventLoop()
        _ = sd_event_source_set_destroy_callback(source) { userdata in
            Unmanaged<EventHandlerBox>.fromOpaque(userdata!).release()
        }
        _ = sd_event_source_set_description(source, description)
        token.attach(source)
        confined.sources[ObjectIdentifier(token)] = token
        return token
    }

    /// Pings the service manager's watchdog from this loop, as sd-event does (`sd_event_set_watchdog`).
    ///
    /// When the process runs with a watchdog (`$WATCHDOG_USEC`, and `$WATCHDOG_PID` unset or this
    /// process), sd-event sends `WATCHDOG=1` at once and then whenever about half the interval has
    /// passed, from the loop thread on its own timer: a loop that hangs stops pinging, and the
    /// service manager notices.
    ///
    /// - Returns: Whether the watchdog is on for this process (`false`: nothing to ping).
    /// - Throws: ``BusError`` if sd-event cannot set the watchdog up or the loop has shut down.
    @discardableResult
    public func enableWatchdog() async throws -> Bool {
        try await run { [self] in
            let r = sd_event_set_watchdog(event, 1)
            try BusError.check(r, "sd_event_set_watchdog")
            return r > 0
        }
    }

    /// The `EPOLL*` bits for ``addIO(fd:events:ownsFD:handler:)``, so callers need not import epoll.
    public enum IOEvents {
        /// `EPOLLIN`: data to read (timerfd, inotify, eventfd, FIFO, socket).
        public static let readable = UInt32(EPOLLIN.rawValue)
        /// `EPOLLPRI`: an exceptional condition; PSI triggers on `memory.pressure` report this.
        public static let priority = UInt32(EPOLLPRI.rawValue)
        /// `EPOLLOUT`: writing will not block.
        public static let writable = UInt32(EPOLLOUT.rawValue)
        /// `EPOLLERR`: an error on the fd (always reported).
        public static let error = UInt32(EPOLLERR.rawValue)
        /// `EPOLLHUP`: the peer hung up (always reported).
        public static let hangUp = UInt32(EPOLLHUP.rawValue)
        /// `EPOLLRDHUP`: the peer closed its writing end.
        public static let readHangUp = UInt32(EPOLLRDHUP.rawValue)
    }

    /// Stops the loop and joins its thread.
    ///
    /// Work queued before the call still runs; later ``perform(_:)`` calls are dropped. Then
    /// the shutdown hooks of attached objects run (connections close), every remaining
    /// source is cancelled, and the thread exits. Safe to call more than once and from any
    /// thread; called on the loop thread it cannot join itself, so it returns at once and
    /// the loop ends after the current iteration.
    public func shutdown() {
        let accepted = pending.withLock { state -> Bool in
            if state.isShutDown { return false }
            state.queue.append({ [self] in confined.stopping = true })
            handedOver.wrappingAdd(1, ordering: .releasing)
            state.isShutDown = true
            return true
        }
        if accepted { wake() }
        if isOnLoopThread { return }
        let mustJoin = joined.withLock { done -> Bool in
            if done { return false }
            done = true
            return true
        }
        if mustJoin { pthread_join(thread, nil) }
    }

    // MARK: - Loop-thread internals

    /// Registers a hook that runs on the loop thread when the loop shuts down. Loop thread only.
    func addShutdownHook(_ hook: @escaping () -> Void) -> UInt64 {
        preconditionInEventLoop()
        let id = confined.nextHookID
        confined.nextHookID += 1
        confined.shutdownHooks.append((id, hook))
        return id
    }

    /// Removes a shutdown hook. Loop thread only.
    func removeShutdownHook(_ id: UInt64) {
        preconditionInEventLoop()
        confined.shutdownHooks.removeAll { $0.id == id }
    }

    /// Forgets a cancelled token. Loop thread only.
    func forget(_ token: EventSourceToken) {
        preconditionInEventLoop()
        confined.sources[ObjectIdentifier(token)] = nil
    }

    private func wake() {
        var one: UInt64 = 1
        // EAGAIN means the counter is saturated, so the loop is awake anyway.
        _ = withUnsafeBytes(of: &one) { write(wakeFD, $0.baseAddress, 8) }
    }

    private func drainQueue() {
        var counter: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &counter) { read(wakeFD, $0.baseAddress, 8) }
        let work = pending.withLock { state -> [@Sendable () -> Void] in
            _ = handedOver.load(ordering: .acquiring)
            let work = state.queue
            state.queue.removeAll()
            return work
        }
        for item in work { item() }
    }

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))), ordering: .releasing)
        csd_mark_event_loop_thread()
        _ = csd_set_thread_name(name)
        logger.debug("event loop started")
        while !confined.stopping {
            let r = sd_event_run(event, UInt64.max)
            if r < 0 {
                // sd-event does not recover from a failed iteration (a broken epoll fd, a fork):
                // trying again would spin. Stop as shutdown() does, so nothing waits for good.
                logger.info("sd_event_run failed: \(BusError(errno: r)); stopping the \(name) loop")
                pending.withLock { $0.isShutDown = true }
                break
            }
        }
        // Shutdown: hooks first (connections flush and close, failing their pending calls), then
        // the remaining sources.
        let hooks = confined.shutdownHooks
        confined.shutdownHooks.removeAll()
        for entry in hooks.reversed() { entry.hook() }
        for token in Array(confined.sources.values) { token.cancelOnLoop() }
        confined.sources.removeAll()
        sd_event_source_disable_unref(wakeSource)
        wakeSource = nil
        // Work accepted before the loop stopped still runs (later perform() calls are refused): it
        // finds its connections closed and fails its callers instead of leaving them waiting.
        let accepted = pending.withLock { state -> [@Sendable () -> Void] in
            _ = handedOver.load(ordering: .acquiring)
            defer { state.queue.removeAll() }
            return state.queue
        }
        for item in accepted { item() }
        sd_event_unref(event)
        logger.debug("event loop stopped")
    }
}

/// A pointer to a semaphore that outlives the closure using it (see performAndWait).
private struct SemaphoreReference: @unchecked Sendable {
    // Safe: the semaphore is allocated before and destroyed after the only closure that
    // posts it has run (performAndWait waits for that post before destroying it).
    let pointer: UnsafeMutablePointer<sem_t>
    init(_ pointer: UnsafeMutablePointer<sem_t>) { self.pointer = pointer }
}

/// Keeps a source's Swift handler alive for as long as sd-event holds the source.
final class EventHandlerBox: @unchecked Sendable {
    // Safe: `io`/`timer`/`inotify` are immutable; `token` is written once on the loop thread before the
    // source exists and read only by the source's callbacks, which run on the loop thread.
    let io: (@Sendable (UInt32) -> Void)?
    let timer: (@Sendable (EventSourceToken) -> Void)?
    let inotify: (@Sendable (UInt32, String) -> Void)?
    weak var token: EventSourceToken?

    init(io: @escaping @Sendable (UInt32) -> Void) {
        self.io = io
        self.timer = nil
        self.inotify = nil
    }

    init(timer: @escaping @Sendable (EventSourceToken) -> Void) {
        self.io = nil
        self.timer = timer
        self.inotify = nil
    }

    init(inotify: @escaping @Sendable (UInt32, String) -> Void) {
        self.io = nil
        self.timer = nil
        self.inotify = inotify
    }
}
