import Foundation
import Glibc
import SystemdBusTesting

/// The built `lifecycle-push-gateway` running as a child process, stopped by its own pid
/// (SIGTERM, then SIGKILL after 5 s) by ``stop()`` or, on any failure path, by `deinit`.
public final class GatewayProcess: Sendable {
    /// The gateway process.
    public let child: ChildProcess
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
    public init(
        brokerURL: String, password: String, publicURL: String = "https://push.example.net", clientID: String? = nil,
        arguments extraArguments: [String] = [], tls: TestCertificateAuthority? = nil, openFileLimit: Int? = nil
    )
        async throws
    {
        guard let executable = BuiltProducts.path(of: "lifecycle-push-gateway") else {
            throw FixtureError("lifecycle-push-gateway is not built")
        }
        let directory = try TemporaryDirectory(prefix: "push-gateway")
        self.directory = directory
        let passwordFile = try directory.write("password", password + "\n", mode: 0o600)
        var arguments = [
            "--listen", "127.0.0.1:0", "--public-url", publicURL, "--broker", brokerURL, "--username", "gateway",
            "--password-file", passwordFile,
        ]
        if let clientID { arguments += ["--client-id", clientID] }
        if let tls { arguments += ["--tls-certificate", tls.certificatePath, "--tls-key", tls.keyPath] }
        servesTLS = tls != nil
        arguments += extraArguments
        var program = executable
        if let openFileLimit {
            arguments = ["--nofile=\(openFileLimit):\(openFileLimit)", "--", executable] + arguments
            program = "/usr/bin/prlimit"
        }
        let child = try ChildProcess.spawn(program, arguments, stdout: .file(directory.appending("gateway.log")))
        self.child = child
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

    deinit {
        child.terminateAndWait(escalatingAfter: .seconds(5))
        directory.remove()
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
