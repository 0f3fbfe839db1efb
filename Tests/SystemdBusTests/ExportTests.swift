import Foundation
import Glibc
import Synchronization
import SystemdBusTesting
import Testing

@testable import SystemdBus

@Suite("Exported objects")
struct ExportTests {
    static let name = "org.example.Test"
    static let path = "/org/example/Test"
    static let iface = "org.example.Test1"

    static func exampleInterface() -> ExportedInterface {
        ExportedInterface(
            name: iface,
            methods: [
                .init("Add", inSignature: "ii", outSignature: "i") { call in
                    guard let a = call.arguments[0].int32Value, let b = call.arguments[1].int32Value else { return [] }
                    return [.int32(a &+ b)]
                },
                .init("Fail") { _ in
                    throw BusError(name: "org.example.Error.Nope", message: "nope, on purpose")
                },
                .init("WhoAmI", outSignature: "uu") { call in
                    [.uint32(call.credentials?.uid ?? 9999), .uint32(call.credentials?.pid ?? 0)]
                },
                .init("MakePipe", outSignature: "h") { _ in
                    var fds: [Int32] = [0, 0]
                    guard pipe(&fds) == 0 else { throw BusError(errno: errno) }
                    close(fds[1])
                    let fd = BusFileDescriptor(owning: fds[0])
                    return [.unixFD(fd)]
                },
                .init("Echo", inSignature: "v", outSignature: "v") { call in call.arguments },
                .init("Wrong", outSignature: "s") { _ in [.int32(1)] },
            ],
            signals: [.init("Changed", signature: "s")],
            properties: [
                .init("Count", initialValue: .int32(0)),
                .init("Version", initialValue: .string("1.0"), changeSignal: .constant),
                .init("Label", initialValue: .string("start")) { value in
                    if value.stringValue?.isEmpty != false {
                        throw BusError(name: BusError.Name.invalidArgs, message: "Label may not be empty")
                    }
                },
            ])
    }

    /// Exports `interface` as ``name`` at ``path`` on a private bus and runs `body` with the
    /// fixture, the exported object and a second connection as the client; all torn down after.
    static func withExported(
        _ interface: ExportedInterface = exampleInterface(),
        _ body: (BusTestEnvironment, ExportedObject, BusConnection) async throws -> Void
    ) async throws {
        try await BusTestEnvironment.with { env in
            let object = try await env.connection.export(interface, at: path)
            defer { object.unexport() }
            #expect(try await env.connection.requestName(name) == .primaryOwner)
            let client = try await env.secondConnection("client")
            defer { client.close() }
            try await body(env, object, client)
        }
    }

    @Test("methods: replies, error names, caller credentials, fds, reply signature check")
    func methods() async throws {
        try await Self.withExported { _, object, client in
            let sum = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                arguments: [.int32(2), .int32(40)])
            #expect(sum == [.int32(42)])

            let failure = await #expect(throws: BusError.self) {
                _ = try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Fail")
            }
            #expect(failure?.name == "org.example.Error.Nope")
            #expect(failure?.message == "nope, on purpose")

            let badArgs = await #expect(throws: BusError.self) {
                _ = try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                    arguments: [.string("x")])
            }
            #expect(badArgs?.name == BusError.Name.invalidArgs)

            let wrong = await #expect(throws: BusError.self) {
                _ = try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Wrong")
            }
            #expect(wrong?.name == BusError.Name.failed)

            let who = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.iface, member: "WhoAmI")
            #expect(who == [.uint32(getuid()), .uint32(UInt32(getpid()))])

            let piped = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.iface, member: "MakePipe")
            let fd = try #require(piped.first?.fileDescriptor)
            var byte: UInt8 = 0
            #expect(read(fd.rawValue!, &byte, 1) == 0)  // the write end was closed: EOF
            fd.close()

            let echoed = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.iface, member: "Echo",
                arguments: [.variant(.vardict(["k": .uint64(7)]))])
            #expect(echoed.first?.unwrapped.dictionaryValue?["k"]?.uint64Value == 7)
        }
    }

    @Test("properties: Get/GetAll/Set through sd-bus, validation, PropertiesChanged on change")
    func properties() async throws {
        try await Self.withExported { _, object, client in
            #expect(
                try await client.getProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Version")
                    == .string("1.0"))
            let all = try await client.getAllProperties(destination: Self.name, path: Self.path, interface: Self.iface)
            #expect(all["Count"] == .int32(0))
            #expect(all["Label"] == .string("start"))

            let changes = ValueRecorder<PropertiesChange>()
            let subscription = try await client.observeProperties(
                sender: Self.name, path: Self.path, interface: Self.iface
            ) {
                changes.add($0)
            }
            defer { subscription.cancel() }

            try object.setProperty("Count", .int32(5))
            let change = try await changes.next("Count change")
            #expect(change.changed["Count"] == .int32(5))
            // The same value again is no change: the next signal seen is the one for 6.
            try object.setProperty("Count", .int32(5))
            try object.setProperty("Count", .int32(6))
            #expect(try await changes.next("Count change to 6").changed["Count"] == .int32(6))
            #expect(
                #expect(throws: BusError.self) { try object.setProperty("Count", .string("five")) }?.name
                    == BusError.Name.invalidSignature)

            try await client.setProperty(
                destination: Self.name, path: Self.path, interface: Self.iface, name: "Label",
                value: .string("renamed"))
            #expect(object.property("Label") == .string("renamed"))
            let labelChange = try await changes.next("Label change")
            #expect(labelChange.changed["Label"] == .string("renamed"))

            let refused = await #expect(throws: BusError.self) {
                try await client.setProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Label",
                    value: .string(""))
            }
            #expect(refused?.name == BusError.Name.invalidArgs)
            #expect(object.property("Label") == .string("renamed"))

            let readOnly = await #expect(throws: BusError.self) {
                try await client.setProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Count",
                    value: .int32(1))
            }
            #expect(readOnly?.name == BusError.Name.propertyReadOnly)
        }
    }

    @Test("signals: declared signals are emitted and received with a verified sender")
    func signals() async throws {
        try await Self.withExported { env, object, client in
            let received = ValueRecorder<BusSignal>()
            let subscription = try await client.subscribe(
                sender: Self.name, path: Self.path, interface: Self.iface,
                member: "Changed", signature: "s"
            ) { received.add($0) }
            defer { subscription.cancel() }
            #expect(throws: BusError.self) { try object.emitSignal("Changed", arguments: [.int32(1)]) }
            #expect(throws: BusError.self) { try object.emitSignal("Undeclared") }
            try object.emitSignal("Changed", arguments: [.string("hello")])
            let signal = try await received.next("Changed")
            #expect(signal.arguments == [.string("hello")])
            #expect(signal.sender == env.connection.uniqueName)
        }
    }

    @Test("busctl introspects the exported object and gdbus can call it")
    func externalTools() async throws {
        try await BusTestEnvironment.with { env in
            let object = try await env.connection.export(Self.exampleInterface(), at: Self.path)
            defer { object.unexport() }
            try await env.connection.requestName(Self.name)
            let address = env.bus.address
            let introspection = try await offPool {
                try PrivateBus.runCommand(
                    "/usr/bin/busctl", ["--address=\(address)", "introspect", Self.name, Self.path])
            }
            #expect(introspection.status == 0)
            let lines = introspection.output.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            }
            #expect(lines.contains { $0.hasPrefix(".Add method ii i") })
            #expect(lines.contains { $0.hasPrefix(".Changed signal s") })
            #expect(lines.contains { $0.hasPrefix(".Count property i 0 emits-change") })
            #expect(lines.contains { $0.hasPrefix(".Label property s \"start\" emits-change writable") })
            #expect(lines.contains { $0.hasPrefix(".Version property s \"1.0\" const") })
            #expect(lines.contains { $0.hasPrefix("org.freedesktop.DBus.Properties interface") })

            let called = try await offPool {
                try PrivateBus.runCommand(
                    "/usr/bin/gdbus",
                    [
                        "call", "--address", address, "--dest", Self.name, "--object-path", Self.path,
                        "--method", "\(Self.iface).Add", "20", "22",
                    ])
            }
            #expect(called.status == 0)
            #expect(called.output.trimmingCharacters(in: .whitespacesAndNewlines) == "(42,)")
        }
    }

    @Test("propertyAccessCheck: Get, GetAll and Set run it with the caller's credentials; a refusal is its error")
    func propertyAccessCheck() async throws {
        let seen = Mutex<[BusCredentials?]>([])
        var interface = Self.exampleInterface()
        // Accepts callers of one uid, refuses everyone else with AccessDenied: first the test's
        // own uid, then another, so the same client is let through and then refused.
        let allowedUID = Atomic<UInt32>(getuid())
        interface.propertyAccessCheck = { credentials throws(BusError) in
            seen.withLock { $0.append(credentials) }
            guard credentials?.uid == allowedUID.load(ordering: .relaxed) else {
                throw BusError(name: BusError.Name.accessDenied, message: "uid \(credentials?.uid ?? 0) may not")
            }
        }
        try await Self.withExported(interface) { _, object, client in
            let version = try await client.getProperty(
                destination: Self.name, path: Self.path, interface: Self.iface, name: "Version")
            #expect(version == .string("1.0"))
            let all = try await client.getAllProperties(destination: Self.name, path: Self.path, interface: Self.iface)
            #expect(all.count == 3)
            let checked = seen.withLock { $0 }
            #expect(!checked.isEmpty)
            #expect(
                checked.allSatisfy {
                    $0?.uid == getuid() && $0?.uniqueName == client.uniqueName && $0?.pid == UInt32(getpid())
                })

            let changes = ValueRecorder<PropertiesChange>()
            let subscription = try await client.observeProperties(
                sender: Self.name, path: Self.path, interface: Self.iface
            ) {
                changes.add($0)
            }
            defer { subscription.cancel() }

            allowedUID.store(getuid() &+ 1, ordering: .relaxed)
            // The object's own reads are not checked: a change still goes out with its value
            // (sd-bus reads it through the getter to build PropertiesChanged).
            let before = seen.withLock { $0.count }
            try object.setProperty("Count", .int32(7))
            #expect(try await changes.next("Count change").changed["Count"] == .int32(7))
            #expect(seen.withLock { $0.count } == before)

            let get = await #expect(throws: BusError.self) {
                try await client.getProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Count")
            }
            #expect(get?.name == BusError.Name.accessDenied)
            #expect(get?.message.contains("may not") == true)
            let refusedAll = await #expect(throws: BusError.self) {
                try await client.getAllProperties(destination: Self.name, path: Self.path, interface: Self.iface)
            }
            #expect(refusedAll?.name == BusError.Name.accessDenied)
            let set = await #expect(throws: BusError.self) {
                try await client.setProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Label",
                    value: .string("intruder"))
            }
            #expect(set?.name == BusError.Name.accessDenied)
            #expect(object.property("Label") == .string("start"))
            // Methods are not gated by it: their handlers check call.credentials themselves.
            #expect(
                try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                    arguments: [.int32(2), .int32(3)]) == [.int32(5)])
        }
    }

    @Test("propertyAccessCheck: while one peer's credentials look-up is held back, the loop answers others")
    func heldCredentialsLookUpBlocksNothingElse() async throws {
        var interface = Self.exampleInterface()
        interface.propertyAccessCheck = { credentials throws(BusError) in
            guard credentials?.uid == getuid() else { throw BusError(name: BusError.Name.accessDenied, message: "no") }
        }
        try await Self.withExported(interface) { env, _, client in
            let slow = try await env.secondConnection("slow")
            defer { slow.close() }
            // The slow peer's look-up waits at the gate until the test opens it.
            let gate = AsyncStream<Void>.makeStream()
            let waiting = ValueRecorder<String>()
            env.connection.setCredentialsLookUpGate { [slowName = slow.uniqueName] sender in
                guard sender == slowName else { return }
                waiting.add(sender)
                for await _ in gate.stream { return }
            }
            let held = Task {
                try await slow.getProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface, name: "Count")
            }
            #expect(try await waiting.next("the slow peer's look-up") == slow.uniqueName)
            // Meanwhile another peer's Get (its own first look-up included) and a method call are answered.
            #expect(
                try await client.getProperty(
                    destination: Self.name, path: Self.path, interface: Self.iface,
                    name: "Version") == .string("1.0"))
            #expect(
                try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                    arguments: [.int32(1), .int32(1)]) == [.int32(2)])
            gate.continuation.yield()
            #expect(try await held.value == .int32(0))
        }
    }

    @Test(
        "inOrder: pipelined calls reach the owner in the order sent; past the bound LimitsExceeded; dropped calls fail")
    func inOrderDelivery() async throws {
        var interface = ExportedInterface(
            name: Self.iface, methods: [.init("Take", inSignature: "u", outSignature: "u"), .init("Drop")])
        interface.callDelivery = .inOrder
        interface.maximumPendingCalls = 8
        try await BusTestEnvironment.with { env in
            let object = try await env.connection.export(interface, at: Self.path)
            defer { object.unexport() }
            let client = try await env.secondConnection("client")
            defer { client.close() }
            let seen = ValueRecorder<IncomingMethodCall>()
            let droppedNames = ValueRecorder<String>()
            // Keeps every call but Drop's, which it lets go unanswered.
            let consumer = Task {
                for await call in object.incomingCalls {
                    if call.method.name == "Drop" { droppedNames.add(call.method.name) } else { seen.add(call) }
                }
            }
            defer { consumer.cancel() }
            func take(_ value: UInt32) -> BusPendingReply {
                client.send(
                    destination: env.connection.uniqueName, path: Self.path, interface: Self.iface, member: "Take",
                    arguments: [.uint32(value)])
            }
            // Eight on their way at once, none answered yet: the ninth is refused at once.
            let replies = (1...8).map { take(UInt32($0)) }
            var taken: [IncomingMethodCall] = []
            for _ in 1...8 { taken.append(try await seen.next("a call")) }
            #expect(taken.map { $0.request.arguments[0].uint32Value } == Array(1...8).map { UInt32($0) })
            let refused = await #expect(throws: BusError.self) { try await take(9).value() }
            #expect(refused?.name == BusError.Name.limitsExceeded)
            // Answered out of order; each caller gets its own answer.
            for call in taken.reversed() {
                call.reply(.success([.uint32((call.request.arguments[0].uint32Value ?? 0) * 10)]))
            }
            for (index, reply) in replies.enumerated() {
                #expect(try await reply.value() == [.uint32(UInt32(index + 1) * 10)])
            }
            // Room again; a call the owner drops without answering fails instead of timing out.
            #expect(!take(10).isComplete)
            _ = try await seen.next("the tenth call")
            let dropped = client.send(
                destination: env.connection.uniqueName, path: Self.path, interface: Self.iface,
                member: "Drop")
            #expect(try await droppedNames.next("the dropped call") == "Drop")
            let failure = await #expect(throws: BusError.self) { try await dropped.value() }
            #expect(failure?.name == BusError.Name.failed)
        }
    }

    @Test("a pending reply's wait ends with CancellationError when its task is cancelled; other waiters get the reply")
    func pendingReplyWaitIsCancellable() async throws {
        var interface = ExportedInterface(
            name: Self.iface, methods: [.init("Take", inSignature: "u", outSignature: "u")])
        interface.callDelivery = .inOrder
        try await BusTestEnvironment.with { env in
            let object = try await env.connection.export(interface, at: Self.path)
            defer { object.unexport() }
            let client = try await env.secondConnection("client")
            defer { client.close() }
            let seen = ValueRecorder<IncomingMethodCall>()
            let consumer = Task { for await call in object.incomingCalls { seen.add(call) } }
            defer { consumer.cancel() }
            let reply = client.send(
                destination: env.connection.uniqueName, path: Self.path, interface: Self.iface, member: "Take",
                arguments: [.uint32(7)])
            let call = try await seen.next("the call")
            // Unanswered: a cancelled waiter is let go at once, the call stays on its way.
            let cancelled = Task { try await reply.value() }
            let other = Task { try await reply.value() }
            cancelled.cancel()
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(!reply.isComplete)
            call.reply(.success([.uint32(70)]))
            #expect(try await other.value == [.uint32(70)])
            // Cancelled after the reply came: the reply, not an error.
            let late = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await reply.value()
            }
            #expect(try await late.value == [.uint32(70)])
        }
    }

    @Test("afterReply: what a handler defers follows its reply on the wire, and is skipped when it throws")
    func afterReply() async throws {
        let objectBox = Mutex<ExportedObject?>(nil)
        var interface = Self.exampleInterface()
        interface.methods.append(
            .init("Register", inSignature: "b") { call in
                let object = objectBox.withLock { $0 }
                call.afterReply { try? object?.emitSignal("Changed", arguments: [.string("after")]) }
                if call.arguments.first?.boolValue == false {
                    throw BusError(name: "org.example.Error.No", message: "refused")
                }
                return []
            })
        try await Self.withExported(interface) { _, object, client in
            objectBox.withLock { $0 = object }
            // Replies and signals are recorded on the client's loop thread, in the order they arrive.
            let arrivals = Mutex<[String]>([])
            let received = ValueRecorder<Void>()
            let subscription = try await client.subscribe(
                sender: Self.name, path: Self.path, interface: Self.iface,
                member: "Changed", signature: "s"
            ) { signal in
                arrivals.withLock { $0.append("signal:\(signal.arguments.first?.stringValue ?? "")") }
                received.add(())
            }
            defer { subscription.cancel() }
            for accept in [false, true] {
                let replied = ValueRecorder<Void>()
                client.loop.perform {
                    client.startCall(
                        destination: Self.name, path: Self.path, interface: Self.iface, member: "Register",
                        arguments: [.bool(accept)]
                    ) { result in
                        arrivals.withLock { $0.append(result.isSuccess ? "reply" : "error") }
                        replied.add(())
                    }
                }
                try await replied.next("the reply to Register(\(accept))")
            }
            try await received.next("the deferred signal")
            // A marker signal emitted afterwards shows nothing else was deferred.
            try object.emitSignal("Changed", arguments: [.string("marker")])
            try await received.next("the marker")
            #expect(arrivals.withLock { $0 } == ["error", "reply", "signal:after", "signal:marker"])
        }
    }

    @Test("unexport removes the object")
    func unexport() async throws {
        try await Self.withExported { _, object, client in
            _ = try await client.call(
                destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                arguments: [.int32(1), .int32(1)])
            object.unexport()
            let gone = await #expect(throws: BusError.self) {
                _ = try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: "Add",
                    arguments: [.int32(1), .int32(1)])
            }
            #expect(gone?.name == BusError.Name.unknownObject || gone?.name == BusError.Name.unknownMethod)
        }
    }
}

extension Result {
    fileprivate var isSuccess: Bool { if case .success = self { true } else { false } }
}
