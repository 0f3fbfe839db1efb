import Foundation
import Glibc
import SystemdBusTesting

/// The built `lifecycle-push-gateway` running as a child process, stopped by its own pid
/// (SIGTERM, then SIGKILL after 5 s) by ``stop()`` or, on any failure path, by `deinit`.
final class GatewayProcess: Sendable {
    let child: ChildProcess
    let directory: TemporaryDirectory
    /// The port it listens on (it was started with port 0 and logged the one it got).
    let port: Int

    var url: String { "http://127.0.0.1:\(port)" }
    var logPath: String { directory.appending("gateway.log") }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Starts the gateway against `brokerURL` as user `gateway` and waits for its "listening" line.
    init(brokerURL: String, password: String, publicURL: String = "https://push.example.net", clientID: String? = nil)
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
        let child = try ChildProcess.spawn(executable, arguments, stdout: .file(directory.appending("gateway.log")))
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
    func stop() -> Int32 {
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

/// One HTTP exchange through `curl` (loopback only).
struct HTTPExchange: Sendable {
    var status: Int
    var headers: [String: String]
    var body: String

    /// Sends a request with `curl` on a thread of its own (the concurrency pool never blocks).
    static func send(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> HTTPExchange {
        precondition(url.hasPrefix("http://127.0.0.1:"), "tests only talk to loopback")
        let directory = try TemporaryDirectory(prefix: "curl")
        defer { directory.remove() }
        var arguments = ["-sS", "-i", "--max-time", "20", "-X", method]
        for (name, value) in headers { arguments += ["-H", "\(name): \(value)"] }
        if let body {
            let path = directory.appending("body")
            FileManager.default.createFile(atPath: path, contents: Data(body))
            arguments += ["--data-binary", "@\(path)"]
        }
        arguments.append(url)
        let finalArguments = arguments
        let result = try await offThread { try ChildProcess.run("/usr/bin/curl", finalArguments) }
        guard result.status == 0 else { throw FixtureError("curl \(method) \(url): exit \(result.status)") }
        return try parse(result.output)
    }

    /// Parses `curl -i` output, skipping interim (1xx) responses.
    static func parse(_ output: String) throws -> HTTPExchange {
        var rest = Substring(output)
        while true {
            guard let end = rest.firstRange(of: "\r\n\r\n") else { throw FixtureError("no response in \(output)") }
            let head = rest[..<end.lowerBound].split(separator: "\r\n")
            rest = rest[end.upperBound...]
            guard let statusLine = head.first, statusLine.split(separator: " ").count >= 2,
                let status = Int(statusLine.split(separator: " ")[1])
            else { throw FixtureError("bad status line in \(output)") }
            if (100..<200).contains(status) { continue }
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
            return HTTPExchange(status: status, headers: headers, body: String(rest))
        }
    }
}

/// Runs blocking work (a child process) on a thread of its own.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
