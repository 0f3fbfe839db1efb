import FoundationEssentials
import Glibc
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
                logger.warning("the OpenURI portal refused \(url.absoluteString): \(error)")
                return false
            }
        }
        let apps = MIMEApps(environment: environment)
        for problem in apps.problems { logger.warning("MIME apps: \(problem)") }
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
                logger.warning("\(entry.id) refused \(url.absoluteString): \(error)")
                return false
            }
        }
        guard let arguments = entry.arguments(opening: url) else {
            logger.warning("\(entry.id) has no usable Exec= line")
            return false
        }
        return Self.spawnDetached(arguments, logger: logger)
    }

    /// Runs a command detached from the app: `sh` starts it in the background and exits at once
    /// (it is reaped off the main actor), so the handler is re-parented and outlives the app.
    static func spawnDetached(_ arguments: [String], logger: Logger) -> Bool {
        let argv = ["/bin/sh", "-c", "\"$@\" </dev/null >/dev/null 2>&1 &", "sh"] + arguments
        var pid: pid_t = 0
        let cStrings = argv.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var pointers = cStrings + [nil]
        let status = posix_spawn(&pid, "/bin/sh", nil, nil, &pointers, environ)
        guard status == 0 else {
            logger.warning("cannot start \(arguments[0]): \(String(cString: strerror(status)))")
            return false
        }
        logger.info("started \(arguments.joined(separator: " "))")
        let child = pid
        Task.detached {
            var exitStatus: Int32 = 0
            while waitpid(child, &exitStatus, 0) < 0 && errno == EINTR {}
        }
        return true
    }
}
