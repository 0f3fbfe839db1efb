import Foundation
import SystemdBusTesting

/// One HTTP or HTTPS exchange through `curl` (loopback only).
struct HTTPExchange: Sendable {
    var status: Int
    var headers: [String: String]
    var body: String

    /// Sends a request with `curl` on a thread of its own (the concurrency pool never blocks); an
    /// `https://` one trusting only `caFile`'s CA.
    static func send(
        _ method: String, _ url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
        caFile: String? = nil
    ) async throws -> HTTPExchange {
        precondition(
            url.hasPrefix("http://127.0.0.1:") || url.hasPrefix("https://127.0.0.1:"), "tests only talk to loopback")
        let directory = try TemporaryDirectory(prefix: "curl")
        defer { directory.remove() }
        var arguments = ["-sS", "-i", "--max-time", "20", "-X", method]
        if let caFile { arguments += ["--cacert", caFile] }
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
