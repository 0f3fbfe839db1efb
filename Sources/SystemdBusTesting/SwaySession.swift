import Foundation
import Glibc
import Synchronization

/// A real sway (1.7, Debian 12) for one test: headless, pixman renderer, no input devices, no
/// Xwayland, run as an unprivileged user in a runtime directory of its own, with real Wayland clients
/// (foot) and `swaymsg` to drive it.
///
/// sway refuses to run as root, so it runs as `nobody` (uid and gid 65534, through
/// `setpriv --reuid --regid --clear-groups`); the test, as root, reads its sockets regardless of
/// their owner. The session's directory holds the config and `run/`, the `XDG_RUNTIME_DIR` where
/// sway makes its Wayland socket (`wayland-1`: the same name after a restart, since nothing else
/// uses that directory) and its IPC socket. Clients run as root against that socket.
///
/// Every process it starts is stopped by its own pid: ``stopCompositor(signal:)`` and ``stopClient(_:)``
/// on demand, ``stop()`` (and `deinit`) everything, then the directory is removed.
///
/// ```swift
/// let sway = try await SwaySession()
/// defer { sway.stop() }
/// let alpha = try sway.startClient(appID: "alpha")
/// try sway.swaymsg("[app_id=alpha] focus")
/// ```
public final class SwaySession: Sendable {
    /// The user sway runs as: `nobody`.
    public static let userID: uid_t = 65534
    /// The compositor's executable.
    public static let swayPath = "/usr/bin/sway"
    /// The client the session starts: foot (`foot --app-id`).
    public static let footPath = "/usr/bin/foot"
    /// The IPC command-line tool.
    public static let swaymsgPath = "/usr/bin/swaymsg"
    /// Whether sway, swaymsg and foot are installed (the `sway` and `foot` Debian packages).
    public static var isAvailable: Bool {
        let tools: [String] = [swayPath, swaymsgPath, footPath]
        return tools.allSatisfy { access($0, X_OK) == 0 }
    }

    /// The session's directory: `config`, `sway.log`, `run/`.
    public let directory: TemporaryDirectory
    /// sway's `XDG_RUNTIME_DIR` (owned by the session's user, mode 0700).
    public let runtimeDirectory: String
    /// sway's log (stdout and stderr, each run appended).
    public var logPath: String { directory.appending("sway.log") }

    private struct State {
        var compositor: ChildProcess?
        var waylandDisplay: String?
        var ipcSocket: String?
    }

    private let state = Mutex(State())
    private let clients = ChildProcessSet()

    /// Sets up the session's directory and starts sway (``startCompositor(hangGuard:)``).
    ///
    /// - Parameters:
    ///   - configuration: Lines appended to the minimal config (one headless output, 1024x768,
    ///     `xwayland disable`).
    /// - Throws: ``FixtureError`` when sway is not installed, the directory cannot be set up, or sway
    ///   does not come up.
    public init(configuration: String = "") async throws {
        guard Self.isAvailable else {
            throw FixtureError("sway, swaymsg and foot are needed (apt-get install sway foot)")
        }
        directory = try TemporaryDirectory(prefix: "sway-session")
        runtimeDirectory = directory.appending("run")
        do {
            // The user may enter the directory (to reach run/ and config) but not list it.
            guard chmod(directory.path, 0o711) == 0, mkdir(runtimeDirectory, 0o700) == 0,
                chown(runtimeDirectory, Self.userID, gid_t(Self.userID)) == 0
            else { throw FixtureError("setting up \(runtimeDirectory): \(String(cString: strerror(errno)))") }
            try directory.write(
                "config",
                """
                xwayland disable
                output HEADLESS-1 resolution 1024x768
                \(configuration)

                """)
            try await startCompositor()
        } catch {
            directory.remove()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// The Wayland display's name (`wayland-1`), relative to ``runtimeDirectory``, while sway runs.
    public var waylandDisplay: String? { state.withLock { $0.waylandDisplay } }

    /// The Wayland socket's absolute path, while sway runs.
    public var socketPath: String? { waylandDisplay.map { runtimeDirectory + "/" + $0 } }

    /// sway's pid, while it runs.
    public var compositorPID: pid_t? { state.withLock { $0.compositor?.pid } }

    /// Starts sway (again, after ``stopCompositor(signal:)``) and waits until its IPC answers.
    ///
    /// - Parameters:
    ///   - hangGuard: How long sway may take to come up.
    /// - Throws: ``FixtureError`` if sway already runs, exits, or does not answer within `hangGuard`
    ///   (its log is in the message).
    public func startCompositor(hangGuard: Duration = .seconds(15)) async throws {
        guard compositorPID == nil else { throw FixtureError("sway already runs") }
        let environment = [
            "PATH": "/usr/bin:/bin",
            "HOME": directory.path,
            "XDG_RUNTIME_DIR": runtimeDirectory,
            "WLR_BACKENDS": "headless",
            "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
        ]
        let compositor = try ChildProcess.spawn(
            "/usr/bin/setpriv",
            [
                "--reuid=\(Self.userID)", "--regid=\(Self.userID)", "--clear-groups", Self.swayPath,
                "-c", directory.appending("config"),
            ],
            environment: environment, stdout: .file(logPath))
        state.withLock { $0.compositor = compositor }
        // setpriv execs sway, so the child's pid is sway's, and so is its IPC socket's name.
        let ipcSocket = "\(runtimeDirectory)/sway-ipc.\(Self.userID).\(compositor.pid).sock"
        let clock = ContinuousClock()
        let giveUp = clock.now.advanced(by: hangGuard)
        while true {
            if compositor.hasExited {
                stopCompositor()
                throw FixtureError("sway exited while starting: \(log())")
            }
            if access(ipcSocket, F_OK) == 0,
                let display = try? FileManager.default.contentsOfDirectory(atPath: runtimeDirectory)
                    .filter({ $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }).sorted().first,
                (try? Self.run(Self.swaymsgPath, ["-s", ipcSocket, "-t", "get_version"]))?.status == 0
            {
                state.withLock {
                    $0.waylandDisplay = display
                    $0.ipcSocket = ipcSocket
                }
                return
            }
            if clock.now >= giveUp {
                stopCompositor()
                throw FixtureError("sway did not come up within \(hangGuard): \(log())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Stops sway (SIGTERM to its pid, SIGKILL after 5 s) and waits for it; its clients lose their
    /// connection (and foot exits). Does nothing if sway does not run.
    ///
    /// - Parameters:
    ///   - signal: `SIGTERM` (sway exits cleanly and removes its sockets) or `SIGKILL` (a crash:
    ///     the sockets stay, and the next sway reclaims the name).
    public func stopCompositor(signal: Int32 = SIGTERM) {
        let compositor = state.withLock { state -> ChildProcess? in
            defer {
                state.compositor = nil
                state.waylandDisplay = nil
                state.ipcSocket = nil
            }
            return state.compositor
        }
        guard let compositor else { return }
        if signal == SIGKILL, !compositor.hasExited {
            kill(compositor.pid, SIGKILL)
            compositor.waitForExit()
        } else {
            compositor.terminateAndWait(escalatingAfter: .seconds(5))
        }
    }

    /// Runs `swaymsg` with one command (`[app_id=x] focus`, `move scratchpad`) or a message type
    /// (`-t get_tree`) against this sway.
    ///
    /// - Parameters:
    ///   - arguments: swaymsg's arguments after `-s SOCKET`.
    /// - Returns: Its output (JSON).
    /// - Throws: ``FixtureError`` if sway does not run or swaymsg fails (its output in the message).
    @discardableResult
    public func swaymsg(_ arguments: String...) throws -> String {
        guard let ipcSocket = state.withLock({ $0.ipcSocket }) else { throw FixtureError("sway does not run") }
        let result = try Self.run(Self.swaymsgPath, ["-s", ipcSocket] + arguments)
        guard result.status == 0 else {
            throw FixtureError("swaymsg \(arguments.joined(separator: " ")) exited \(result.status): \(result.output)")
        }
        return result.output
    }

    /// Runs sway commands over its IPC socket directly (i3-ipc `RUN_COMMAND`), without spawning
    /// `swaymsg`: for measuring what follows a command.
    ///
    /// - Parameters:
    ///   - command: The commands, as `swaymsg` takes them (`[app_id=x] focus`).
    /// - Returns: sway's reply (JSON).
    /// - Throws: ``FixtureError`` if sway does not run, the socket fails, or sway reports a failure.
    @discardableResult
    public func command(_ command: String) throws -> String {
        guard let ipcSocket = state.withLock({ $0.ipcSocket }) else { throw FixtureError("sway does not run") }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(ipcSocket.utf8) + [0]) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw FixtureError("connect \(ipcSocket): \(String(cString: strerror(errno)))") }
        // i3-ipc: "i3-ipc", the payload's length and the message type (0, RUN_COMMAND), native-endian.
        let payload = Array(command.utf8)
        var message = Array("i3-ipc".utf8)
        message += withUnsafeBytes(of: UInt32(payload.count)) { Array($0) }
        message += withUnsafeBytes(of: UInt32(0)) { Array($0) }
        message += payload
        guard message.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == message.count
        else { throw FixtureError("writing to \(ipcSocket): \(String(cString: strerror(errno)))") }
        let header = try Self.read(fd, count: 14)
        let length = header[6..<10].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let reply = String(decoding: try Self.read(fd, count: Int(length)), as: UTF8.self)
        guard !reply.contains("\"success\": false") else { throw FixtureError("sway refused \(command): \(reply)") }
        return reply
    }

    /// Reads exactly `count` bytes from a blocking socket.
    private static func read(_ fd: Int32, count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw FixtureError("sway closed its IPC socket") }
            done += n
        }
        return bytes
    }

    /// Starts a foot terminal window with an app id (`foot --app-id`) and a title, running `cat` (which
    /// ends with the terminal). The window appears once sway maps it: wait for it where it is seen.
    ///
    /// - Parameters:
    ///   - appID: The window's app id.
    ///   - title: The window's title; the app id when `nil`.
    /// - Returns: The client, also stopped by ``stop()``.
    /// - Throws: ``FixtureError`` if sway does not run or foot cannot be spawned.
    public func startClient(appID: String, title: String? = nil) throws -> ChildProcess {
        guard let display = waylandDisplay else { throw FixtureError("sway does not run") }
        let environment = [
            "PATH": "/usr/bin:/bin",
            "HOME": directory.path,
            "XDG_RUNTIME_DIR": runtimeDirectory,
            "WAYLAND_DISPLAY": display,
            "LANG": "C.UTF-8",
        ]
        let client = try ChildProcess.spawn(
            Self.footPath, ["--app-id", appID, "--title", title ?? appID, "/bin/cat"], environment: environment,
            stdout: .file(directory.appending("foot-\(appID).log")))
        clients.add(client)
        return client
    }

    /// Stops a client the session started (SIGTERM to its pid, SIGKILL after 5 s) and waits for it.
    ///
    /// - Parameters:
    ///   - client: A client from ``startClient(appID:title:)``.
    public func stopClient(_ client: ChildProcess) {
        clients.stop(client)
    }

    /// Stops every client, then sway, each by its pid, and removes the session's directory.
    /// Safe to call more than once.
    public func stop() {
        clients.stopAll()
        stopCompositor()
        directory.remove()
    }

    /// The end of sway's log, for failure messages.
    public func log() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(2_000))
    }

    /// Runs a tool with a plain environment, returning its status and output.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try ChildProcess.run(executable, arguments, environment: ["PATH": "/usr/bin:/bin"])
    }
}
