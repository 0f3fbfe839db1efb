import Foundation
import Glibc
import Synchronization
import SystemdBusTesting

/// The built `lifecycle-push-gateway` running as a child process, stopped by its own pid
/// (SIGTERM, then SIGKILL after 5 s) by ``stop()`` or, on any failure path, by `deinit`.
public final class GatewayProcess: Sendable {
    /// The gateway process (the current one, after ``killAndRestart()``).
    public var child: ChildProcess { current.withLock { $0 } }
    private let current: Mutex<ChildProcess>
    /// The program and arguments it was started with (`--listen` last, so a restart can name the port).
    private let program: String
    private let arguments: [String]
    /// Its directory (password file, log).
    public let directory: TemporaryDirectory
    /// The port it listens on (it was started with port 0 and logged the one it got).
    public let port: Int
    /// Whether it serves HTTPS (it was given a certificate).
    public let servesTLS: Bool

    /// `http://127.0.0.1:<port>`, or `https://` when it serves TLS.
    public var url: String { "\(servesTLS ? "https" : "http")://127.0.0.1:\(port)" }
    /// Its log (stderr).
    public var logPath: String { directory.appending("gateway.log") }
    /// What it logged so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts the gateway against `brokerURL` as user `gateway` and waits for its "listening" line.
    ///
    /// - Parameters:
    ///   - brokerURL: The broker.
    ///   - password: The `gateway` user's password.
    ///   - publicURL: Its public origin (the endpoints' base, the VAPID audience).
    ///   - clientID: Its MQTT client id (default: a random one).
    ///   - arguments: More options (`--idle-timeout 1`, `--max-connections 3`, …).
    ///   - tls: Serve HTTPS with this CA's server certificate (`--tls-certificate`, `--tls-key`).
    ///   - openFileLimit: Its `RLIMIT_NOFILE` (soft and hard), set by `prlimit`, which then execs
    ///     the gateway (so ``child``'s pid is the gateway's).
    ///   - unprivileged: Run it as its packaged unit does, with no privilege: as uid and gid 65534
    ///     (`nobody`) with no supplementary groups, no capabilities (effective, inherited, ambient or
    ///     in the bounding set) and `no_new_privs`, through `setpriv`, which then execs the gateway.
    ///     Its password file is handed to that uid. A setsockopt that needs a capability fails
    ///     there as in the unit, where as root it succeeds.
    public init(
        brokerURL: String, password: String, publicURL: String = "https://push.example.net", clientID: String? = nil,
        arguments extraArguments: [String] = [], tls: TestCertificateAuthority? = nil, openFileLimit: Int? = nil,
        unprivileged: Bool = false
    )
        async throws
    {
        guard let executable = BuiltProducts.path(of: "lifecycle-push-gateway") else {
            throw FixtureError("lifecycle-push-gateway is not built")
        }
        let directory = try TemporaryDirectory(prefix: "push-gateway")
        self.directory = directory
        let passwordFile = try directory.write("password", password + "\n", mode: 0o600)
        if unprivileged {
            // Only its own file is readable by that uid; the directory is entered, not listed.
            guard chown(passwordFile, Self.unprivilegedID, Self.unprivilegedID) == 0,
                chmod(directory.path, 0o711) == 0
            else {
                directory.remove()
                throw FixtureError("cannot hand the password file to uid \(Self.unprivilegedID) (needs root)")
            }
        }
        var arguments = [
            "--listen", "127.0.0.1:0", "--public-url", publicURL, "--broker", brokerURL, "--username", "gateway",
            "--password-file", passwordFile,
        ]
        if let clientID { arguments += ["--client-id", clientID] }
        if let tls { arguments += ["--tls-certificate", tls.certificatePath, "--tls-key", tls.keyPath] }
        servesTLS = tls != nil
        arguments += extraArguments
        var program = executable
        if unprivileged {
            let id = Self.unprivilegedID
            arguments =
                [
                    "--reuid=\(id)", "--regid=\(id)", "--clear-groups", "--inh-caps=-all", "--ambient-caps=-all",
                    "--bounding-set=-all", "--no-new-privs", "--", program,
                ] + arguments
            program = "/usr/bin/setpriv"
        }
        if let openFileLimit {
            arguments = ["--nofile=\(openFileLimit):\(openFileLimit)", "--", program] + arguments
            program = "/usr/bin/prlimit"
        }
        let child = try ChildProcess.spawn(program, arguments, stdout: .file(directory.appending("gateway.log")))
        current = Mutex(child)
        self.program = program
        self.arguments = arguments
        let logPath = directory.appending("gateway.log")
        var found: Int?
        _ = await eventually(hangGuard: .seconds(20)) {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            found = Self.listeningPort(in: text)
            return found != nil || child.hasExited
        }
        guard let found else {
            child.terminateAndWait(escalatingAfter: .seconds(5))
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            directory.remove()
            throw FixtureError("the gateway did not start: \(text)")
        }
        port = found
    }

    /// The uid and gid of an ``init(brokerURL:password:publicURL:clientID:arguments:tls:openFileLimit:unprivileged:)``
    /// gateway: `nobody`.
    public static let unprivilegedID: uid_t = 65534

    deinit {
        child.terminateAndWait(escalatingAfter: .seconds(5))
        directory.remove()
    }

    /// SIGKILL to its pid (no graceful shutdown: requests in flight get no answer), then the same
    /// gateway again on the same port; returns once the new one logged that it listens.
    ///
    /// - Throws: ``FixtureError`` when the new one does not listen within 20 s.
    public func killAndRestart() async throws {
        let old = child
        kill(old.pid, SIGKILL)
        old.waitForExit()
        let logPath = self.logPath
        let before = log.utf8.count
        let port = self.port
        // 127.0.0.1:0 becomes the port the first one got (the server sets SO_REUSEADDR).
        let listen = arguments.map { $0 == "127.0.0.1:0" ? "127.0.0.1:\(port)" : $0 }
        let child = try ChildProcess.spawn(program, listen, stdout: .file(logPath))
        current.withLock { $0 = child }
        let up = await eventually(hangGuard: .seconds(20)) {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            return Self.listeningPort(in: String(text.utf8.dropFirst(before)) ?? "") == port || child.hasExited
        }
        guard up, !child.hasExited else { throw FixtureError("the gateway did not start again on port \(port)") }
    }

    /// SIGTERM to its pid; returns its exit status.
    @discardableResult
    public func stop() -> Int32 {
        child.terminateAndWait(escalatingAfter: .seconds(10))
        return child.waitForExit()
    }

    private static func listeningPort(in log: String) -> Int? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("listening") }),
            let range = line.firstRange(of: "port=")
        else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }
}
