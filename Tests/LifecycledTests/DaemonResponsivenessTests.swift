import AppLifecycle
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("lifecycled never waits for one peer while others call", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonResponsivenessTests {
    @Test func getStateIsAnsweredWhileAnotherPeersPropertyReadWaitsForItsCredentials() async throws {
        let id = "org.example.Held"
        try await withDaemon(setUp: { directory in
            try writeManifest(directory, id: id, executable: "/bin/true")
        }) { harness in
            let reader = try await harness.newClient("slow-reader")
            defer { reader.close() }
            let connection = try #require(harness.daemon.connection)
            // The reader's credentials look-up (its first Properties.Get) waits until the test opens the gate.
            let gate = AsyncStream<Void>.makeStream()
            let waiting = ValueRecorder<String>()
            connection.setCredentialsLookUpGate { [readerName = reader.connection.uniqueName] sender in
                guard sender == readerName else { return }
                waiting.add(sender)
                for await _ in gate.stream { return }
            }
            defer { connection.setCredentialsLookUpGate(nil) }
            let read = Task { try await reader.property(LifecycledProtocol.Property.apps.name) }
            #expect(try await waiting.next("the reader's look-up") == reader.connection.uniqueName)

            // Meanwhile the daemon answers another client, whose own look-up is not held.
            let state = try await harness.client.call(LifecycledProtocol.Method.getState.name, [.string(id)])
            #expect(state == [.string(ApplicationState.notRunning.rawValue)])

            gate.continuation.yield()
            let apps = try await read.value
            #expect(apps.arrayValue?.count == 1)
        }
    }
}

@Suite("lifecycled applies each caller's calls in the order they were sent", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonCallOrderTests {
    @Test func reportsSentWithoutAwaitingTheirRepliesAreAppliedInArrivalOrder() async throws {
        try await withDaemon { h in
            let id = "org.example.Pipelined"
            let app = try await FakeApp(id, address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            // 60 reports on their way at once, each a transition from the one before.
            let states: [ApplicationState] = (0..<30).flatMap { _ in [.inactive, .active] }
            let replies = states.map { state in
                app.client.connection.send(
                    destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
                    interface: LifecycledProtocol.interface, member: LifecycledProtocol.Method.reportState.name,
                    arguments: [.string(id), .string(state.rawValue)])
            }
            for reply in replies { _ = try await reply.value() }
            var expected: [String] = []
            var previous = ApplicationState.notRunning
            for state in states {
                expected.append("\(previous.rawValue)->\(state.rawValue)")
                previous = state
            }
            #expect(h.emitted.stateChanges(id) == expected)
        }
    }
}

@Suite("lifecycled refuses RegisterApp without leaving anything behind", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonRegistrationTests {
    @Test func refusedRegistrationsLeaveNoEntry() async throws {
        try await withDaemon { h in
            let app = try await FakeApp("org.example.Bound", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            let before = try await h.client.call(LifecycledProtocol.Method.listApps.name)
            // The same connection asks for other ids: each is refused ("already registered as").
            for index in 0..<50 {
                let name = await app.client.errorName(
                    LifecycledProtocol.Method.registerApp.name, [.string("org.example.Other\(index)")])
                #expect(name == LifecycledProtocol.ErrorName.notRegistered)
            }
            let after = try await h.client.call(LifecycledProtocol.Method.listApps.name)
            #expect(after == before)
            #expect(h.daemon.registry.all.map(\.id) == ["org.example.Bound"])
        }
    }

    @Test func aCallerWhosePidIsUnknownIsRefused() async throws {
        try await withDaemon { h in
            // As the daemon sees a call whose sender's credentials came without a pid.
            let call = BusMethodCall(
                sender: ":1.999", credentials: BusCredentials(uniqueName: ":1.999", uid: getuid(), pid: nil),
                path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
                member: LifecycledProtocol.Method.registerApp.name, arguments: [.string("org.example.NoPid")])
            do {
                _ = try await h.daemon.handle(call)
                Issue.record("RegisterApp without a pid was accepted")
            } catch let error as BusError {
                #expect(error.name == LifecycledProtocol.ErrorName.notRegistered)
            }
            #expect(h.daemon.registry["org.example.NoPid"] == nil)
        }
    }
}
