import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus

/// Opens a URL that no hosted app claims, the way the desktop would: through the OpenURI portal
/// when one is on the session bus, else with the default application of the XDG MIME-apps files
/// (``MIMEApps``): `org.freedesktop.Application.Open` for a `DBusActivatable` entry, else its
/// `Exec=` line, started detached from the app.
public struct DesktopURLOpener: Sendable {
    static let portalName = "org.freedesktop.portal.Desktop"
    static let portalPath = "/org/freedesktop/portal/desktop"

    /// The session bus (for the portal and `DBusActivatable` handlers), if any.
    public var connection: BusConnection?
    /// Where the XDG directories and `$XDG_CURRENT_DESKTOP` are read.
    public var environment: [String: String]
    /// Where what happened is logged.
    public var logger: Logger

    /// Creates an opener.
    ///
    /// - Parameters:
    ///   - connection: The session bus, or `nil`.
    ///   - environment: The environment with the XDG variables.
    ///   - logger: The logger.
    public init(connection: BusConnection?, environment: [String: String], logger: Logger) {
        self.connection = connection
        self.environment = environment
        self.logger = logger
    }

    /// Whether a handler took the URL.
    public func open(_ url: URL) async -> Bool {
        if let connection, (try? await connection.nameOwner(Self.portalName, timeout: .seconds(2))) != nil {
            do {
                _ = try await connection.call(
                    destination: Self.portalName, path: Self.portalPath, interface: "org.freedesktop.portal.OpenURI",
                    member: "OpenURI", arguments: [.string(""), .string(url.absoluteString), .vardict([:])])
                logger.info("opened \(url.absoluteString) through the OpenURI portal")
                return true
            } catch {
                logger.info("the OpenURI portal refused \(url.absoluteString): \(error)")
                return false
            }
        }
        let apps = MIMEApps.current(environment: environment)
        for problem in apps.problems { logger.info("MIME apps: \(problem)") }
        guard let entry = apps.handler(for: url) else {
            logger.info("no application handles \(url.scheme ?? "?"): URLs")
            return false
        }
        if entry.isDBusActivatable, let connection {
            let path = "/" + entry.busName.replacing(".", with: "/").replacing("-", with: "_")
            do {
                _ = try await connection.call(
                    destination: entry.busName, path: path, interface: "org.freedesktop.Application", member: "Open",
                    arguments: [.stringArray([url.absoluteString]), .vardict([:])])
                logger.info("opened \(url.absoluteString) in \(entry.id) (org.freedesktop.Application.Open)")
                return true
            } catch {
                logger.info("\(entry.id) refused \(url.absoluteString): \(error)")
                return false
            }
        }
        guard let arguments = entry.arguments(opening: url) else {
            logger.info("\(entry.id) has no usable Exec= line")
            return false
        }
        return Self.spawnDetached(arguments, environment: environment, logger: logger)
    }

    /// What the app has that the handler must not inherit: its lifecycled identity and launch
    /// options (an AppLifecycle handler would register as this app), and a spent activation token.
    static let appOnlyEnvironment: Set<String> = [
        LifecycledProtocol.appIDEnvironment, LifecycledProtocol.launchOptionsEnvironment,
        LifecycledProtocol.useDaemonEnvironment, "XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID", "NOTIFY_SOCKET",
        "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
    ]

    /// Runs a handler detached from the app, as a desktop launcher would.
    ///
    /// With a user service manager, in a transient scope of its own (`systemd-run --user --scope`),
    /// so it leaves the app's cgroup: lifecycled's freezer would otherwise freeze the browser with
    /// the app. Without one, `sh` starts it in the background and exits. Either way the app's
    /// identity is not passed on (``appOnlyEnvironment``) and the starter is reaped on the
    /// blocking pool (`BlockingPool.shared`).
    static func spawnDetached(_ arguments: [String], environment: [String: String], logger: Logger) -> Bool {
        var argv = ["/bin/sh", "-c", "\"$@\" </dev/null >/dev/null 2>&1 &", "sh"] + arguments
        if let runtime = environment["XDG_RUNTIME_DIR"], access("/usr/bin/systemd-run", X_OK) == 0,
            access(runtime + "/systemd/private", F_OK) == 0
        {
            argv = ["/usr/bin/systemd-run", "--user", "--scope", "--quiet", "--collect", "--"] + argv
        }
        let childEnvironment = environment.filter { !appOnlyEnvironment.contains($0.key) }.map {
            "\($0.key)=\($0.value)"
        }
        var pid: pid_t = 0
        let cArguments = argv.map { strdup($0) }
        let cEnvironment = childEnvironment.map { strdup($0) }
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var argumentPointers = cArguments + [nil]
        var environmentPointers = cEnvironment + [nil]
        let status = posix_spawn(&pid, argv[0], nil, nil, &argumentPointers, &environmentPointers)
        guard status == 0 else {
            logger.info("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
            return false
        }
        logger.info("started \(arguments.joined(separator: " "))")
        let child = pid
        // The starter exits at once (`sh` backgrounds the handler; `systemd-run --scope` runs that
        // `sh`), so reaping it is a short blocking call, for the blocking pool.
        Task.detached {
            _ = try? await BlockingPool.shared.run {
                var exitStatus: Int32 = 0
                while waitpid(child, &exitStatus, 0) < 0 && errno == EINTR {}
            }
        }
        return true
    }
}
