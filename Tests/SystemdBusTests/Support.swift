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
