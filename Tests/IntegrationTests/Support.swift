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

    /// A would-be spoofer on another connection to the same bus, with the marker that tells
    /// when this harness's connection has seen everything it sent.
    func spoofer() async throws -> Spoofer {
        try await Spoofer(connection: BusConnection(.address(bus.address), loop: loop, description: "spoofer"), listener: connection)
    }
}

/// A second connection that sends signals as an impostor, and a marker after them.
///
/// Messages from one sender arrive in order, so once the listener hears the marker it has
/// already handled (and, if all is well, dropped) every signal sent before it.
final class Spoofer {
    let connection: BusConnection
    private let markers = Recorder<String>()
    private let match: BusSubscription

    init(connection: BusConnection, listener: BusConnection) async throws {
        self.connection = connection
        let markers = self.markers
        do {
            match = try await listener.addMatch(
                "type='signal',sender='\(connection.uniqueName)',interface='org.example.Marker'") { markers.add($0.member) }
        } catch {
            connection.close()
            throw error
        }
    }

    /// Sends a signal as the spoofer.
    func emitSignal(path: String, interface: String, member: String, arguments: [BusValue] = []) throws {
        try connection.emitSignal(path: path, interface: interface, member: member, arguments: arguments)
    }

    /// Sends the marker and waits until the listener has heard it; returns the marker's member.
    func flush() async throws -> String {
        try connection.emitSignal(path: "/org/example", interface: "org.example.Marker", member: "Done")
        return try await markers.next("marker")
    }

    func close() {
        match.cancel()
        connection.close()
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
