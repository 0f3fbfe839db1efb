import Foundation
import Glibc
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

/// Runs blocking work on a fresh thread, so the Swift concurrency pool stays free (exported
/// method handlers run in tasks and must be able to answer a tool the test is waiting for).
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// A listening Unix socket that never accepts, reads or answers: a bus daemon that hangs.
///
/// Connecting succeeds (the kernel queues the connection in the backlog) and whatever the
/// client writes stays unread, so authentication never completes. It lives in a directory of
/// its own, removed by ``close()``.
final class ListeningSocket {
    let directory: String
    let path: String
    private var fd: Int32

    init() throws {
        directory = try TemporaryDirectory(prefix: "mute-bus").path
        path = directory + "/bus"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BusError(errno: errno, context: "socket") }
        guard bindUnixSocket(fd, to: path) == 0, listen(fd, 16) == 0 else {
            let failure = BusError(errno: errno, context: "bind/listen \(path)")
            close()
            throw failure
        }
    }

    /// Closes the socket and removes its directory.
    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
        unlink(path)
        rmdir(directory)
    }

    deinit { close() }
}

/// `bind(2)` of a Unix socket to a filesystem path; returns what `bind` returns (errno on -1).
func bindUnixSocket(_ fd: Int32, to path: String) -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
}
