import Glibc
import SystemdBusTesting
import Testing

@testable import SystemdBus

/// A label that refuses to be empty: a typed argument that checks its value.
private struct Label: BusArgument {
    let text: String
    static var busSignature: String { "s" }
    init(busValue: BusValue) throws(BusError) {
        let text = try String(busValue: busValue)
        guard !text.isEmpty else { throw BusError(name: BusError.Name.invalidArgs, message: "a label is not empty") }
        self.text = text
    }
    var busValue: BusValue { .string(text) }
}

/// What the typed methods act on.
@MainActor
private final class Counter {
    var totals: [String: UInt32] = [:]
    var seen: [String] = []
}

@Suite("Typed exported methods")
struct ExportedMethodTests {
    static let name = "org.example.Typed"
    static let path = "/org/example/Typed"
    static let iface = "org.example.Typed1"

    @Test("every BusArgument has its signature and survives encoding and decoding")
    func argumentsRoundTrip() throws {
        func roundTrip<Value: BusArgument & Equatable>(_ value: Value, _ signature: String) throws {
            #expect(Value.busSignature == signature)
            #expect(value.busValue.signature == signature)
            #expect(try Value(busValue: value.busValue) == value)
        }
        try roundTrip("text", "s")
        try roundTrip(true, "b")
        try roundTrip(UInt8(7), "y")
        try roundTrip(Int16(-3), "n")
        try roundTrip(UInt16(3), "q")
        try roundTrip(Int32(-5), "i")
        try roundTrip(UInt32(5), "u")
        try roundTrip(Int64(-1 << 40), "x")
        try roundTrip(UInt64(1 << 40), "t")
        try roundTrip(2.5, "d")
        try roundTrip([UInt8](arrayLiteral: 1, 2, 3), "ay")
        try roundTrip(["a", "b"], "as")
        try roundTrip(BusObjectPath("/org/example/A"), "o")
        try roundTrip(["k": BusValue.uint32(1), "l": .string("x")], "a{sv}")
        try roundTrip([[Int32(1)], []], "aai")
        let record = BusStruct("org.example.A", UInt32(2))
        #expect(BusStruct<String, UInt32>.busSignature == "(su)")
        let decoded = try BusStruct<String, UInt32>(busValue: record.busValue)
        #expect(decoded.fields.0 == "org.example.A" && decoded.fields.1 == 2)
        #expect([record].busValue.signature == "a(su)")
        // The vardict is the same as BusValue.vardict builds.
        #expect(["k": BusValue.uint32(1)].busValue == BusValue.vardict(["k": .uint32(1)]))

        let mismatch = #expect(throws: BusError.self) { _ = try String(busValue: .uint32(1)) }
        #expect(mismatch?.name == BusError.Name.invalidArgs)
        #expect(mismatch?.message == "expected type s, got u")
        #expect(throws: BusError.self) { _ = try [String](busValue: .array(elementSignature: "u", [])) }
        #expect(throws: BusError.self) { _ = try BusStruct<String, UInt32>(busValue: .structure([.string("a")])) }
    }

    private static func methods() -> [ExportedMethod<Counter>] {
        [
            ExportedMethod(
                "Add", arguments: (Label.self, UInt32.self), argumentNames: ["key", "amount"], results: UInt32.self,
                resultNames: ["total"]
            ) { counter, _, key, amount in
                counter.totals[key.text, default: 0] += amount
                return counter.totals[key.text, default: 0]
            },
            ExportedMethod(
                "Describe", arguments: ([String: BusValue].self, BusObjectPath.self, [UInt8].self),
                argumentNames: ["options", "path", "bytes"], results: (String.self, Bool.self),
                resultNames: ["text", "empty"]
            ) { counter, _, options, path, bytes in
                counter.seen.append(path.path)
                return ("\(options.keys.sorted()) \(path) \(bytes.count)", bytes.isEmpty)
            },
            ExportedMethod("Totals", arguments: (), resultSignature: "a(su)", resultNames: ["totals"]) {
                counter, _ in
                [counter.totals.sorted { $0.key < $1.key }.map { BusStruct($0.key, $0.value) }.busValue]
            },
            ExportedMethod("Reset", arguments: (), results: ()) { counter, _ in counter.totals = [:] },
        ]
    }

    @Test("decoding: the declaration's signatures come from the types; a refused value names method and argument")
    @MainActor
    func decodingInOnePlace() async throws {
        let methods = Self.methods()
        let add = try #require(methods.first)
        #expect(add.declaration.inSignature == "su")
        #expect(add.declaration.outSignature == "u")
        #expect(add.declaration.argumentNames == ["key", "amount"])
        #expect(methods[1].declaration.inSignature == "a{sv}oay")
        #expect(methods[1].declaration.outSignature == "sb")
        #expect(methods[3].declaration.inSignature == "" && methods[3].declaration.outSignature == "")

        let counter = Counter()
        func call(_ member: String, _ arguments: [BusValue]) -> BusMethodCall {
            BusMethodCall(
                sender: ":1.1", credentials: nil, path: Self.path, interface: Self.iface, member: member,
                arguments: arguments)
        }
        #expect(try await add.answer(counter, call("Add", [.string("a"), .uint32(2)])) == [.uint32(2)])
        #expect(try await add.answer(counter, call("Add", [.string("a"), .uint32(3)])) == [.uint32(5)])

        let empty = await #expect(throws: BusError.self) {
            _ = try await add.answer(counter, call("Add", [.string(""), .uint32(3)]))
        }
        #expect(empty?.name == BusError.Name.invalidArgs)
        #expect(empty?.message == "Add: argument 1 (key): a label is not empty")
        let wrongType = await #expect(throws: BusError.self) {
            _ = try await add.answer(counter, call("Add", [.string("a"), .int32(3)]))
        }
        #expect(wrongType?.message == "Add: argument 2 (amount): expected type u, got i")
        let missing = await #expect(throws: BusError.self) {
            _ = try await add.answer(counter, call("Add", [.string("a")]))
        }
        #expect(missing?.name == BusError.Name.invalidArgs)
        #expect(missing?.message == "Add: argument 2 (amount) of type u is missing")
        let extra = await #expect(throws: BusError.self) {
            _ = try await add.answer(counter, call("Add", [.string("a"), .uint32(1), .uint32(1)]))
        }
        #expect(extra?.message == "Add: expected 2 arguments, got 3")
        // Nothing refused reached the handler.
        #expect(counter.totals == ["a": 5])
    }

    @Test("served on the main actor: typed replies on the bus, InvalidArgs for refused values, admit runs first")
    func servedOnTheBus() async throws {
        try await BusTestEnvironment.with { env in try await Self.serve(on: env) }
    }

    @MainActor
    private static func serve(on env: BusTestEnvironment) async throws {
        do {
            let methods = Self.methods()
            var interface = ExportedInterface(name: Self.iface, methods: methods.map(\.declaration))
            interface.callDelivery = .inOrder
            let object = try await env.connection.export(interface, at: Self.path)
            defer { object.unexport() }
            #expect(try await env.connection.requestName(Self.name) == .primaryOwner)
            let counter = Counter()
            let serving = object.serve(counter, methods: methods, whenGone: "gone") { _, call throws(BusError) in
                if call.member == "Reset" {
                    throw BusError(name: BusError.Name.accessDenied, message: "no resets")
                }
            }
            defer { serving.cancel() }
            let client = try await env.secondConnection("client")
            defer { client.close() }
            func call(_ member: String, _ arguments: [BusValue] = []) async throws -> [BusValue] {
                try await client.call(
                    destination: Self.name, path: Self.path, interface: Self.iface, member: member,
                    arguments: arguments)
            }

            #expect(try await call("Add", [.string("b"), .uint32(4)]) == [.uint32(4)])
            #expect(try await call("Add", [.string("a"), .uint32(1)]) == [.uint32(1)])
            #expect(
                try await call("Totals") == [
                    .array(
                        elementSignature: "(su)",
                        [.structure([.string("a"), .uint32(1)]), .structure([.string("b"), .uint32(4)])])
                ])
            let described = try await call(
                "Describe",
                [.vardict(["x": .bool(true)]), .objectPath("/org/example/P"), .array(elementSignature: "y", [])])
            #expect(described == [.string("[\"x\"] /org/example/P 0"), .bool(true)])

            // A wrong signature never reaches the decoding: sd-bus refuses it against the declaration.
            let signature = await #expect(throws: BusError.self) { _ = try await call("Add", [.uint32(1)]) }
            #expect(signature?.name == BusError.Name.invalidArgs)
            let refused = await #expect(throws: BusError.self) {
                _ = try await call("Add", [.string(""), .uint32(1)])
            }
            #expect(refused?.name == BusError.Name.invalidArgs)
            #expect(refused?.message == "Add: argument 1 (key): a label is not empty")
            let denied = await #expect(throws: BusError.self) { _ = try await call("Reset") }
            #expect(denied?.name == BusError.Name.accessDenied)
            #expect(counter.totals == ["a": 1, "b": 4])
            #expect(counter.seen == ["/org/example/P"])
        }
    }

    @Test("export refuses argument names that do not match the signature's complete types")
    func argumentNamesAreChecked() async throws {
        try await BusTestEnvironment.with { env in
            var tooFew = ExportedInterface.Method("Add", inSignature: "sa{sv}u", outSignature: "u")
            tooFew.argumentNames = ["key", "options"]
            tooFew.resultNames = ["total"]
            let count = await #expect(throws: BusError.self) {
                _ = try await env.connection.export(
                    ExportedInterface(name: Self.iface, methods: [tooFew]), at: Self.path)
            }
            #expect(count?.name == BusError.Name.invalidArgs)
            #expect(
                count?.message
                    == "the arguments of method Add of \(Self.iface) names 2 of the 3 complete types of 'sa{sv}u'")

            var onlyResults = ExportedInterface.Method("Get", inSignature: "s", outSignature: "s")
            onlyResults.resultNames = ["value"]
            await #expect(throws: BusError.self) {
                _ = try await env.connection.export(
                    ExportedInterface(name: Self.iface, methods: [onlyResults]), at: Self.path)
            }
            let badSignal = await #expect(throws: BusError.self) {
                _ = try await env.connection.export(
                    ExportedInterface(
                        name: Self.iface, signals: [.init("Changed", signature: "(s", argumentNames: ["x"])]),
                    at: Self.path)
            }
            #expect(badSignal?.name == BusError.Name.invalidSignature)

            // Matching names export.
            var named = ExportedInterface.Method("Add", inSignature: "sa{sv}u", outSignature: "u")
            named.argumentNames = ["key", "options", "amount"]
            named.resultNames = ["total"]
            let object = try await env.connection.export(
                ExportedInterface(name: Self.iface, methods: [named]), at: Self.path)
            object.unexport()
        }
        #expect(BusSignature.completeTypes(of: "sa{sv}(iai)aav") == ["s", "a{sv}", "(iai)", "aav"])
        #expect(BusSignature.completeTypes(of: "") == [])
        #expect(BusSignature.completeTypes(of: "a") == nil)
        #expect(BusSignature.completeTypes(of: "()") == nil)
        #expect(BusSignature.completeTypes(of: "a{sv") == nil)
    }
}
