import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

/// Holds a loop's thread in one of its own work items until ``release()`` (or the hang guard).
private final class LoopHold: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// `true` when the hold ended by ``release()``, `false` when by the hang guard.
    let ended = ValueRecorder<Bool>()
    private let started = ValueRecorder<Void>()

    init(_ loop: EventLoop) async throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw FixtureError("pipe: errno \(errno)") }
        readEnd = fds[0]
        writeEnd = fds[1]
        loop.perform { [self] in
            started.add(())
            var entry = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            ended.add(poll(&entry, 1, 10_000) > 0)
        }
        try await started.next("the loop to be held")
    }

    func release() { _ = write(writeEnd, "x", 1) }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}

@Suite("Emitting, announcing, unexporting and closing never wait for the loop thread")
struct NonBlockingTests {
    static let path = "/org/example/Busy"
    static let interface = ExportedInterface(
        name: "org.example.Busy", signals: [.init("Ping", signature: "u")],
        properties: [.init("Count", initialValue: .uint32(0))])

    @Test func signalsAndPropertyChangesLeaveWhileTheLoopIsBusyAndKeepTheirOrder() async throws {
        try await BusTestEnvironment.with { env in
            let object = try await env.connection.export(Self.interface, at: Self.path)
            let listener = try await env.secondConnection("listener")
            defer { listener.close() }
            let seen = ValueRecorder<String>()
            let match = try await listener.addMatch(
                "type='signal',sender='\(env.connection.uniqueName)',path='\(Self.path)'"
            ) { signal in
                let changed = signal.arguments.dropFirst().first?.dictionaryValue?["Count"]?.unwrapped.uint32Value
                seen.add(
                    signal.member == "Ping" ? "Ping \(signal.arguments[0].uint32Value ?? 0)" : "Count \(changed ?? 0)")
            }
            defer { match.cancel() }

            // With the loop thread busy, each of these returns at once (a blocking hand-off would
            // wait for the hold, which only this test's release ends: the hang guard would end it).
            let hold = try await LoopHold(env.loop)
            try object.emitSignal("Ping", arguments: [.uint32(1)])
            try object.setProperty("Count", .uint32(1))
            #expect(object.property("Count") == .uint32(1))  // readable at once
            try env.connection.emitSignal(
                path: Self.path, interface: "org.example.Busy", member: "Ping", arguments: [.uint32(2)])
            hold.release()
            #expect(try await hold.ended.next("the hold's end") == true)

            #expect(try await seen.next("first signal") == "Ping 1")
            #expect(try await seen.next("second signal") == "Count 1")
            #expect(try await seen.next("third signal") == "Ping 2")
        }
    }

    @Test func closeReturnsAtOnceAndStillSendsWhatCameBefore() async throws {
        try await BusTestEnvironment.with { env in
            let sender = try await env.secondConnection("sender")
            let object = try await sender.export(Self.interface, at: Self.path)
            let seen = ValueRecorder<UInt32>()
            let match = try await env.connection.addMatch(
                "type='signal',sender='\(sender.uniqueName)',member='Ping'"
            ) { seen.add($0.arguments[0].uint32Value ?? 0) }
            defer { match.cancel() }

            let hold = try await LoopHold(env.loop)
            try object.emitSignal("Ping", arguments: [.uint32(7)])
            object.unexport()
            sender.close()
            hold.release()
            #expect(try await hold.ended.next("the hold's end") == true)
            #expect(try await seen.next("the signal sent before close") == 7)
            #expect(try await eventually { !sender.isOpen })
            #expect(throws: BusError.self) {
                try sender.emitSignal(path: Self.path, interface: "org.example.Busy", member: "Ping")
            }
        }
    }
}
