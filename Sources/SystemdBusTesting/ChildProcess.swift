import CLinuxSupport
import Foundation
import Glibc

/// A child process started with posix_spawn, stopped by its own pid.
///
/// No shell, no process-group or name-based killing; the child starts with an empty signal
/// mask and default dispositions (a child spawned from a Swift concurrency thread would otherwise
/// inherit its blocked signals and ignore SIGTERM).
public final class ChildProcess: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `pid` and `stdoutFD` are immutable; the read buffer is
    // only touched while holding `readLock`, `reaped` and `exitStatus` while holding `exitLock`.
    //
    // Two locks, so a reader blocked in read(2) never holds up terminateAndWait. Reaping happens
    // only under `exitLock`, and the signal is sent under it only while the child is unreaped,
    // so it cannot hit a reused pid. Waiting for the exit itself (waitid with WNOWAIT) happens
    // outside the lock, so a waiter never keeps terminateAndWait from sending its signal.

    /// Where standard output goes.
    public enum Output {
        /// A pipe, read with ``readLine()`` and ``readAll()``.
        case pipe
        /// A pipe that standard error goes to too: what a person at the terminal reads.
        case pipeWithStandardError
        /// A file, created if missing and appended to (stdout and stderr both go there).
        case file(String)
        /// `/dev/null`.
        case null
    }

    /// The child's pid.
    public let pid: pid_t
    private let stdoutFD: Int32?
    private let readLock = NSLock()
    private let exitLock = NSLock()
    private var reaped = false
    private var exitStatus: Int32 = 0
    private var buffer = Data()

    private init(pid: pid_t, stdoutFD: Int32?) {
        self.pid = pid
        self.stdoutFD = stdoutFD
    }

    /// How long `deinit` waits for the child to end after SIGTERM before it sends SIGKILL.
    static let terminationGrace: Duration = .seconds(5)

    deinit {
        terminateAndWait(escalatingAfter: Self.terminationGrace)
        if let stdoutFD { close(stdoutFD) }
    }

    /// Starts `executable` with `arguments`; stderr goes where stdout goes (or /dev/null for pipes).
    ///
    /// The child is set up by `cls_spawn`, the project's one spawn helper (lifecycled starts its
    /// apps with it too): stdin from /dev/null, no inherited fd above stderr, an empty signal mask
    /// and default dispositions.
    ///
    /// - Parameters:
    ///   - executable: The absolute path of the program (no `PATH` search).
    ///   - arguments: The arguments after `argv[0]`, which is `executable`.
    ///   - environment: The child's whole environment; `nil` passes this process's own.
    ///   - stdout: Where the child's standard output (and error) go.
    /// - Throws: ``FixtureError`` when the output cannot be set up or `posix_spawn` fails.
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdout: Output = .null
    ) throws -> ChildProcess {
        var readEnd: Int32?
        var outputFD: Int32 = -1
        var errorFD: Int32 = -1
        switch stdout {
        case .pipe, .pipeWithStandardError:
            var fds: [Int32] = [0, 0]
            // A socketpair created close-on-exec atomically, so no concurrently spawned child
            // inherits the write end (which would keep readAll() from seeing end of file).
            let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else {
                throw FixtureError("socketpair: \(String(cString: strerror(errno)))")
            }
            readEnd = fds[0]
            outputFD = fds[1]
            if case .pipeWithStandardError = stdout { errorFD = outputFD }
        case .file(let path):
            outputFD = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
            guard outputFD >= 0 else { throw FixtureError("open \(path): \(String(cString: strerror(errno)))") }
            errorFD = outputFD
        case .null:
            break
        }
        defer { if outputFD >= 0 { close(outputFD) } }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environment = environment ?? ProcessInfo.processInfo.environment
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }

        var pid: pid_t = 0
        let r = cls_spawn(&pid, executable, argv, env, outputFD, errorFD, 0)
        guard r == 0 else {
            if let readEnd { close(readEnd) }
            throw FixtureError("posix_spawn \(executable): \(String(cString: strerror(r)))")
        }
        return ChildProcess(pid: pid, stdoutFD: readEnd)
    }

    /// Runs a command to completion and returns its exit status and standard output (and its
    /// standard error, in the order written, with `includingStandardError`).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        includingStandardError: Bool = false
    ) throws -> (status: Int32, output: String) {
        let child = try spawn(
            executable, arguments, environment: environment,
            stdout: includingStandardError ? .pipeWithStandardError : .pipe)
        let output = child.readAll()
        let status = child.waitForExit()
        return (status, output)
    }

    /// Reads one line of standard output (blocking), or `nil` at end of file.
    public func readLine() -> String? {
        readLock.withLock {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    return line
                }
                guard let chunk = readChunk() else { return nil }
                buffer.append(chunk)
            }
        }
    }

    /// Reads standard output to end of file.
    public func readAll() -> String {
        readLock.withLock {
            while let chunk = readChunk() { buffer.append(chunk) }
            defer { buffer.removeAll() }
            return String(decoding: buffer, as: UTF8.self)
        }
    }

    private func readChunk() -> Data? {
        guard let stdoutFD else { return nil }
        var bytes = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(stdoutFD, &bytes, bytes.count)
            if n > 0 { return Data(bytes[0..<n]) }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Whether the process has exited, without blocking (reaps it if so).
    public var hasExited: Bool {
        exitLock.withLock {
            reapIfExited()
            return reaped
        }
    }

    /// Waits for the process to exit and returns its exit code (128+signal if killed).
    @discardableResult
    public func waitForExit() -> Int32 {
        if !exitLock.withLock({ reaped }) {
            // Wait for the exit without reaping (and without the lock); reaping is under the lock.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        }
        return exitLock.withLock {
            reapIfExited()
            let signal = exitStatus & 0x7f
            return signal == 0 ? (exitStatus >> 8) & 0xff : 128 + signal
        }
    }

    /// Sends SIGTERM to this process's own pid (if not reaped yet) and returns at once, so a test
    /// can watch what the process does while it stops; ``waitForExit()`` then reaps it.
    ///
    /// - Returns: Whether the signal was sent (`false`: the process was already reaped).
    @discardableResult
    public func terminate() -> Bool {
        signal(SIGTERM)
    }

    /// Sends SIGTERM to this process's own pid (if not reaped yet) and waits for it.
    public func terminateAndWait() {
        if signal(SIGTERM) { waitForExit() }
    }

    /// Sends SIGTERM, waits at most `grace` for the child to end, then sends SIGKILL and waits.
    ///
    /// A child that ignores or blocks SIGTERM cannot hang the caller (a test's teardown) for good.
    /// The wait is on the child's pidfd (`poll`), not a sleep loop.
    ///
    /// - Parameters:
    ///   - grace: How long the child may take to exit after SIGTERM.
    /// - Returns: Whether SIGKILL was needed.
    @discardableResult
    public func terminateAndWait(escalatingAfter grace: Duration) -> Bool {
        // Opened while the child is unreaped (under the lock), so the pidfd cannot name a reused pid.
        let pidfd = exitLock.withLock { () -> Int32 in
            guard !reaped else { return -1 }
            return cls_pidfd_open(pid, 0)
        }
        guard signal(SIGTERM) else {
            if pidfd >= 0 { close(pidfd) }
            return false
        }
        var exited = true
        if pidfd >= 0 {
            defer { close(pidfd) }
            let (seconds, attoseconds) = grace.components
            let milliseconds = Int32(clamping: seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
            var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
            var ready: Int32
            repeat { ready = poll(&entry, 1, milliseconds) } while ready < 0 && errno == EINTR
            exited = ready > 0
        }
        if !exited { signal(SIGKILL) }
        waitForExit()
        return !exited
    }

    /// Sends `number` to the child's own pid while it is unreaped; `false` once it was reaped.
    @discardableResult
    private func signal(_ number: Int32) -> Bool {
        exitLock.withLock { () -> Bool in
            guard !reaped else { return false }
            Glibc.kill(pid, number)
            return true
        }
    }

    /// Reaps the child if it has exited. Holding `exitLock` only.
    private func reapIfExited() {
        guard !reaped else { return }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
        if result == pid {
            reaped = true
            exitStatus = status
        } else if result < 0 {
            // ECHILD: nothing left to reap (someone else's waitpid(-1) took it); count it as gone.
            reaped = true
        }
    }

    /// Stops a process the test started only indirectly, such as a service a private bus
    /// activated: SIGTERM to its pid, then waits up to 5 s before SIGKILL.
    ///
    /// It is not the test's child, so it cannot be reaped here: it counts as gone once
    /// `kill(pid, 0)` fails or the kernel shows it as a zombie (its parent has not reaped it yet).
    ///
    /// - Parameters:
    ///   - pid: The process, for example from `GetConnectionUnixProcessID` of the name it owns.
    public static func terminate(activatedService pid: pid_t) {
        func exited() -> Bool {
            guard kill(pid, 0) == 0 else { return true }
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
        }
        kill(pid, SIGTERM)
        for _ in 0..<500 {
            if exited() { return }
            usleep(10_000)
        }
        kill(pid, SIGKILL)
    }
}
