import AppLifecycle
import AppLifecycleTesting
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

extension BusTestEnvironment {
    /// A would-be spoofer on another connection to the same bus, with the marker that tells
    /// when this environment's connection has seen everything it sent.
    func spoofer() async throws -> Spoofer {
        try await Spoofer(connection: secondConnection("spoofer"), listener: connection)
    }
}

/// A second connection that sends signals as an impostor, and a marker after them.
///
/// Messages from one sender arrive in order, so once the listener hears the marker it has
/// already handled (and, if all is well, dropped) every signal sent before it.
final class Spoofer {
    let connection: BusConnection
    private let markers = ValueRecorder<String>()
    private let match: BusSubscription

    init(connection: BusConnection, listener: BusConnection) async throws {
        self.connection = connection
        let markers = self.markers
        do {
            match = try await listener.addMatch(
                "type='signal',sender='\(connection.uniqueName)',interface='org.example.Marker'"
            ) { markers.add($0.member) }
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

extension ValueRecorder where Value == HostEvent {
    /// Takes the next events and expects them, in this order.
    func expectNext(_ expected: HostEvent..., sourceLocation: SourceLocation = #_sourceLocation) async throws {
        for event in expected {
            let actual = try await next("\(event)")
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
