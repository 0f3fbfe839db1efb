import AppLifecycle
import AppLifecycleSystemd
import CLinuxSupport
import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus

/// One running hosted app: its process, watched, suspended, resumed and ended by the daemon.
///
/// ``launch(manifest:launchOptions:environment:baseEnvironment:cgroupDirectory:loop:logger:onExit:)``
/// starts the manifest's executable with `posix_spawn` in a process group of its own (so the
/// app's children are signalled with it), stdin on `/dev/null`, every fd above 2 closed,
/// default signal dispositions and an empty signal mask. Exit is detected without `SIGCHLD`:
/// a pidfd becomes readable when the process ends, the event loop watches it, and
/// `waitid(P_PIDFD)` reaps it and yields the status for `onExit`.
///
/// Every operation runs on the event loop's thread (methods hop there with `perform`), and
/// the pidfd is closed on that thread right after reaping, so no signal can reach a recycled
/// pid: while the process is unreaped its pid (and process-group id) cannot be reused.
/// The mutable state sits in a `Mutex`, which makes the type `Sendable` without `@unchecked`.
///
/// Suspension uses ``suspensionMethod``, chosen at launch by
/// ``SuspensionMethod/select(appCgroup:daemonCgroup:cgroup2MountPoint:hasFreezeFile:)``.
/// With `SIGSTOP` the stop is confirmed from the kernel: the kernel offers no fd for "child
/// stopped" (a pidfd only polls readable on exit, and a `signalfd` for `SIGCHLD` would need
/// `SIGCHLD` blocked in every thread of the process, which a Swift runtime with its own
/// threads cannot promise), so one helper thread blocks in `waitid(P_PIDFD, WSTOPPED)` — a
/// wait on the event, not a poll — and hands the result to the loop, which confirms the `T`
/// state in `/proc/PID/stat`.
final class AppProcess: Sendable {
    /// A callback for the end of a suspend or resume request.
    typealias Completion = @Sendable (Result<Void, AppProcessError>) -> Void

    /// The app's identifier (from its manifest).
    let appID: String
    /// The process id (also the id of the app's process group).
    let pid: pid_t
    /// How this app is suspended (chosen at launch).
    let suspensionMethod: SuspensionMethod

    private let pidfd: Int32
    private let loop: EventLoop
    private let onExit: @Sendable (AppExitStatus) -> Void
    private let state = Mutex(State())
    private let logger: Logger

    private struct Request {
        var suspend: Bool
        var completion: Completion
    }

    private struct State {
        var exitStatus: AppExitStatus?
        var exitWatch: EventSourceToken?
        var suspended = false
        var pending: Request?
        var freezerWatch: FreezerWatch?
        var stopWaiterRunning = false
        var terminating = false
        var terminationTimer: EventSourceToken?
    }

    private init(
        appID: String, pid: pid_t, pidfd: Int32, suspensionMethod: SuspensionMethod, loop: EventLoop, logger: Logger,
        onExit: @escaping @Sendable (AppExitStatus) -> Void
    ) {
        self.appID = appID
        self.pid = pid
        self.pidfd = pidfd
        self.suspensionMethod = suspensionMethod
        self.loop = loop
        self.onExit = onExit
        var logger = logger
        logger[metadataKey: "app_id"] = "\(appID)"
        logger[metadataKey: "pid"] = "\(pid)"
        self.logger = logger
    }

    // MARK: Launch

    /// The environment of an app: the daemon's, the caller's additions, then the lifecycle variables.
    ///
    /// `LIFECYCLE_APP_ID` is the manifest id and `LIFECYCLE_LAUNCH_OPTIONS` the launch options'
    /// JSON (``LaunchOptions/userInfo``'s `json`, keys sorted); these two always win, so a
    /// caller cannot make an app believe it is another.
    ///
    /// - Parameters:
    ///   - base: The daemon's environment.
    ///   - launchOptions: Why the app is launched.
    ///   - extra: Variables the caller adds (they override `base`).
    /// - Returns: The environment.
    /// - Throws: ``AppProcessError`` with ``AppProcessError/Code/invalidEnvironment`` for a name
    ///   that is empty or holds `=` or NUL, or a value holding NUL.
    /// What systemd gives lifecycled's own unit and no app may inherit: its state, cache, runtime,
    /// logs, configuration and credentials directories (an app reading `$STATE_DIRECTORY` would
    /// share the daemon's files and every other app's), and its notify socket, watchdog and
    /// socket-activation variables (an app would answer for the daemon). The journal stream stays:
    /// the app's standard error is that stream.
    static let daemonOnlyEnvironment: Set<String> = [
        "STATE_DIRECTORY", "CACHE_DIRECTORY", "RUNTIME_DIRECTORY", "LOGS_DIRECTORY", "CONFIGURATION_DIRECTORY",
        "CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
        "LISTEN_FDNAMES", "MAINPID", "MANAGERPID", "TRIGGER_UNIT", "TRIGGER_PATH", "TRIGGER_TIMER_REALTIME_USEC",
        "TRIGGER_TIMER_MONOTONIC_USEC", "MONITOR_SERVICE_RESULT", "MONITOR_EXIT_CODE", "MONITOR_EXIT_STATUS",
        "XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID",
    ]

    static func environment(
        base: [String: String], appID: String, launchOptions: LaunchOptions, extra: [String: String]
    ) throws(AppProcessError) -> [String: String] {
        for (name, value) in extra {
            guard !name.isEmpty, !name.contains("="), !name.utf8.contains(0), !value.utf8.contains(0) else {
                throw AppProcessError(.invalidEnvironment, "invalid environment entry '\(name)'")
            }
        }
        var result = base.filter {
            !$0.key.isEmpty && !$0.key.contains("=") && !$0.key.utf8.contains(0) && !$0.value.utf8.contains(0)
                && !Self.daemonOnlyEnvironment.contains($0.key)
        }
        result.merge(extra) { _, new in new }
        result[LifecycledProtocol.appIDEnvironment] = appID
        result[LifecycledProtocol.launchOptionsEnvironment] = launchOptions.userInfo.json
        return result
    }

    /// Starts an app and watches it until it exits.
    ///
    /// - Parameters:
    ///   - manifest: The app to start (its executable and arguments).
    ///   - launchOptions: Why it is launched; passed as `LIFECYCLE_LAUNCH_OPTIONS`.
    ///   - environment: Variables to add to the daemon's environment.
    ///   - baseEnvironment: The daemon's environment (default: this process's).
    ///   - cgroupDirectory: A delegated cgroup v2 directory to move the app into, so it can be
    ///     frozen with the cgroup freezer; `nil` keeps it in the daemon's cgroup (`SIGSTOP`).
    ///     If the move fails, the app keeps running with `SIGSTOP` suspension and a warning is logged.
    ///   - loop: The event loop that watches the process and runs the timers.
    ///   - onExit: Called once on the loop thread with the exit status, after the process is reaped.
    /// - Returns: The running process.
    /// - Throws: ``AppProcessError`` if the environment is invalid, `posix_spawn` fails, or
    ///   the kernel has no pidfds (the child is then killed and reaped before the throw).
    static func launch(
        manifest: AppManifest, launchOptions: LaunchOptions = LaunchOptions(),
        environment extra: [String: String] = [:],
        baseEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        cgroupDirectory: String? = nil, loop: EventLoop, logger baseLogger: Logger,
        onExit: @escaping @Sendable (AppExitStatus) -> Void
    ) throws(AppProcessError) -> AppProcess {
        let env = try environment(base: baseEnvironment, appID: manifest.id, launchOptions: launchOptions, extra: extra)
        var logger = baseLogger
        logger[metadataKey: "app_id"] = "\(manifest.id)"
        let pid: pid_t
        // The cgroup the app still has to be moved into, when it could not start inside it.
        var pendingMove: String?
        switch cgroupDirectory.map({
            spawn(executable: manifest.executable, arguments: manifest.arguments, environment: env, intoCgroup: $0)
        }) {
        case .spawned(let child)?:
            pid = child
        case .failed(let error)?:
            throw error
        case .unsupported(let reason)?:
            logger.notice(
                "cannot start \(manifest.id) inside \(cgroupDirectory ?? "") (\(reason)); moving it there after the spawn"
            )
            pendingMove = cgroupDirectory
            pid = try spawn(executable: manifest.executable, arguments: manifest.arguments, environment: env)
        case nil:
            pid = try spawn(executable: manifest.executable, arguments: manifest.arguments, environment: env)
        }

        let pidfd = cls_pidfd_open(pid, 0)
        guard pidfd >= 0 else {
            let code = errno
            // Without a pidfd the app cannot be supervised: end it now (it is our child, so
            // waitpid on its own pid cannot take another process's status).
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            throw AppProcessError(.pidfdUnavailable, "pidfd_open(\(pid))", errno: code)
        }

        if let pendingMove {
            // Older kernels: a process the app forks before this move stays in the daemon's cgroup.
            do {
                try CgroupFreezer.move(pid, into: pendingMove)
            } catch {
                logger.warning("cannot move \(manifest.id) into \(pendingMove), suspending with SIGSTOP: \(error)")
            }
        }
        let method = SuspensionMethod.select(
            appCgroup: ProcFS.unifiedCgroup(of: pid), daemonCgroup: ProcFS.unifiedCgroup(of: nil),
            cgroup2MountPoint: ProcFS.cgroup2MountPoint(), hasFreezeFile: { access($0, W_OK) == 0 })

        let process = AppProcess(
            appID: manifest.id, pid: pid, pidfd: pidfd, suspensionMethod: method, loop: loop, logger: baseLogger,
            onExit: onExit)
        // The watch is handed to the loop, not waited for: the caller (the daemon's main actor)
        // never blocks. The loop adds it before any other work for this process (perform keeps
        // submission order), and it is level-triggered, so an app that died at once is still seen.
        guard loop.perform({ process.watchExit() }) else {
            kill(pid, SIGKILL)
            _ = waitOnPidfd(pidfd, options: WEXITED)
            close(pidfd)
            throw AppProcessError(.loopShutDown, "cannot watch the pidfd: the event loop has shut down")
        }
        process.logger.info("launched \(manifest.executable), suspension by \(method)")
        return process
    }

    /// What starting a process directly inside a cgroup came to.
    private enum CgroupSpawn {
        /// Started in the cgroup.
        case spawned(pid_t)
        /// The kernel (clone3, `CLONE_INTO_CGROUP`) or the directory does not allow it: fall back.
        case unsupported(String)
        /// The process could not be started (for example the executable failed to exec).
        case failed(AppProcessError)
    }

    /// Starts the app with `clone3(CLONE_INTO_CGROUP)`, so it and everything it forks start in
    /// `cgroupDirectory`; the child is set up as ``spawn(executable:arguments:environment:)`` does.
    private static func spawn(
        executable: String, arguments: [String], environment: [String: String], intoCgroup cgroupDirectory: String
    ) -> CgroupSpawn {
        let cgroupFD = open(cgroupDirectory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard cgroupFD >= 0 else { return .unsupported("open: \(String(cString: strerror(errno)))") }
        defer { close(cgroupFD) }
        let (pid, code) = withExecVectors(executable, arguments, environment) { argv, envp in
            (cls_spawn_into_cgroup(executable, argv, envp, cgroupFD), errno)
        }
        switch pid {
        case 1...: return .spawned(pid)
        case -2: return .unsupported("clone3: \(String(cString: strerror(code)))")
        default: return .failed(AppProcessError(.spawnFailed, "exec \(executable)", errno: code))
        }
    }

    /// Runs `body` with exec's `argv` (the executable, then the arguments) and `envp`
    /// (`KEY=value`, sorted), each NULL-terminated; the strings are freed afterwards.
    private static func withExecVectors<Result>(
        _ executable: String, _ arguments: [String], _ environment: [String: String],
        _ body: (_ argv: [UnsafeMutablePointer<CChar>?], _ envp: [UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        return body(argv, envp)
    }

    /// Starts the app with `posix_spawn` through ``cls_spawn``: a process group of its own, stdin from
    /// /dev/null, lifecycled's stdout and stderr (the journal under systemd), no other inherited fd,
    /// and a clean signal mask and dispositions whatever the spawning thread blocks.
    private static func spawn(
        executable: String, arguments: [String], environment: [String: String]
    ) throws(AppProcessError) -> pid_t {
        var pid: pid_t = 0
        let r = withExecVectors(executable, arguments, environment) { argv, envp in
            cls_spawn(&pid, executable, argv, envp, STDOUT_FILENO, STDERR_FILENO, 1)
        }
        guard r == 0 else { throw AppProcessError(.spawnFailed, "posix_spawn \(executable)", errno: r) }
        return pid
    }

    // MARK: State

    /// The exit status, once the process has exited and been reaped.
    var exitStatus: AppExitStatus? { state.withLock { $0.exitStatus } }

    /// Whether the last suspend was confirmed and no resume followed.
    var isSuspended: Bool { state.withLock { $0.suspended } }

    /// The memory the app holds, in bytes, or `nil` once the process is gone: its cgroup's
    /// `memory.current` when it has a cgroup of its own with the memory controller (every
    /// process it started counts), else the main process's resident set (`/proc/PID/statm`).
    var residentBytes: UInt64? {
        guard exitStatus == nil else { return nil }
        if case .freezer(let directory) = suspensionMethod,
            let text = ProcFS.read(directory + "/memory.current"),
            let bytes = text.split(whereSeparator: \.isWhitespace).first.flatMap({ UInt64($0) })
        {
            return bytes
        }
        return ProcFS.residentBytes(of: pid)
    }

    // MARK: Exit

    /// What `waitid` reported: the child's `si_code` and `si_status`, `nil` for "no change yet" (`WNOHANG`), or an errno.
    private typealias WaitResult = Result<(code: Int32, status: Int32)?, Errno>

    /// An `errno` value as an `Error`, so it fits in a `Result`.
    private struct Errno: Error, Equatable {
        var code: Int32
    }

    /// `waitid(P_PIDFD, fd, …)`, unpacked.
    ///
    /// - Parameters:
    ///   - fd: The pidfd.
    ///   - options: `WEXITED`, `WSTOPPED`, `WNOHANG`, ….
    private static func waitOnPidfd(_ fd: Int32, options: Int32) -> WaitResult {
        var info = siginfo_t()
        guard waitid(P_PIDFD, id_t(fd), &info, options) == 0 else { return .failure(Errno(code: errno)) }
        let pid = info._sifields._sigchld.si_pid
        return .success(pid == 0 ? nil : (info.si_code, info._sifields._sigchld.si_status))
    }

    /// Watches the pidfd until the process exits. Loop thread, once, right after the launch.
    private func watchExit() {
        do {
            let token = try loop.addIOOnLoop(fd: pidfd, events: EventLoop.IOEvents.readable) { [self] _ in
                handleExitReadiness()
            }
            state.withLock { $0.exitWatch = token }
        } catch {
            // An unwatched app would never be reaped: end it, wait for the exit (at once for a
            // SIGKILLed process) without reaping, and report it as any other exit.
            logger.error("cannot watch the pidfd: \(error); ending the app")
            kill(pid, SIGKILL)
            _ = Self.waitOnPidfd(pidfd, options: WEXITED | WNOWAIT)
            handleExitReadiness()
        }
    }

    /// The pidfd is readable: reap the process if it has exited. Loop thread.
    private func handleExitReadiness() {
        let reaped: AppExitStatus
        switch Self.waitOnPidfd(pidfd, options: WEXITED | WNOHANG) {
        case .failure(let error) where error.code == EINTR || error.code == EAGAIN:
            return
        case .failure(let error):
            logger.error("waitid on the pidfd failed: \(String(cString: strerror(error.code))); status unknown")
            reaped = .unknown
        case .success(nil):
            return
        case .success(let info?):
            reaped = AppExitStatus(code: info.code, status: info.status)
        }
        let (watch, timer, freezer, pending) = state.withLock { state in
            state.exitStatus = reaped
            state.suspended = false
            defer {
                state.exitWatch = nil
                state.terminationTimer = nil
                state.freezerWatch = nil
                state.pending = nil
            }
            return (state.exitWatch, state.terminationTimer, state.freezerWatch, state.pending)
        }
        watch?.cancel()
        timer?.cancel()
        freezer?.finish()
        close(pidfd)
        logger.info("\(reaped)")
        pending?.completion(.failure(AppProcessError(.notRunning, "\(appID) exited (\(reaped))")))
        onExit(reaped)
    }

    // MARK: Signals

    /// Sends a signal to the app's process group, and to the app itself if it left that group. Loop thread.
    @discardableResult
    private func send(_ signal: Int32) -> AppProcessError? {
        guard state.withLock({ $0.exitStatus == nil }) else {
            return AppProcessError(.notRunning, "\(appID) has exited")
        }
        let groupResult = kill(-pid, signal)
        let groupErrno = errno
        if groupResult == 0 && getpgid(pid) == pid { return nil }
        if cls_pidfd_send_signal(pidfd, signal) == 0 { return nil }
        let code = groupResult == 0 ? errno : groupErrno
        return AppProcessError(.signalFailed, "signal \(signal) to \(appID)", errno: code)
    }

    // MARK: Suspend and resume

    /// Suspends the app: freezes its cgroup or stops its process group, and confirms it.
    ///
    /// `completion` runs on the loop thread once the kernel confirms (`frozen 1` in
    /// `cgroup.events`, or state `T` in `/proc/PID/stat`), or with an error: the process exited
    /// (``AppProcessError/Code/notRunning``), a resume came first
    /// (``AppProcessError/Code/superseded``), the signal or freezer write failed. Suspending a
    /// suspended app succeeds at once.
    ///
    /// - Parameters:
    ///   - completion: Called once with the outcome.
    func suspend(completion: @escaping Completion) {
        request(suspend: true, completion: completion)
    }

    /// Resumes a suspended app: thaws its cgroup or continues its process group, and confirms it.
    ///
    /// `completion` runs on the loop thread once the kernel confirms (`frozen 0`, or a state
    /// other than `T`), or with an error as for ``suspend(completion:)``. Resuming a running
    /// app sends the resume anyway (it is harmless) and succeeds.
    ///
    /// - Parameters:
    ///   - completion: Called once with the outcome.
    func resume(completion: @escaping Completion) {
        request(suspend: false, completion: completion)
    }

    /// Suspends the app and waits for the confirmation (see ``suspend(completion:)``).
    ///
    /// - Throws: ``AppProcessError``.
    func suspend() async throws(AppProcessError) {
        try await withResult { self.suspend(completion: $0) }
    }

    /// Resumes the app and waits for the confirmation (see ``resume(completion:)``).
    ///
    /// - Throws: ``AppProcessError``.
    func resume() async throws(AppProcessError) {
        try await withResult { self.resume(completion: $0) }
    }

    private func withResult(_ start: (@escaping Completion) -> Void) async throws(AppProcessError) {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, AppProcessError>, Never>) in
            start { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    private func request(suspend: Bool, completion: @escaping Completion) {
        let accepted = loop.perform { [self] in
            let (exited, previous, oldWatch, alreadyThere) = state.withLock { state in
                let previous = state.pending
                let watch = state.freezerWatch
                state.pending = nil
                state.freezerWatch = nil
                return (state.exitStatus != nil, previous, watch, suspend && state.suspended && previous == nil)
            }
            oldWatch?.finish()
            previous?.completion(
                .failure(AppProcessError(.superseded, "a newer \(suspend ? "suspend" : "resume") request came")))
            if exited { return completion(.failure(AppProcessError(.notRunning, "\(appID) has exited"))) }
            if alreadyThere { return completion(.success(())) }
            state.withLock { $0.pending = Request(suspend: suspend, completion: completion) }
            switch suspensionMethod {
            case .stopSignal: startSignalRequest(suspend: suspend)
            case .freezer(let directory):
                startFreezerRequest(suspend: suspend, freezer: CgroupFreezer(directory: directory))
            }
        }
        if !accepted { completion(.failure(AppProcessError(.loopShutDown, "the event loop has shut down"))) }
    }

    /// Ends the pending request with a result, if it is still the one for `suspend`. Loop thread.
    private func finishPending(suspend: Bool, _ result: Result<Void, AppProcessError>) {
        let request = state.withLock { state -> Request? in
            guard let pending = state.pending, pending.suspend == suspend else { return nil }
            state.pending = nil
            if case .success = result { state.suspended = suspend }
            return pending
        }
        if case .success = result { logger.info(suspend ? "suspended" : "resumed") }
        request?.completion(result)
    }

    private func startSignalRequest(suspend: Bool) {
        if let error = send(suspend ? SIGSTOP : SIGCONT) {
            return finishPending(suspend: suspend, .failure(error))
        }
        if suspend {
            if ProcFS.state(of: pid) == "T" { return finishPending(suspend: true, .success(())) }
            awaitStop()
        } else {
            // SIGCONT wakes stopped tasks inside kill(2) itself, so the state is already updated.
            let now = ProcFS.state(of: pid)
            finishPending(
                suspend: false,
                now == "T"
                    ? .failure(AppProcessError(.notConfirmed, "\(appID) is still stopped after SIGCONT"))
                    : .success(()))
        }
    }

    /// Blocks a helper thread in `waitid(WSTOPPED)` until the app stops (or exits). Loop thread.
    private func awaitStop() {
        let start = state.withLock { state -> Bool in
            if state.stopWaiterRunning { return false }
            state.stopWaiterRunning = true
            return true
        }
        guard start else { return }
        // The helper owns a duplicate of the pidfd: the loop may close the original after
        // reaping while the helper is still about to call waitid.
        let fd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3)
        guard fd >= 0 else {
            state.withLock { $0.stopWaiterRunning = false }
            return finishPending(
                suspend: true, .failure(AppProcessError(.notConfirmed, "cannot duplicate the pidfd", errno: errno)))
        }
        let started = DetachedThread.start { [self, loop] in
            var failure: Int32 = EINTR
            while failure == EINTR {
                if case .failure(let error) = Self.waitOnPidfd(fd, options: WSTOPPED) {
                    failure = error.code
                } else {
                    failure = 0
                }
            }
            close(fd)
            let reported = failure
            loop.perform { self.stopWaiterReturned(errno: reported) }
        }
        if started != 0 {
            close(fd)
            state.withLock { $0.stopWaiterRunning = false }
            finishPending(
                suspend: true,
                .failure(AppProcessError(.notConfirmed, "cannot start the stop waiter thread", errno: started)))
        }
    }

    private func stopWaiterReturned(errno failure: Int32) {
        let waiting = state.withLock { state -> Bool in
            state.stopWaiterRunning = false
            return state.exitStatus == nil && state.pending?.suspend == true
        }
        guard waiting else { return }
        if ProcFS.state(of: pid) == "T" {
            finishPending(suspend: true, .success(()))
        } else if failure == 0 {
            // A stop that a resume has already undone: wait for the next one.
            awaitStop()
        } else if failure != ECHILD {
            // ECHILD means the app exited; the exit handler ends the request.
            finishPending(suspend: true, .failure(AppProcessError(.notConfirmed, "waitid(WSTOPPED)", errno: failure)))
        }
    }

    private func startFreezerRequest(suspend: Bool, freezer: CgroupFreezer) {
        do {
            try freezer.request(frozen: suspend)
            let watch = try freezer.watch(until: suspend, loop: loop) { [self] result in
                finishPending(suspend: suspend, result)
            }
            state.withLock { state in
                if state.pending != nil { state.freezerWatch = watch }
            }
            if state.withLock({ $0.pending == nil }) { watch.finish() }
        } catch {
            finishPending(suspend: suspend, .failure(error))
        }
    }

    // MARK: Termination

    /// Ends the app with escalation: after `policy.deadline` `SIGTERM`, after `policy.grace` more `SIGKILL`.
    ///
    /// Call it when the app has been asked to end (the bus delivers
    /// `applicationWillTerminate`): an app that exits by itself within the deadline gets no
    /// signal at all, and every timer is cancelled as soon as the process exits. A suspended
    /// app is resumed (thawed, or `SIGCONT`) right before `SIGTERM`, so it can handle it;
    /// `SIGKILL` needs no resume. Signals go to the app's process group. A second call while
    /// one is under way does nothing. The timers run on the event loop (`CLOCK_MONOTONIC`).
    ///
    /// - Parameters:
    ///   - policy: The deadline and the grace.
    ///   - onStep: Called on the loop thread after each signal sent.
    func terminate(
        policy: TerminationPolicy = TerminationPolicy(),
        onStep: (@Sendable (TerminationPolicy.Step) -> Void)? = nil
    ) {
        loop.perform { [self] in
            let start = state.withLock { state -> Bool in
                guard state.exitStatus == nil, !state.terminating else { return false }
                state.terminating = true
                return true
            }
            guard start else { return }
            logger.info("terminating: SIGTERM in \(policy.deadline), SIGKILL \(policy.grace) later")
            schedule(after: policy.deadline) { [self] in
                continueIfSuspended()
                send(SIGTERM)
                onStep?(.sentTerminate)
                schedule(after: policy.grace) { [self] in
                    send(SIGKILL)
                    onStep?(.sentKill)
                }
            }
        }
    }

    /// Ends the app at once with `SIGKILL`, without resuming it first.
    ///
    /// For purging a suspended app under memory pressure: it runs no code, so it has nothing
    /// to save, and `SIGKILL` ends a stopped or frozen process group without waking it.
    /// The exit is reported through `onExit` as usual; calling it on an exited app does nothing.
    ///
    /// - Parameters:
    ///   - reason: Why, for the log.
    func killNow(reason: String) {
        loop.perform { [self] in
            guard state.withLock({ $0.exitStatus == nil }) else { return }
            logger.info("SIGKILL: \(reason)")
            send(SIGKILL)
        }
    }

    /// Undoes a suspension (or one under way) so a `SIGTERM` can be handled. Loop thread.
    private func continueIfSuspended() {
        let (pending, watch) = state.withLock { state in
            defer {
                state.pending = nil
                state.freezerWatch = nil
                state.suspended = false
            }
            return (state.pending, state.freezerWatch)
        }
        watch?.finish()
        pending?.completion(.failure(AppProcessError(.superseded, "\(appID) is being terminated")))
        switch suspensionMethod {
        case .stopSignal:
            send(SIGCONT)
        case .freezer(let directory):
            do { try CgroupFreezer(directory: directory).request(frozen: false) } catch {
                logger.warning("cannot thaw before SIGTERM: \(error)")
            }
        }
    }

    /// Runs `body` on the loop after `delay`, unless the process has exited by then. Loop thread.
    private func schedule(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        do {
            let token = try loop.addTimerOnLoop(
                on: .monotonic, deadline: EventLoop.now(.monotonic) + delay, leeway: .milliseconds(1)
            ) { [self] token in
                token.cancel()
                guard state.withLock({ $0.exitStatus == nil }) else { return }
                body()
            }
            let exited = state.withLock { state -> Bool in
                state.terminationTimer = token
                return state.exitStatus != nil
            }
            if exited { token.cancel() }
        } catch {
            logger.error("cannot arm the termination timer: \(error); sending SIGKILL now")
            send(SIGKILL)
        }
    }
}
