import Glibc
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("Signals and name owners")
struct SignalTests {
    static let manager = "org.freedesktop.login1.Manager"
    static let login1Path = "/org/freedesktop/login1"

    /// Makes sure everything `connection` sent before has been routed by the daemon: the
    /// daemon handles one connection's messages in order, so once a later call is answered,
    /// earlier signals have been delivered to their receivers' sockets.
    static func flush(_ connection: BusConnection) async throws {
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "GetId")
    }

    @Test("a signal from the name's owner is delivered; the same signal from another connection is dropped")
    func spoofProtection() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "logind", address: env.bus.address)
            defer { mock.stop() }

            let verified = ValueRecorder<BusSignal>()
            let subscription = try await env.connection.subscribe(
                sender: "org.freedesktop.login1", path: Self.login1Path, interface: Self.manager,
                member: "PrepareForSleep", signature: "b"
            ) { verified.add($0) }
            defer { subscription.cancel() }
            // An unverified raw match sees everything, proving the spoofed signal did arrive.
            let raw = ValueRecorder<BusSignal>()
            let rawSubscription = try await env.connection.addMatch(
                MatchRule.build(path: Self.login1Path, interface: Self.manager, member: "PrepareForSleep")
            ) { raw.add($0) }
            defer { rawSubscription.cancel() }

            let spoofer = try await env.secondConnection("spoofer")
            defer { spoofer.close() }
            try spoofer.emitSignal(
                path: Self.login1Path, interface: Self.manager, member: "PrepareForSleep",
                arguments: [.bool(true)])
            try await Self.flush(spoofer)
            // The real owner, but with the wrong signature: dropped by the signature check.
            try mock.emitSignal(interface: Self.manager, name: "PrepareForSleep", signature: "s", arguments: ["'yes'"])
            // The real owner with the right signature: delivered.
            try mock.emitSignal(interface: Self.manager, name: "PrepareForSleep", signature: "b", arguments: ["false"])

            let spoofed = try await raw.next("spoofed signal on the raw match")
            #expect(spoofed.sender == spoofer.uniqueName)
            let wrongSignature = try await raw.next("wrong-signature signal on the raw match")
            #expect(wrongSignature.signature == "s")
            let genuineRaw = try await raw.next("genuine signal on the raw match")
            #expect(genuineRaw.arguments == [.bool(false)])

            // The verified subscription's first delivery is the genuine one.
            let genuine = try await verified.next("genuine signal")
            #expect(genuine.arguments == [.bool(false)])
            #expect(genuine.signature == "b")
            #expect(genuine.sender == (try await env.connection.nameOwner("org.freedesktop.login1")))
            #expect(genuine.sender != spoofer.uniqueName)
            #expect(genuine.path == Self.login1Path)
        }
    }

    @Test("a spoofed NameOwnerChanged cannot move the tracked owner")
    func spoofedNameOwnerChanged() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "logind", address: env.bus.address)
            defer { mock.stop() }
            let tracker = try await env.connection.trackNameOwner("org.freedesktop.login1")
            let owner = tracker.currentOwner
            #expect(owner != nil)
            let spoofer = try await env.secondConnection("spoofer")
            defer { spoofer.close() }
            try spoofer.emitSignal(
                path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
                arguments: [.string("org.freedesktop.login1"), .string(owner ?? ""), .string(spoofer.uniqueName)])
            try await Self.flush(spoofer)
            // Anything the daemon routed before a reply on our own connection has been handled.
            try await Self.flush(env.connection)
            _ = try await env.loop.run { 0 }
            #expect(tracker.currentOwner == owner)
        }
    }

    @Test("owner changes are reported when the service stops and comes back, and signals follow the new owner")
    func ownerChange() async throws {
        try await BusTestEnvironment.with { env in
            let first = try DBusMock(template: "logind", address: env.bus.address)
            defer { first.stop() }
            let tracker = try await env.connection.trackNameOwner("org.freedesktop.login1")
            let firstOwner = try #require(tracker.currentOwner)
            let changes = ValueRecorder<NameOwnerChange>()
            let token = try await tracker.addOwnerChangeHandler { changes.add($0) }
            defer { token.cancel() }
            let signals = ValueRecorder<BusSignal>()
            let subscription = try await env.connection.subscribe(
                sender: "org.freedesktop.login1", path: Self.login1Path, interface: Self.manager,
                member: "PrepareForShutdown", signature: "b"
            ) { signals.add($0) }
            defer { subscription.cancel() }

            first.stop()
            let vanished = try await changes.next("vanish")
            #expect(vanished == NameOwnerChange(name: "org.freedesktop.login1", oldOwner: firstOwner, newOwner: nil))

            let second = try DBusMock(template: "logind", address: env.bus.address)
            defer { second.stop() }
            let appeared = try await changes.next("appear")
            #expect(appeared.oldOwner == nil)
            let secondOwner = try #require(appeared.newOwner)
            #expect(secondOwner != firstOwner)
            #expect(tracker.currentOwner == secondOwner)

            try second.emitSignal(
                interface: Self.manager, name: "PrepareForShutdown", signature: "b", arguments: ["true"])
            let signal = try await signals.next("signal from the new owner")
            #expect(signal.sender == secondOwner)
            #expect(signal.arguments.first?.boolValue == true)
        }
    }

    @Test("logind Inhibit returns an owned fd; closing it releases the inhibitor")
    func inhibitFD() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "logind", address: env.bus.address)
            defer { mock.stop() }
            let reply = try await env.connection.call(
                destination: "org.freedesktop.login1", path: Self.login1Path, interface: Self.manager,
                member: "Inhibit",
                arguments: [.string("sleep"), .string("SystemdBusTests"), .string("testing"), .string("delay")])
            #expect(reply.first?.signature == "h")
            let fd = try #require(reply.first?.fileDescriptor)
            let raw = try #require(fd.rawValue)
            #expect(fcntl(raw, F_GETFD) & FD_CLOEXEC != 0)

            let listed = try await env.connection.call(
                destination: "org.freedesktop.login1", path: Self.login1Path, interface: Self.manager,
                member: "ListInhibitors")
            #expect(listed.first?.signature == "a(ssssuu)")
            let inhibitors = try #require(listed.first?.arrayValue)
            #expect(inhibitors.count == 1)
            #expect(inhibitors.first?.structValue?[0].stringValue == "sleep")
            #expect(inhibitors.first?.structValue?[3].stringValue == "delay")

            fd.close()
            #expect(!fd.isOpen)
            fd.close()  // idempotent
            // The mock drops the inhibitor when its loop sees the hang-up: after the close, not at it.
            #expect(
                try await eventually {
                    let after = try await env.connection.call(
                        destination: "org.freedesktop.login1", path: Self.login1Path, interface: Self.manager,
                        member: "ListInhibitors")
                    return after.first?.arrayValue?.isEmpty == true
                })
        }
    }

    @Test("an fd sent as an h argument arrives as a working duplicate")
    func sendFD() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "timedated", address: env.bus.address)
            defer { mock.stop() }
            try mock.addMethod(
                interface: "org.example.Fd", name: "Echo", inSignature: "h", outSignature: "h", code: "ret = args[0]")
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            let readEnd = BusFileDescriptor(owning: fds[0])
            let writeEnd = BusFileDescriptor(owning: fds[1])
            defer {
                readEnd.close()
                writeEnd.close()
            }
            let reply = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath, interface: "org.example.Fd", member: "Echo",
                arguments: [.unixFD(writeEnd)])
            let echoed = try #require(reply.first?.fileDescriptor)
            #expect(echoed.rawValue != writeEnd.rawValue)
            #expect(writeEnd.isOpen)  // sending did not consume ours
            let raw = try #require(echoed.take())
            _ = "via dbus".withCString { write(raw, $0, 8) }
            close(raw)
            var buffer = [UInt8](repeating: 0, count: 16)
            let n = read(readEnd.rawValue!, &buffer, 16)
            #expect(n == 8)
            #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "via dbus")
            #expect(echoed.take() == nil)
        }
    }

    @Test("a bus daemon restart fires the disconnect handler; a new connection works")
    func disconnect() async throws {
        try await BusTestEnvironment.with { env in
            let disconnected = ValueRecorder<Bool>()
            env.connection.addDisconnectHandler { disconnected.add(env.loop.isOnLoopThread) }
            // A call in flight when the bus dies must fail, not hang.
            let mock = try DBusMock(template: "timedated", address: env.bus.address)
            defer { mock.stop() }
            try mock.addMethod(
                interface: "org.example.Slow", name: "Sleep", inSignature: "", outSignature: "",
                code: "import time; time.sleep(5)")
            let connection = env.connection
            let pending = Task {
                try await connection.call(
                    destination: mock.busName, path: mock.mainPath,
                    interface: "org.example.Slow", member: "Sleep")
            }
            try await Task.sleep(for: .milliseconds(50))  // let the call leave; not an assertion
            try env.bus.restart()
            #expect(try await disconnected.next("disconnect") == true)
            #expect(!env.connection.isOpen)
            await #expect(throws: BusError.self) { _ = try await pending.value }
            await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetId")
            }
            let reconnected = try await BusConnection(
                .address(env.bus.address), loop: env.loop, timeout: BusTestEnvironment.connectTimeout)
            defer { reconnected.close() }
            let id = try await reconnected.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "GetId")
            #expect(id.first?.stringValue?.isEmpty == false)
        }
    }

    // `.system` honouring $DBUS_SYSTEM_BUS_ADDRESS is tested in IntegrationTests/ProcessHostTests, in a
    // child process: setting the variable in this process would race with other tests reading the environment.
}
