import Glibc
import SystemdBusTesting

/// TCP on `127.0.0.1`, where every server the tests and benchmarks start listens (mosquitto, the
/// gateway): its address and a blocking, close-on-exec connection to it.
public enum LoopbackSocket {
    /// `127.0.0.1:port` (port 0: any free one, for `bind`).
    public static func address(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    /// Connects to `127.0.0.1:port` and returns the socket, which the caller closes.
    ///
    /// - Throws: ``FixtureError`` naming the step that failed and why.
    public static func connect(port: Int) throws(FixtureError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        var address = address(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw FixtureError("connect 127.0.0.1:\(port): \(message)")
        }
        return fd
    }
}
