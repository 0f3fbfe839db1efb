import Foundation
import Glibc
import Synchronization
import SystemdBusTesting

/// A real mosquitto broker for one test: its own directory (config, password file, ACL,
/// persistence, log), a free loopback port (listening on 127.0.0.1 only), no anonymous access.
///
/// The broker runs as root (`user root` in its config: otherwise mosquitto, started as root,
/// drops to the `mosquitto` user and cannot write its root-owned directory). It is stopped by its
/// own pid (``stop()``: SIGTERM; ``kill()``: SIGKILL), never by name, and `deinit` stops it and
/// removes its directory.
public final class MosquittoBroker: Sendable {
    /// The ACL the package ships, `dist/examples/mosquitto/applifecycle.acl` in the package's root:
    /// every broker of the tests runs under it unless a test passes its own, so each fleet test
    /// has each identity's least privilege (a device reads its own push topic and writes its own
    /// state, only `gateway` writes push topics, `operator` reads everything).
    public static let shippedACLPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("dist/examples/mosquitto/applifecycle.acl").path

    /// The content of ``shippedACLPath``.
    ///
    /// - Throws: ``FixtureError`` when the file cannot be read (the tests run from a source tree).
    public static func shippedACL() throws -> String {
        do {
            return try String(contentsOfFile: shippedACLPath, encoding: .utf8)
        } catch {
            throw FixtureError("cannot read the shipped ACL \(shippedACLPath): \(error)")
        }
    }

    /// The broker's port on 127.0.0.1.
    public let port: Int
    /// The broker's directory (removed by `deinit`).
    public let directory: TemporaryDirectory
    /// The users and passwords the password file holds.
    public let users: [String: String]
    private let configPath: String
    private let process = Mutex<ChildProcess?>(nil)

    /// `mqtt://127.0.0.1:<port>`.
    public var url: String { "mqtt://127.0.0.1:\(port)" }
    /// The broker's log file (`log_type all`).
    public var logPath: String { directory.appending("mosquitto.log") }

    /// Starts a broker and waits (at most 5 s) until its port accepts connections.
    ///
    /// - Parameters:
    ///   - users: User names and passwords, written with `mosquitto_passwd -b`.
    ///   - acl: The ACL file's content; `nil` for the shipped one (``shippedACL()``).
    ///   - extraConfiguration: Lines appended to `mosquitto.conf`.
    /// - Throws: ``FixtureError`` when a tool fails or the broker does not come up.
    public init(users: [String: String], acl: String? = nil, extraConfiguration: String = "") throws {
        let acl = try acl ?? Self.shippedACL()
        directory = try TemporaryDirectory(prefix: "mosquitto")
        self.users = users
        do {
            let passwords = try directory.write("passwd", "", mode: 0o600)
            for (user, password) in users.sorted(by: { $0.key < $1.key }) {
                let result = try ChildProcess.run("/usr/bin/mosquitto_passwd", ["-b", passwords, user, password])
                guard result.status == 0 else { throw FixtureError("mosquitto_passwd \(user): \(result.output)") }
            }
            let aclPath = try directory.write("acl", acl + "\n", mode: 0o600)
            try FileManager.default.createDirectory(
                atPath: directory.appending("data"), withIntermediateDirectories: true)
            port = try Self.freePort()
            configPath = try directory.write(
                "mosquitto.conf",
                """
                listener \(port) 127.0.0.1
                allow_anonymous false
                password_file \(passwords)
                acl_file \(aclPath)
                persistence true
                persistence_location \(directory.appending("data"))/
                autosave_interval 1
                max_queued_messages 100000
                max_inflight_messages 100
                log_dest file \(directory.appending("mosquitto.log"))
                log_type all
                user root
                \(extraConfiguration)

                """)
            try launch()
        } catch {
            directory.remove()
            throw error
        }
    }

    deinit {
        process.withLock { child in
            child?.terminateAndWait(escalatingAfter: .seconds(5))
            child = nil
        }
        directory.remove()
    }

    /// Stops the broker with SIGTERM (it saves its persistence database) and waits for it.
    public func stop() {
        process.withLock { child in
            child?.terminateAndWait(escalatingAfter: .seconds(5))
            child = nil
        }
    }

    /// Kills the broker with SIGKILL (nothing saved since the last autosave) and waits for it.
    public func kill() {
        process.withLock { child in
            if let child, !child.hasExited {
                Glibc.kill(child.pid, SIGKILL)
                child.waitForExit()
            }
            child = nil
        }
    }

    /// Starts the broker again on the same port with the same persistence directory.
    ///
    /// - Throws: ``FixtureError`` when it does not come up within 5 s.
    public func restart() throws {
        stop()
        try launch()
    }

    /// The broker's pid while it runs (a test may stop it with SIGSTOP, and must SIGCONT it).
    public var pid: pid_t? { process.withLock { $0.map(\.pid) } }

    /// Whether the broker process is running.
    public var isRunning: Bool { process.withLock { $0.map { !$0.hasExited } ?? false } }

    private func launch() throws {
        let child = try ChildProcess.spawn("/usr/sbin/mosquitto", ["-c", configPath], stdout: .null)
        process.withLock { $0 = child }
        // The port may still be in TIME_WAIT use right after a stop; mosquitto sets SO_REUSEADDR,
        // so it binds at once. Bounded wait for the listener.
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if child.hasExited {
                let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw FixtureError("mosquitto exited at start:\n\(log.suffix(2000))")
            }
            if Self.accepts(port: port) { return }
            usleep(20_000)
        }
        child.terminateAndWait(escalatingAfter: .seconds(2))
        process.withLock { $0 = nil }
        throw FixtureError("mosquitto did not listen on \(port) within 5 s")
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = LoopbackSocket.address(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw FixtureError("bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(port: Int) -> Bool {
        guard let fd = try? LoopbackSocket.connect(port: port) else { return false }
        close(fd)
        return true
    }
}
