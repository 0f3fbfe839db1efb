import Glibc
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("BusConnection")
struct BusConnectionTests {
    @Test("connects, gets a unique name and calls the bus daemon")
    func connectAndCall() async throws {
        try await BusTestEnvironment.with { env in
            #expect(env.connection.uniqueName.hasPrefix(":"))
            #expect(env.connection.isOpen)
            let names = try await env.connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "ListNames")
            #expect(names.first?.signature == "as")
            #expect(names.first?.stringArrayValue?.contains(env.connection.uniqueName) == true)
            #expect(try await env.connection.nameOwner("org.freedesktop.DBus") == "org.freedesktop.DBus")
            #expect(try await env.connection.nameOwner("org.example.Nobody") == nil)
        }
    }

    @Test(
        "the async open connects without blocking the loop: a bus that never answers times out or is cancelled while others work",
        .timeLimit(.minutes(1)))
    func asyncOpen() async throws {
        try await BusTestEnvironment.with { env in
            let connection = try await BusConnection(
                .address(env.bus.address), loop: env.loop, description: "async", timeout: .seconds(25))
            defer { connection.close() }
            #expect(connection.uniqueName.hasPrefix(":"))
            #expect(try await connection.nameOwner("org.freedesktop.DBus") == "org.freedesktop.DBus")

            // A "bus" that accepts connections (the kernel's backlog) but never reads or answers.
            let mute = try ListeningSocket()
            defer { mute.close() }
            let address = BusConnection.Address.address("unix:path=\(mute.path)")

            let timedOut = await #expect(throws: BusError.self) {
                _ = try await BusConnection(address, loop: env.loop, description: "mute", timeout: .milliseconds(200))
            }
            #expect(timedOut?.name == BusError.Name.noReply)

            // While a connect waits on the mute bus, the shared loop still serves the other
            // connection: the sync open would hold the loop thread until sd-bus gave up.
            let pending = Task {
                try await BusConnection(address, loop: env.loop, description: "mute", timeout: .seconds(60))
            }
            for _ in 0..<3 {
                #expect(try await env.connection.nameOwner("org.freedesktop.DBus") == "org.freedesktop.DBus")
            }
            pending.cancel()
            let outcome = await pending.result
            #expect(throws: CancellationError.self) { _ = try outcome.get() }

            // The loop shuts down while an open waits: the open fails then, not at its deadline
            // (which is past the test's time limit), and the bus is closed by the loop's hook.
            let ownLoop = try EventLoop(name: "shut-down-while-opening")
            let opening = Task {
                try await BusConnection(address, loop: ownLoop, description: "mute", timeout: .seconds(300))
            }
            #expect(try await env.connection.nameOwner("org.freedesktop.DBus") == "org.freedesktop.DBus")
            ownLoop.shutdown()
            await #expect(throws: BusError.self) { _ = try await opening.value }

            // Nothing listening at all: refused at once.
            let refused = await #expect(throws: BusError.self) {
                _ = try await BusConnection(
                    .address("unix:path=\(mute.directory)/absent"), loop: env.loop, timeout: .seconds(5))
            }
            #expect(refused != nil)
        }
    }

    @Test("error replies carry the D-Bus error name and message")
    func errors() async throws {
        try await BusTestEnvironment.with { env in
            let unknown = await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "NoSuchMethod")
            }
            #expect(unknown?.name == BusError.Name.unknownMethod)
            #expect(unknown?.message.isEmpty == false)

            let missing = await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: "org.example.Missing", path: "/", interface: "org.example.X", member: "Y")
            }
            #expect(missing?.name == BusError.Name.serviceUnknown)

            // A local marshalling error: an array element of the wrong type.
            let bad = await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "ListNames",
                    arguments: [.array(elementSignature: "s", [.int32(1)])])
            }
            #expect(bad?.name == BusError.Name.invalidArgs)
            #expect(BusError(errno: -ENOENT).errno == ENOENT)
            #expect(BusError(errno: -ENOENT).description.contains("No such file"))
        }
    }

    @Test("every D-Bus type round-trips through a real peer (python-dbusmock echo)")
    func roundTrip() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "timedated", address: env.bus.address)
            defer { mock.stop() }
            let values: [BusValue] = [
                .byte(200), .bool(true), .int16(-300), .uint16(60000), .int32(-70000), .uint32(4_000_000_000),
                .int64(-5_000_000_000), .uint64(18_000_000_000_000_000_000), .double(3.25),
                .string("héllo wörld"), .objectPath("/org/example/Obj"), .signature("a{sv}"),
                .stringArray(["a", "b"]),
                .array(elementSignature: "i", []),
                .vardict(["answer": .int32(42), "name": .string("x"), "flag": .bool(false)]),
                .dictionary(
                    keySignature: "u", valueSignature: "as",
                    [
                        BusDictionaryEntry(key: .uint32(1), value: .stringArray(["one"])),
                        BusDictionaryEntry(key: .uint32(2), value: .stringArray([])),
                    ]),
                .structure([.string("s"), .int32(1), .structure([.double(0.5), .objectPath("/")])]),
                .variant(.array(elementSignature: "(so)", [.structure([.string("c1"), .objectPath("/c1")])])),
                .array(elementSignature: "ay", [.array(elementSignature: "y", [.byte(0), .byte(255)])]),
            ]
            let signature = BusValue.signature(of: values)
            #expect(signature == "ybnqiuxtdsogasaia{sv}a{uas}(si(do))vaay")
            try mock.addMethod(
                interface: "org.example.Echo", name: "Echo", inSignature: signature,
                outSignature: signature, code: "ret = tuple(args)")
            let reply = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath, interface: "org.example.Echo", member: "Echo",
                arguments: values)
            #expect(reply.count == values.count)
            for (sent, received) in zip(values, reply) {
                #expect(sent == received, "\(sent) came back as \(received)")
            }
            #expect(reply[14].dictionaryValue?["answer"]?.int32Value == 42)
            #expect(reply[17].unwrapped.arrayValue?.first?.structValue?[1].stringValue == "/c1")
        }
    }

    @Test("properties: Get, GetAll, Set and PropertiesChanged from the owner")
    func properties() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "timedated", address: env.bus.address)
            defer { mock.stop() }
            let iface = "org.freedesktop.timedate1"
            let zone = try await env.connection.getProperty(
                destination: mock.busName, path: mock.mainPath, interface: iface, name: "Timezone")
            #expect(zone.stringValue == "Etc/Utc")
            let all = try await env.connection.getAllProperties(
                destination: mock.busName, path: mock.mainPath, interface: iface)
            #expect(all["NTP"]?.boolValue == true)
            #expect(all["CanNTP"] != nil)

            let changes = ValueRecorder<PropertiesChange>()
            let subscription = try await env.connection.observeProperties(
                sender: mock.busName, path: mock.mainPath, interface: iface
            ) { changes.add($0) }
            defer { subscription.cancel() }
            try mock.updateProperties(interface: iface, properties: ["Timezone": "'Europe/Berlin'"])
            let change = try await changes.next("PropertiesChanged")
            #expect(change.interface == iface)
            #expect(change.changed["Timezone"]?.stringValue == "Europe/Berlin")
            #expect(change.invalidated.isEmpty)

            // The timedated mock implements SetTimezone by setting the property.
            _ = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath, interface: iface,
                member: "SetTimezone", arguments: [.string("Asia/Tokyo"), .bool(false)])
            let after = try await env.connection.getProperty(
                destination: mock.busName, path: mock.mainPath, interface: iface, name: "Timezone")
            #expect(after.stringValue == "Asia/Tokyo")
        }
    }

    @Test("credentials of a peer come from the bus daemon")
    func credentials() async throws {
        try await BusTestEnvironment.with { env in
            let other = try await env.secondConnection()
            defer { other.close() }
            let creds = try await env.connection.credentials(of: other.uniqueName)
            #expect(creds.uid == getuid())
            #expect(creds.pid == UInt32(getpid()))
            #expect(creds.uniqueName == other.uniqueName)
        }
    }

    @Test("requestName and releaseName")
    func names() async throws {
        try await BusTestEnvironment.with { env in
            #expect(try await env.connection.requestName("org.example.Test") == .primaryOwner)
            #expect(try await env.connection.requestName("org.example.Test") == .alreadyOwner)
            let other = try await env.secondConnection()
            defer { other.close() }
            #expect(try await other.requestName("org.example.Test") == .exists)
            #expect(try await other.nameOwner("org.example.Test") == env.connection.uniqueName)
            #expect(try await env.connection.releaseName("org.example.Test"))
            #expect(try await other.nameOwner("org.example.Test") == nil)
        }
    }

    @Test("a call is cancelled with its task")
    func cancellation() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "timedated", address: env.bus.address)
            defer { mock.stop() }
            try mock.addMethod(
                interface: "org.example.Slow", name: "Sleep", inSignature: "", outSignature: "",
                code: "import time; time.sleep(3)")
            let connection = env.connection
            let task = Task {
                try await connection.call(
                    destination: mock.busName, path: mock.mainPath,
                    interface: "org.example.Slow", member: "Sleep")
            }
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
    }
}
