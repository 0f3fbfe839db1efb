import Foundation
import Glibc
import SystemdBus
import SystemdBusTesting

/// The real `mosquitto_pub` and `mosquitto_sub`: an independent client to check BrokerLink against.
///
/// Each run is a child process on a detached thread (the concurrency pool never blocks), bounded
/// by mosquitto_sub's own `-W` timeout and stopped by its pid by `ChildProcess`.
public struct MosquittoClientTool: Sendable {
    /// The broker's port on 127.0.0.1.
    public let port: Int
    /// The user name to log in with.
    public let username: String
    /// Its password.
    public let password: String

    /// A tool logged in as `username`.
    ///
    /// - Parameters:
    ///   - broker: The broker.
    ///   - username: One of its users.
    public init(broker: MosquittoBroker, username: String) {
        self.port = broker.port
        self.username = username
        self.password = broker.users[username] ?? ""
    }

    private var common: [String] { ["-h", "127.0.0.1", "-p", "\(port)", "-u", username, "-P", password] }

    /// Publishes one message with `mosquitto_pub`.
    ///
    /// - Parameters:
    ///   - topic: The topic.
    ///   - message: The payload.
    ///   - qos: 0 or 1.
    ///   - retain: Whether it is retained.
    /// - Returns: mosquitto_pub's exit status and output.
    @discardableResult
    public func publish(topic: String, message: String, qos: Int = 1, retain: Bool = false) async throws
        -> (status: Int32, output: String)
    {
        var arguments =
            common + [
                "-t", topic, "-m", message, "-q", "\(qos)", "-i", "tool-pub-\(UInt32.random(in: 0...UInt32.max))",
            ]
        if retain { arguments.append("-r") }
        let finalArguments = arguments
        return try await offPool { try ChildProcess.run("/usr/bin/mosquitto_pub", finalArguments) }
    }

    /// Subscribes with `mosquitto_sub -v` and returns the lines (`topic payload`) it received.
    ///
    /// - Parameters:
    ///   - filter: The topic filter.
    ///   - count: Stop after this many messages.
    ///   - timeoutSeconds: Stop after this long in any case (`-W`).
    ///   - retainedOnly: Only retained messages (`--retained-only`).
    /// - Returns: The lines received.
    public func receive(filter: String, count: Int, timeoutSeconds: Int = 3, retainedOnly: Bool = false)
        async throws -> [String]
    {
        var arguments = common + ["-t", filter, "-v", "-C", "\(count)", "-W", "\(timeoutSeconds)", "-q", "1"]
        if retainedOnly { arguments.append("--retained-only") }
        let finalArguments = arguments
        let result = try await offPool { try ChildProcess.run("/usr/bin/mosquitto_sub", finalArguments) }
        return result.output.split(separator: "\n").map(String.init)
    }

    /// Starts `mosquitto_sub -v` in the background (subscribed once it logs its SUBACK, which
    /// ``BackgroundSubscriber/waitUntilSubscribed()`` waits for).
    ///
    /// - Parameters:
    ///   - filter: The topic filter.
    ///   - timeoutSeconds: The subscriber's own bound (`-W`).
    /// - Returns: The running subscriber.
    public func startSubscriber(filter: String, timeoutSeconds: Int = 10) throws -> BackgroundSubscriber {
        let directory = try TemporaryDirectory(prefix: "mosquitto-sub")
        let path = directory.appending("out")
        // stdbuf: line-buffered, or the debug lines (SUBACK) would sit in stdio's buffer.
        let child = try ChildProcess.spawn(
            "/usr/bin/stdbuf",
            ["-oL", "/usr/bin/mosquitto_sub"] + common + [
                "-t", filter, "-v", "-d", "-W", "\(timeoutSeconds)", "-q", "1",
            ],
            stdout: .file(path))
        return BackgroundSubscriber(child: child, directory: directory, path: path)
    }
}

/// A `mosquitto_sub` running in the background, writing to a file; stopped by its pid.
public final class BackgroundSubscriber: Sendable {
    private let child: ChildProcess
    private let directory: TemporaryDirectory
    private let path: String

    init(child: ChildProcess, directory: TemporaryDirectory, path: String) {
        self.child = child
        self.directory = directory
        self.path = path
    }

    deinit {
        child.terminateAndWait(escalatingAfter: .seconds(2))
        directory.remove()
    }

    /// Everything written so far (with `-d`, debug lines such as `Client … received SUBACK`).
    public var output: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// The `topic payload` lines received so far.
    public var messages: [String] {
        output.split(separator: "\n").map(String.init).filter {
            !$0.hasPrefix("Client ") && !$0.hasPrefix("Subscribed")
        }
    }

    /// Waits (at most 5 s) for the SUBACK.
    ///
    /// - Returns: Whether it came.
    public func waitUntilSubscribed() async -> Bool {
        await eventually(hangGuard: .seconds(5)) { output.contains("SUBACK") }
    }

    /// Stops the subscriber (SIGTERM by pid).
    public func stop() { child.terminateAndWait(escalatingAfter: .seconds(2)) }
}

/// Runs blocking work on a detached thread, so the Swift concurrency pool stays free.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let started = DetachedThread.start { continuation.resume(with: Result { try body() }) }
        if started != 0 { continuation.resume(throwing: FixtureError("pthread_create: \(started)")) }
    }
}
