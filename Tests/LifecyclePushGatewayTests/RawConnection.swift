import BrokerTestSupport
import Foundation
import Glibc
import SystemdBusTesting

/// A plain TCP connection to the gateway for tests that send a request byte by byte, or nothing at
/// all, and watch when the gateway closes it. Non-blocking after connecting; closed in `deinit`.
final class RawConnection {
    private let fd: Int32
    /// Everything the gateway sent so far.
    private(set) var received: [UInt8] = []
    /// Whether the gateway closed (or reset) the connection.
    private(set) var isClosedByPeer = false

    /// Connects to `127.0.0.1:port` (the kernel completes the handshake even before the gateway
    /// accepts).
    init(port: Int) throws {
        fd = try LoopbackSocket.connect(port: port)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(fd)
    }

    /// Sends `text`; `false` when the connection is gone.
    @discardableResult
    func send(_ text: String) -> Bool {
        send(bytes: Array(text.utf8))
    }

    /// Sends `bytes` (a binary body); `false` when the connection is gone.
    @discardableResult
    func send(bytes: [UInt8]) -> Bool {
        let sent = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return sent == bytes.count
    }

    /// Reads what has arrived without waiting; returns ``isClosedByPeer``.
    @discardableResult
    func poll() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !isClosedByPeer {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += buffer[..<count]
            } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                isClosedByPeer = true
            } else {
                break
            }
        }
        return isClosedByPeer
    }

    /// How many bytes this connection sent that the gateway (listening on `port`) has not read
    /// yet: the receive queue of its end of the connection in `/proc/net/tcp`, `nil` if not found.
    func unreadByPeer(port: Int) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        // Read to the end: a /proc file has no size, and one read returns a page at most.
        guard named == 0, let table = try? FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp")).readToEnd()
        else { return nil }
        func hex(_ port: Int) -> String {
            let digits = String(port, radix: 16, uppercase: true)
            return ":" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        }
        let local = hex(port)
        let remote = hex(Int(UInt16(bigEndian: address.sin_port)))
        // sl local_address rem_address st tx_queue:rx_queue …, addresses and queues in hex.
        for line in String(decoding: table, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[1].hasSuffix(local), fields[2].hasSuffix(remote) else { continue }
            return fields[4].split(separator: ":").last.flatMap { Int($0, radix: 16) }
        }
        return nil
    }

    /// What arrived, as text.
    var text: String { String(decoding: received, as: UTF8.self) }

    /// Waits (bounded) until the gateway closes the connection.
    ///
    /// - Parameter seconds: The bound.
    /// - Returns: Whether it closed in time.
    func waitUntilClosed(seconds: Int) async -> Bool {
        await eventually(hangGuard: .seconds(seconds), pause: .milliseconds(20)) { poll() }
    }
}

/// A process's CPU time (user and system) so far, from `/proc/<pid>/stat`.
func cpuSeconds(of pid: pid_t) throws -> Double {
    let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
    // The fields after the command name, which is in parentheses and may hold spaces.
    guard let close = stat.lastIndex(of: ")") else { throw FixtureError("unreadable /proc/\(pid)/stat") }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else {
        throw FixtureError("unreadable /proc/\(pid)/stat")
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// How many descriptors a process has open, from `/proc/<pid>/fd` (0 when unreadable).
func openDescriptorCount(of pid: pid_t) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
}
