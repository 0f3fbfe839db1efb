import AppLifecycleTesting
import Glibc
import Synchronization
import SystemdBus
import Testing

/// A test environment: a private bus daemon, an event loop and one connection, torn down
/// (connection closed, loop joined, daemon killed by pid) even when the test fails.
struct BusFixture {
    let bus: PrivateBus
    let loop: EventLoop
    let connection: BusConnection

    static func with<T>(_ body: (BusFixture) async throws -> T) async throws -> T {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "test-loop")
        defer { loop.shutdown() }
        let connection = try BusConnection(.address(bus.address), loop: loop, description: "test")
        defer { connection.close() }
        return try await body(BusFixture(bus: bus, loop: loop, connection: connection))
    }

    /// Opens another connection to the same bus on the same loop.
    func secondConnection(_ description: String = "second") throws -> BusConnection {
        try BusConnection(.address(bus.address), loop: loop, description: description)
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Collects values from loop-thread handlers and lets a test await them in order.
final class Collector<Value: Sendable>: Sendable {
    private let stream: AsyncStream<Value>
    private let continuation: AsyncStream<Value>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Value.self)
    }

    func add(_ value: Value) { continuation.yield(value) }

    /// Waits for the next value; the timeout is only a hang guard.
    func next(_ what: String = "a value", timeout: Duration = .seconds(30)) async throws -> Value {
        let stream = self.stream
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return await iterator.next()
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TimeoutError(what: what) }
            return value
        }
    }
}

import Foundation

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
        var template = Array("/tmp/mute-bus-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BusError(errno: errno, context: "mkdtemp") }
        directory = String(cString: made)
        path = directory + "/bus"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BusError(errno: errno, context: "socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            let failure = BusError(errno: errno, context: "bind/listen \(path)")
            close()
            throw failure
        }
    }

    /// Closes the socket and removes its directory.
    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
        unlink(path)
        rmdir(directory)
    }

    deinit { close() }
}
