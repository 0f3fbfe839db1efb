import Foundation
import Glibc
import Synchronization
import SystemdBus

/// An X11 session for a test: Xvfb on a display it picks itself, a real window manager, and the
/// X clients the test launches, each a child of the test, stopped by its own pid by ``stop()``
/// (and by `ChildProcess`'s `deinit` if a test forgets).
///
/// Xvfb is started with `-displayfd`: it chooses a free display number and writes it once it
/// accepts connections, so parallel tests never race for a number and nothing waits on a file
/// appearing. A window manager counts as ready once the root window carries its EWMH
/// `_NET_SUPPORTING_WM_CHECK` and `_NET_SUPPORTED` (read with `xprop`).
///
/// ```swift
/// let session = try await X11Session(windowManager: .openbox)
/// defer { session.stop() }
/// let terminal = try session.launch("/usr/bin/xterm", ["-class", "Notes"])
/// try await session.xdotool("windowminimize", "--sync", "\(windowID)")
/// ```
public final class X11Session: Sendable {
    /// The window manager a session runs.
    public enum WindowManager: String, Sendable, CaseIterable {
        /// openbox: EWMH-compliant, the desktop case.
        case openbox
        /// matchbox-window-manager: EWMH-compliant, the kiosk and phone case.
        case matchbox
        /// twm: no EWMH at all.
        case twm
        /// No window manager.
        case none

        /// The program and its arguments; `nil` for ``none``.
        var command: (executable: String, arguments: [String])? {
            switch self {
            case .openbox: return ("/usr/bin/openbox", [])
            case .matchbox: return ("/usr/bin/matchbox-window-manager", ["-use_titlebar", "no"])
            case .twm: return ("/usr/bin/twm", [])
            case .none: return nil
            }
        }

        /// Whether it sets the EWMH root properties the session waits for.
        var isEWMH: Bool { self == .openbox || self == .matchbox }
    }

    /// The tools a session needs besides the window manager.
    public static let tools = ["/usr/bin/Xvfb", "/usr/bin/xprop", "/usr/bin/xdotool"]

    /// Whether Xvfb, the tools and `windowManager` are installed (the Makefile's `APT_PACKAGES`).
    ///
    /// - Parameters:
    ///   - windowManager: The window manager the test wants.
    public static func isAvailable(_ windowManager: WindowManager) -> Bool {
        (tools + [windowManager.command?.executable].compactMap { $0 }).allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// The display number Xvfb serves.
    public let displayNumber: Int
    /// `":N"`, for `$DISPLAY`.
    public var display: String { ":\(displayNumber)" }
    /// This process's environment with `DISPLAY` set to the session, for the clients.
    public let environment: [String: String]
    /// The window manager running.
    public let windowManager: WindowManager
    private let server: ChildProcess
    private let manager = Mutex<ChildProcess?>(nil)
    private let logDirectory: String?
    private let hangGuard: Duration
    private let clients = ChildProcessSet()

    /// Starts Xvfb and the window manager, and returns once both are ready.
    ///
    /// - Parameters:
    ///   - windowManager: The window manager to run.
    ///   - displayNumber: The display to serve (a server restarted on the display of one that was
    ///     stopped); `nil`: the first free one.
    ///   - logDirectory: Where the window manager's log goes (`openbox.log`…); `nil`: `/dev/null`.
    ///   - hangGuard: How long the window manager may take to get ready.
    /// - Throws: ``FixtureError`` if a program is missing or does not start or get ready within
    ///   the hang guard.
    public init(
        windowManager: WindowManager = .openbox, displayNumber: Int? = nil, logDirectory: String? = nil,
        hangGuard: Duration = .seconds(20)
    ) async throws {
        guard Self.isAvailable(windowManager) else {
            throw FixtureError(
                "X11Session needs \((Self.tools + [windowManager.command?.executable ?? ""]).joined(separator: " ")): "
                    + "apt-get install xvfb x11-utils xdotool and the window manager (the Makefile's APT_PACKAGES)")
        }
        self.windowManager = windowManager
        // -displayfd 1: the chosen number on standard output (a pipe) once the server listens;
        // its log goes to standard error, which the pipe mode sends to /dev/null.
        var arguments = ["-displayfd", "1", "-screen", "0", "800x600x24", "-nolisten", "tcp", "-noreset"]
        if let displayNumber { arguments.insert(":\(displayNumber)", at: 0) }
        let server = try ChildProcess.spawn("/usr/bin/Xvfb", arguments, stdout: .pipe)
        let line = try await Self.offPool { server.readLine() }
        guard let number = line.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) else {
            server.terminateAndWait(escalatingAfter: .seconds(2))
            throw FixtureError("Xvfb \(arguments.joined(separator: " ")) did not start (it wrote \(line ?? "nothing"))")
        }
        self.server = server
        self.displayNumber = number
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(number)"
        self.environment = environment
        self.logDirectory = logDirectory
        self.hangGuard = hangGuard
        do {
            try await startWindowManager()
        } catch {
            stop()
            throw error
        }
    }

    /// Starts the session's window manager (again, after ``stopWindowManager()``) and returns once
    /// it is ready: for an EWMH one, once the root names a check window that names itself and
    /// `_NET_SUPPORTED` is set (a window manager that exited may leave a stale check property).
    ///
    /// - Throws: ``FixtureError`` if it does not start or get ready within the hang guard.
    public func startWindowManager() async throws {
        guard let (executable, arguments) = windowManager.command else { return }
        let output: ChildProcess.Output = logDirectory.map { .file($0 + "/\(windowManager.rawValue).log") } ?? .null
        let process = try ChildProcess.spawn(executable, arguments, environment: environment, stdout: output)
        let previous = manager.withLock { manager in
            defer { manager = process }
            return manager
        }
        previous?.terminateAndWait(escalatingAfter: .seconds(5))
        guard windowManager.isEWMH else { return }
        let ready = try await eventually(hangGuard: hangGuard, pause: .milliseconds(20)) {
            let root = try await run("/usr/bin/xprop", ["-root", "_NET_SUPPORTING_WM_CHECK", "_NET_SUPPORTED"]).output
            guard root.contains("_NET_SUPPORTED(ATOM)"),
                let window = root.split(separator: "\n").first(where: {
                    $0.hasPrefix("_NET_SUPPORTING_WM_CHECK(WINDOW)")
                })?
                .split(separator: " ").last
            else { return false }
            let check = try await run("/usr/bin/xprop", ["-id", String(window), "_NET_SUPPORTING_WM_CHECK"])
            return check.status == 0 && check.output.hasSuffix("# \(window)\n")
        }
        guard ready else {
            throw FixtureError("\(executable) did not set the EWMH root properties on \(display)")
        }
    }

    /// Stops the window manager alone (SIGTERM to its pid, then waits): the clients keep their
    /// windows, unmanaged, and the root keeps whatever the window manager left on it.
    public func stopWindowManager() {
        let process = manager.withLock { manager in
            defer { manager = nil }
            return manager
        }
        if let process {
            kill(process.pid, SIGCONT)
            process.terminateAndWait(escalatingAfter: .seconds(5))
        }
    }

    /// Starts an X client on the session's display; ``stop()`` stops it by its pid.
    ///
    /// - Parameters:
    ///   - executable: The program's absolute path (`/usr/bin/xterm`).
    ///   - arguments: Its arguments.
    /// - Returns: The client process.
    /// - Throws: ``FixtureError`` if it cannot be spawned.
    @discardableResult
    public func launch(_ executable: String, _ arguments: [String] = []) throws -> ChildProcess {
        let client = try ChildProcess.spawn(executable, arguments, environment: environment)
        clients.add(client)
        return client
    }

    /// Runs `xdotool` on the session's display, off the concurrency pool.
    ///
    /// - Parameters:
    ///   - arguments: xdotool's command and arguments (`"windowactivate", "--sync", "4194316"`).
    /// - Returns: Its standard output.
    /// - Throws: ``FixtureError`` if it fails.
    @discardableResult
    public func xdotool(_ arguments: String...) async throws -> String {
        let result = try await run("/usr/bin/xdotool", arguments)
        guard result.status == 0 else {
            throw FixtureError("xdotool \(arguments.joined(separator: " ")) exited with \(result.status)")
        }
        return result.output
    }

    /// Runs a program on the session's display to completion, off the concurrency pool.
    ///
    /// - Parameters:
    ///   - executable: The program's absolute path.
    ///   - arguments: Its arguments.
    /// - Returns: Its exit status and standard output.
    /// - Throws: ``FixtureError`` if it cannot be spawned.
    public func run(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let environment = environment
        return try await Self.offPool { try ChildProcess.run(executable, arguments, environment: environment) }
    }

    /// Stops the window manager with SIGSTOP, by its pid: the root properties it keeps stay as
    /// they are while clients come and go (a window it still lists can be destroyed), until
    /// ``resumeWindowManager()``.
    public func pauseWindowManager() {
        manager.withLock { manager in
            if let manager, !manager.hasExited { kill(manager.pid, SIGSTOP) }
        }
    }

    /// Lets a paused window manager run again (SIGCONT to its pid).
    public func resumeWindowManager() {
        manager.withLock { manager in
            if let manager, !manager.hasExited { kill(manager.pid, SIGCONT) }
        }
    }

    /// Stops the X server alone (SIGTERM to its pid, then waits), as a crash or a logout would
    /// end it; the window manager and the clients lose their connection and exit by themselves
    /// (``stop()`` still reaps them).
    public func stopServer() {
        server.terminateAndWait(escalatingAfter: .seconds(5))
    }

    /// Stops the clients, the window manager and the server, each by its own pid, and waits for
    /// them. Safe to call more than once.
    public func stop() {
        clients.stopAll()
        stopWindowManager()
        server.terminateAndWait(escalatingAfter: .seconds(5))
    }

    /// Runs a blocking call on a `DetachedThread` and awaits its result.
    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            let started = DetachedThread.start { continuation.resume(returning: Result { try body() }) }
            if started != 0 {
                continuation.resume(
                    returning: .failure(FixtureError("pthread_create: \(String(cString: strerror(started)))")))
            }
        }
        return try result.get()
    }
}
