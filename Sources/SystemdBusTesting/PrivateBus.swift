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
    /// - Parameters:
    ///   - serviceDirectory: A directory of D-Bus service files (`[D-BUS Service]`, `Name=`,
    ///     `Exec=`) the daemon activates on demand, as a session bus does from
    ///     `/usr/share/dbus-1/services`; `nil` for none. A service it starts is its child: the
    ///     test stops it by its pid (`GetConnectionUnixProcessID` of the name's owner).
    /// - Throws: ``FixtureError`` if the daemon cannot be started.
    public init(serviceDirectory: String? = nil) throws {
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
            \(serviceDirectory.map { "  <servicedir>\($0)</servicedir>" } ?? "")
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
    ///   - arguments: The arguments, without the executable.
    /// - Returns: The exit code (128+signal if killed) and the standard output.
    /// - Throws: ``FixtureError`` if the tool cannot be started.
    public static func runCommand(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String)
    {
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
