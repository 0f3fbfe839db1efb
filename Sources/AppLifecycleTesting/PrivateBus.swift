import Foundation

/// A private `dbus-daemon` for tests, with a permissive system-type configuration.
///
/// Each instance runs its own daemon listening on `unix:path=<tmpdir>/bus`, so tests can
/// run in parallel without touching the machine's buses. The configuration is of type
/// `system` (so services that expect a system bus behave as on one), authenticates with
/// `EXTERNAL`, and lets everyone own any name and send and receive everything.
///
/// ``stop()`` kills the daemon by its own pid, reaps it and removes the directory; it also
/// runs in `deinit`, so a failing test still stops its daemon. ``restart()`` stops the daemon
/// and starts a new one on the same socket path, to test reconnection.
public final class PrivateBus: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every mutable stored property is read and written
    // only while holding `lock`.

    /// The directory that holds the configuration and the socket.
    public let directory: URL
    /// The socket path, `<directory>/bus`.
    public let socketPath: String
    /// The D-Bus address clients connect to, `unix:path=<directory>/bus`.
    public let address: String

    private let lock = NSLock()
    private var daemon: ChildProcess?
    private var removed = false

    /// Creates a temporary directory, writes the configuration and starts the daemon.
    ///
    /// Returns once the daemon has printed its address, so it accepts connections.
    ///
    /// - Throws: ``FixtureError`` if the daemon cannot be started.
    public init() throws {
        let base = FileManager.default.temporaryDirectory
        directory = base.appendingPathComponent("private-bus-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        socketPath = directory.appendingPathComponent("bus").path
        address = "unix:path=\(socketPath)"
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>system</type>
              <listen>unix:path=\(socketPath)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_type="method_call"/>
                <allow send_type="signal"/>
                <allow send_type="method_return"/>
                <allow send_type="error"/>
                <allow receive_type="method_call"/>
                <allow receive_type="signal"/>
                <allow receive_type="method_return"/>
                <allow receive_type="error"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
              </policy>
            </busconfig>
            """
        // Not `atomically:`: the directory is new and private, and Foundation's atomic write
        // leaves an empty /tmp/TemporaryDirectory.* behind on every call.
        try config.write(to: configURL, atomically: false, encoding: .utf8)
        do {
            try start()
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    deinit {
        stop()
    }

    private var configURL: URL { directory.appendingPathComponent("bus.conf") }

    /// The pid of the running daemon, or `nil` when it is stopped.
    public var pid: pid_t? {
        lock.withLock { daemon?.pid }
    }

    /// Starts the daemon if it is not running (after ``kill()``), on the same socket path.
    ///
    /// Returns once the daemon has printed its address (it listens by then).
    ///
    /// - Throws: ``FixtureError`` if the daemon cannot be started or exits at once.
    public func start() throws {
        try lock.withLock {
            guard daemon == nil else { return }
            guard !removed else { throw FixtureError("the private bus was stopped for good") }
            try? FileManager.default.removeItem(atPath: socketPath)
            let child = try ChildProcess.spawn(
                "/usr/bin/dbus-daemon",
                ["--config-file=\(configURL.path)", "--nofork", "--nopidfile", "--print-address"],
                stdout: .pipe
            )
            // Waiting on a real event: the daemon prints its address once it listens.
            guard let line = child.readLine(), line.hasPrefix("unix:") else {
                child.terminateAndWait()
                throw FixtureError("dbus-daemon did not print its address")
            }
            daemon = child
        }
    }

    /// Stops the daemon (SIGTERM to its own pid, then reaps it) but keeps the directory.
    ///
    /// Connected clients see the bus vanish. Use ``start()`` to bring it back on the same path.
    public func kill() {
        let child = lock.withLock { () -> ChildProcess? in
            defer { daemon = nil }
            return daemon
        }
        child?.terminateAndWait()
    }

    /// Stops the daemon and starts a new one at the same socket path.
    ///
    /// - Throws: ``FixtureError`` if the new daemon cannot be started.
    public func restart() throws {
        kill()
        try start()
    }

    /// Runs a command-line tool to completion (no shell) and returns its exit code and output.
    ///
    /// For driving the bus from tests, for example
    /// `PrivateBus.runCommand("/usr/bin/busctl", ["--address=\(bus.address)", "introspect", …])`.
    /// It blocks the calling thread until the tool exits; when the tool talks to an object the
    /// test process itself exports, call it off the Swift concurrency pool.
    ///
    /// - Parameters:
    ///   - executable: The absolute path of the tool.
    ///   - arguments: Its arguments.
    /// - Returns: The exit code (128+signal if killed) and the standard output.
    /// - Throws: ``FixtureError`` if the tool cannot be started.
    public static func runCommand(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(executable, arguments)
    }

    /// Stops the daemon and removes the temporary directory. Safe to call more than once.
    public func stop() {
        kill()
        let remove = lock.withLock { () -> Bool in
            defer { removed = true }
            return !removed
        }
        if remove { try? FileManager.default.removeItem(at: directory) }
    }
}

/// An error of a test fixture (a process that would not start, a command that failed).
public struct FixtureError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var description: String

    /// Creates a fixture error.
    ///
    /// - Parameters:
    ///   - description: What went wrong.
    public init(_ description: String) { self.description = description }
}

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
        /// A file, created or truncated.
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

    deinit {
        terminateAndWait()
        if let stdoutFD { close(stdoutFD) }
    }

    /// Starts `executable` with `arguments`; stderr goes where stdout goes (or /dev/null for pipes).
    public static func spawn(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdout: Output = .null
    ) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var readEnd: Int32?
        var writeEnd: Int32?
        switch stdout {
        case .pipe:
            var fds: [Int32] = [0, 0]
            // A socketpair created close-on-exec atomically, so no concurrently spawned child
            // inherits the write end (which would keep readAll() from seeing end of file).
            let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            guard socketpair(AF_UNIX, kind, 0, &fds) == 0 else {
                throw FixtureError("socketpair: \(String(cString: strerror(errno)))")
            }
            readEnd = fds[0]
            writeEnd = fds[1]
            posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        case .file(let path):
            posix_spawn_file_actions_addopen(&actions, 1, path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        case .null:
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }

        // The spawning thread may be a Swift concurrency or Dispatch worker that blocks
        // signals; the child would inherit that mask and ignore SIGTERM. Give it an empty
        // mask and default dispositions.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // Close every inherited descriptor above stderr in the child: a test writing a script
        // while another test spawns a daemon must not leave its write fd open in that daemon
        // (exec of the script would then fail with ETXTBSY).
        closeInheritedDescriptors(&actions)
        var pid: pid_t = 0
        let r = posix_spawn(&pid, executable, &actions, &attributes, argv, env)
        if let writeEnd { close(writeEnd) }
        guard r == 0 else {
            if let readEnd { close(readEnd) }
            throw FixtureError("posix_spawn \(executable): \(String(cString: strerror(r)))")
        }
        return ChildProcess(pid: pid, stdoutFD: readEnd)
    }

    /// Runs a command to completion and returns its exit status and standard output.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws -> (status: Int32, output: String) {
        let child = try spawn(executable, arguments, environment: environment, stdout: .pipe)
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

    /// Sends SIGTERM to this process's own pid (if not reaped yet) and waits for it.
    public func terminateAndWait() {
        let signalled = exitLock.withLock { () -> Bool in
            guard !reaped else { return false }
            Glibc.kill(pid, SIGTERM)
            return true
        }
        if signalled { waitForExit() }
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
}

/// Adds glibc's `posix_spawn_file_actions_addclosefrom_np(actions, 3)` (glibc 2.34+), looked up at
/// run time because Swift's Glibc module does not export it.
private func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
    _ = unsafeBitCast(symbol, to: AddCloseFrom.self)(&actions, 3)
}
