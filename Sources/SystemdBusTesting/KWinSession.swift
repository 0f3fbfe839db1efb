import Foundation
import Glibc
import Synchronization

/// A real KWin (5.27, Debian 12's kwin-wayland) for one test: `kwin_wayland --virtual` (a virtual
/// framebuffer, no input devices, no Xwayland, no lock screen, no global shortcuts), in a home,
/// runtime and data directory of its own, with real GTK 3 windows (python3-gi) as clients.
///
/// It runs as root (KWin, unlike sway, accepts it) from a copy of `/usr/bin/kwin_wayland` in the
/// session's directory: the installed binary carries a file capability (`cap_sys_resource=ep`),
/// and exec fails with EPERM where the capability is outside the bounding set (a container). The
/// Wayland socket has a name of its own (``waylandDisplay``), the same after a restart.
///
/// KWin offers `org_kde_plasma_window_management` only to programs whose desktop file lists it in
/// `X-KDE-Wayland-Interfaces`: ``allowWindowManagement(executable:name:)`` writes one into the
/// session's `XDG_DATA_HOME` (KWin reads new desktop files while it runs, through its service cache,
/// which lives in the session's home).
///
/// Every process it starts is stopped by its own pid: ``stopCompositor(signal:)`` and ``stopClient(_:)``
/// on demand, ``stop()`` (and `deinit`) everything, then the directory is removed.
///
/// ```swift
/// let kwin = try await KWinSession()
/// defer { kwin.stop() }
/// try kwin.allowWindowManagement(executable: KWinSession.currentExecutable())
/// let alpha = try kwin.startClient(appID: "org.example.alpha")
/// ```
public final class KWinSession: Sendable {
    /// The compositor's executable, as installed.
    public static let kwinPath = "/usr/bin/kwin_wayland"
    /// The interpreter of the GTK client (Debian's, which python3-gi is built for).
    public static let pythonPath = "/usr/bin/python3"
    /// Whether kwin_wayland, python3 and GTK 3's introspection data are installed (the
    /// `kwin-wayland`, `python3-gi` and `gir1.2-gtk-3.0` Debian packages).
    public static var isAvailable: Bool {
        access(kwinPath, X_OK) == 0 && access(pythonPath, X_OK) == 0
            && access("/usr/lib/x86_64-linux-gnu/girepository-1.0/Gtk-3.0.typelib", R_OK) == 0
    }

    /// The session's directory: `kwin_wayland`, `kwin.log`, `home/`, `data/`, `run/`, the client script.
    public let directory: TemporaryDirectory
    /// KWin's `XDG_RUNTIME_DIR` (mode 0700).
    public let runtimeDirectory: String
    /// The Wayland display's name, relative to ``runtimeDirectory`` (unique to this session).
    public let waylandDisplay: String
    /// KWin's log (stdout and stderr, each run appended).
    public var logPath: String { directory.appending("kwin.log") }
    /// The Wayland socket's absolute path (it exists while KWin runs).
    public var socketPath: String { runtimeDirectory + "/" + waylandDisplay }
    /// The GTK client's script: `python3 SCRIPT APP_ID TITLE` opens one window (what
    /// ``startClient(appID:title:)`` runs; a test's manifest may run it too).
    public var clientScriptPath: String { directory.appending("window.py") }
    /// The environment of a GTK client of this KWin.
    public var clientEnvironment: [String: String] {
        [
            "PATH": "/usr/bin:/bin",
            "HOME": directory.appending("home"),
            "XDG_RUNTIME_DIR": runtimeDirectory,
            "WAYLAND_DISPLAY": waylandDisplay,
            "GDK_BACKEND": "wayland",
            "NO_AT_BRIDGE": "1",
            "LANG": "C.UTF-8",
        ]
    }

    private struct State {
        var compositor: ChildProcess?
    }

    private let state = Mutex(State())
    private let clients = ChildProcessSet()

    /// Sets up the session's directory and starts KWin (``startCompositor(hangGuard:)``).
    ///
    /// - Throws: ``FixtureError`` when KWin or GTK is not installed, the directory cannot be set up,
    ///   or KWin does not come up.
    public init() async throws {
        guard Self.isAvailable else {
            throw FixtureError(
                "kwin_wayland, python3 and GTK 3 are needed "
                    + "(apt-get install --no-install-recommends kwin-wayland python3-gi gir1.2-gtk-3.0)")
        }
        directory = try TemporaryDirectory(prefix: "kwin-session")
        runtimeDirectory = directory.appending("run")
        waylandDisplay = "wayland-kwin-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            guard mkdir(runtimeDirectory, 0o700) == 0, mkdir(directory.appending("home"), 0o755) == 0 else {
                throw FixtureError("setting up \(directory.path): \(String(cString: strerror(errno)))")
            }
            try FileManager.default.createDirectory(
                atPath: directory.appending("data/applications"), withIntermediateDirectories: true)
            // A copy without the file capability (xattrs are not copied).
            try FileManager.default.copyItem(atPath: Self.kwinPath, toPath: directory.appending("kwin_wayland"))
            _ = try directory.write("window.py", Self.clientScript)
            try await startCompositor()
        } catch {
            directory.remove()
            throw error
        }
    }

    deinit {
        stop()
    }

    /// KWin's pid, while it runs.
    public var compositorPID: pid_t? { state.withLock { $0.compositor?.pid } }

    /// This process's real executable (`/proc/self/exe`): what KWin compares with a desktop file's `Exec`.
    public static func currentExecutable() throws -> String {
        try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }

    /// Writes a desktop file that makes KWin offer `org_kde_plasma_window_management` to
    /// `executable` (`Exec` is compared with the real path of the connecting program).
    ///
    /// - Parameters:
    ///   - executable: The program's absolute real path.
    ///   - name: The desktop file's name, without `.desktop`.
    public func allowWindowManagement(executable: String, name: String = "window-source-test") throws {
        _ = try directory.write(
            "data/applications/\(name).desktop",
            """
            [Desktop Entry]
            Type=Application
            Name=\(name)
            Exec=\(executable)
            NoDisplay=true
            X-KDE-Wayland-Interfaces=org_kde_plasma_window_management

            """)
    }

    /// Starts KWin (again, after ``stopCompositor(signal:)``) on ``waylandDisplay`` and waits until
    /// its socket accepts connections.
    ///
    /// - Parameters:
    ///   - hangGuard: How long KWin may take to come up.
    /// - Throws: ``FixtureError`` if KWin already runs, exits, or does not come up within `hangGuard`
    ///   (its log is in the message).
    public func startCompositor(hangGuard: Duration = .seconds(30)) async throws {
        guard compositorPID == nil else { throw FixtureError("kwin already runs") }
        let environment = [
            "PATH": "/usr/bin:/bin",
            "HOME": directory.appending("home"),
            "XDG_RUNTIME_DIR": runtimeDirectory,
            "XDG_DATA_HOME": directory.appending("data"),
            "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
            "XDG_CONFIG_HOME": directory.appending("home/config"),
            "QT_LOGGING_RULES": "*.debug=false",
        ]
        let arguments = [
            "--virtual", "--width", "1024", "--height", "768", "--socket", waylandDisplay, "--no-lockscreen",
            "--no-global-shortcuts", "--no-kactivities",
        ]
        let clock = ContinuousClock()
        let giveUp = clock.now.advanced(by: hangGuard)
        var compositor: ChildProcess
        while true {
            do {
                compositor = try ChildProcess.spawn(
                    directory.appending("kwin_wayland"), arguments, environment: environment, stdout: .file(logPath))
                break
            } catch let error as FixtureError where error.description.contains(String(cString: strerror(ETXTBSY))) {
                // The copy was written moments ago: a child another test spawned meanwhile may still
                // hold its descriptor until that child's exec, and exec refuses a file open for writing.
                guard clock.now < giveUp else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        state.withLock { $0.compositor = compositor }
        while true {
            if compositor.hasExited {
                stopCompositor()
                throw FixtureError("kwin_wayland exited while starting: \(log())")
            }
            if Self.accepts(socketPath) { return }
            if clock.now >= giveUp {
                stopCompositor()
                throw FixtureError("kwin_wayland did not come up within \(hangGuard): \(log())")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Whether a Unix stream socket at `path` accepts a connection (closed at once).
    private static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        } == 0
    }

    /// Stops KWin (SIGTERM to its pid, SIGKILL after 5 s) and waits for it; its clients lose their
    /// connection (GTK exits). Does nothing if KWin does not run.
    ///
    /// - Parameters:
    ///   - signal: `SIGTERM` (KWin exits and removes its socket) or `SIGKILL` (a crash: the socket
    ///     file stays, and the next KWin reclaims the name).
    public func stopCompositor(signal: Int32 = SIGTERM) {
        let compositor = state.withLock { state -> ChildProcess? in
            defer { state.compositor = nil }
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

    /// Starts a GTK 3 window (python3-gi) whose Wayland app id is `appID` (`g_set_prgname`). The
    /// window appears once KWin maps it: wait for it where it is seen. SIGUSR1 makes it minimise
    /// itself (`gtk_window_iconify`), as a user's click on its title bar button would.
    ///
    /// - Parameters:
    ///   - appID: The window's app id.
    ///   - title: The window's title; the app id when `nil`.
    /// - Returns: The client (its pid is the window's), also stopped by ``stop()``.
    /// - Throws: ``FixtureError`` if KWin does not run or python3 cannot be spawned.
    public func startClient(appID: String, title: String? = nil) throws -> ChildProcess {
        guard compositorPID != nil else { throw FixtureError("kwin does not run") }
        let client = try ChildProcess.spawn(
            Self.pythonPath, [clientScriptPath, appID, title ?? appID], environment: clientEnvironment,
            stdout: .file(directory.appending("client-\(appID).log")))
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

    /// Stops every client, then KWin, each by its pid, and removes the session's directory.
    /// Safe to call more than once.
    public func stop() {
        clients.stopAll()
        stopCompositor()
        directory.remove()
    }

    /// The end of KWin's log, for failure messages.
    public func log() -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return String(text.suffix(2_000))
    }

    /// The GTK client: one window, app id and title from its arguments; SIGUSR1 minimises it,
    /// SIGTERM ends it (closing the window).
    private static let clientScript = """
        import signal, sys
        import gi
        gi.require_version("Gtk", "3.0")
        from gi.repository import GLib, Gtk

        GLib.set_prgname(sys.argv[1])
        window = Gtk.Window(title=sys.argv[2])
        window.set_default_size(200, 150)
        window.connect("destroy", Gtk.main_quit)
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGUSR1, lambda: (window.iconify(), True)[1])
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: (Gtk.main_quit(), False)[1])
        window.show_all()
        Gtk.main()

        """
}
