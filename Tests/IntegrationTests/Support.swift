import AppLifecycle
import AppLifecycleTesting
import Synchronization
import SystemdBus
import Testing

/// A private bus, an event loop and one connection, torn down even when the test fails
/// (connection closed, loop joined, daemon killed by its own pid).
struct BusHarness {
    let bus: PrivateBus
    let loop: EventLoop
    let connection: BusConnection

    static func with<T>(_ body: (BusHarness) async throws -> T) async throws -> T {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "it-loop")
        defer { loop.shutdown() }
        let connection = try BusConnection(.address(bus.address), loop: loop, description: "integration")
        defer { connection.close() }
        return try await body(BusHarness(bus: bus, loop: loop, connection: connection))
    }

    /// Another plain connection to the same bus (a would-be spoofer).
    func plainConnection() throws -> BusConnection {
        try BusConnection(.address(bus.address), loop: loop, description: "plain")
    }
}

struct HangGuardExpired: Error, CustomStringConvertible {
    var what: String
    var description: String { "hang guard expired waiting for \(what)" }
}

/// Records values delivered on any thread and lets a test take them in order.
///
/// `next()` waits (with a generous hang guard, not a timing assertion) for the next value not yet taken.
final class Recorder<Value: Sendable>: Sendable {
    private struct Waiter {
        var count: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var values: [Value] = []
        var taken = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    func add(_ value: Value) {
        let ready = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.values.append(value)
            let ids = state.waiters.filter { $0.value.count <= state.values.count }.map(\.key)
            return ids.compactMap { state.waiters.removeValue(forKey: $0)?.continuation }
        }
        ready.forEach { $0.resume(returning: true) }
    }

    /// Everything recorded so far.
    var values: [Value] { state.withLock { $0.values } }

    /// The values recorded but not taken with `next()` yet.
    var untaken: [Value] { state.withLock { Array($0.values[$0.taken...]) } }

    /// Takes the next value, waiting for it if needed.
    func next(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Value {
        let index = state.withLock { state in
            defer { state.taken += 1 }
            return state.taken
        }
        guard await waitForCount(index + 1) else {
            Issue.record("hang guard expired waiting for \(what); recorded: \(values)", sourceLocation: sourceLocation)
            throw HangGuardExpired(what: what)
        }
        return state.withLock { $0.values[index] }
    }

    private func waitForCount(_ count: Int, hangGuard: Duration = .seconds(30)) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = state.withLock { state -> UInt64? in
                if state.values.count >= count { return nil }
                state.nextID += 1
                state.waiters[state.nextID] = Waiter(count: count, continuation: continuation)
                return state.nextID
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            Task { [self] in
                try? await Task.sleep(for: hangGuard)
                self.state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume(returning: false)
            }
        }
    }
}

extension Recorder where Value == HostEvent {
    /// Takes the next events and expects them, in this order.
    func expectNext(_ expected: HostEvent..., sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for event in expected {
            let actual = try await next("\(event)", sourceLocation: sourceLocation)
            #expect(actual == event, sourceLocation: sourceLocation)
        }
    }
}

extension DBusMock {
    /// Calls a method of the mock's control interface on an object.
    @discardableResult
    func mockCall(path: String? = nil, _ method: String, _ arguments: [String] = []) throws -> String {
        try call(path: path, interface: DBusMock.mockInterface, method: method, arguments: arguments)
    }
}
