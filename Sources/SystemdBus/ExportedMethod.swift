/// One method of an exported interface with typed arguments and results, and the handler that gets
/// them decoded: the vtable entry of sd-bus's `SD_BUS_METHOD_WITH_ARGS`, answered on the main actor
/// by ``ExportedObject/serve(_:methods:order:whenGone:admitting:)``.
///
/// The signatures come from the Swift types (``BusArgument``), so the declaration sd-bus checks
/// calls against and the decoding cannot disagree. Decoding happens here, once for every method: a
/// value that does not decode (a type of the handler's own that refuses it, say) is answered with
/// `org.freedesktop.DBus.Error.InvalidArgs` naming the method and the argument, before the handler runs.
///
/// ```swift
/// ExportedMethod<Counter>("Add", arguments: (String.self, UInt32.self), argumentNames: ["key", "amount"],
///                         results: UInt32.self, resultNames: ["total"]) { counter, call, key, amount in
///     counter.add(amount, to: key)
/// }
/// ```
public struct ExportedMethod<Owner: AnyObject>: Sendable {
    /// The declaration exported in the interface's vtable: name, signatures and argument names.
    /// Put it in ``ExportedInterface/methods`` of an ``ExportedInterface/CallDelivery/inOrder``
    /// interface.
    public let declaration: ExportedInterface.Method
    /// Decodes the call's arguments, runs the handler and encodes its results.
    private let body: @MainActor @Sendable (Owner, BusMethodCall) async throws -> [BusValue]

    /// The method name.
    public var name: String { declaration.name }

    /// Answers one call: decodes its arguments (`InvalidArgs` naming the argument when one does not
    /// decode), runs the handler and encodes its results.
    ///
    /// - Parameters:
    ///   - owner: The object that answers.
    ///   - call: The call, as the bus delivered it (or as a test builds it).
    /// - Returns: The reply's values.
    /// - Throws: ``BusError`` from the decoding or what the handler threw.
    @MainActor
    public func answer(_ owner: Owner, _ call: BusMethodCall) async throws -> [BusValue] {
        try await body(owner, call)
    }

    /// Creates a method whose results are typed too.
    ///
    /// - Parameters:
    ///   - name: The method name.
    ///   - arguments: The argument types in order (`()` for none); their signatures make the input signature.
    ///   - argumentNames: One name per argument, for introspection; empty leaves them unnamed.
    ///   - results: The result types in order (`()` for none).
    ///   - resultNames: One name per result.
    ///   - handler: Answers a call with its decoded arguments; a thrown ``BusError`` is the error reply.
    public init<each Argument: BusArgument, each Result: BusArgument>(
        _ name: String, arguments: (repeat (each Argument).Type), argumentNames: [String] = [],
        results: (repeat (each Result).Type), resultNames: [String] = [],
        _ handler:
            @escaping @MainActor @Sendable (Owner, BusMethodCall, repeat each Argument) async throws -> (
                repeat each Result
            )
    ) {
        var outSignature = ""
        for type in repeat (each Result).self { outSignature += type.busSignature }
        declaration = Self.declare(
            name, arguments: (repeat (each Argument).self), argumentNames: argumentNames,
            resultSignature: outSignature, resultNames: resultNames)
        body = { owner, call in
            let arguments = try Self.decode(call, argumentNames, as: (repeat (each Argument).self))
            let results = try await handler(owner, call, repeat each arguments)
            var values: [BusValue] = []
            for result in repeat each results { values.append(result.busValue) }
            return values
        }
    }

    /// Creates a method whose results the handler builds as values (a codec's output, say); the reply
    /// is checked against `resultSignature` before it is sent (`Failed` otherwise).
    ///
    /// - Parameters:
    ///   - name: The method name.
    ///   - arguments: The argument types in order (`()` for none).
    ///   - argumentNames: One name per argument, for introspection; empty leaves them unnamed.
    ///   - resultSignature: The output signature.
    ///   - resultNames: One name per complete type of `resultSignature`.
    ///   - handler: Answers a call with its decoded arguments.
    public init<each Argument: BusArgument>(
        _ name: String, arguments: (repeat (each Argument).Type), argumentNames: [String] = [],
        resultSignature: String, resultNames: [String] = [],
        _ handler:
            @escaping @MainActor @Sendable (Owner, BusMethodCall, repeat each Argument) async throws -> [BusValue]
    ) {
        declaration = Self.declare(
            name, arguments: (repeat (each Argument).self), argumentNames: argumentNames,
            resultSignature: resultSignature, resultNames: resultNames)
        body = { owner, call in
            let arguments = try Self.decode(call, argumentNames, as: (repeat (each Argument).self))
            return try await handler(owner, call, repeat each arguments)
        }
    }

    private static func declare<each Argument: BusArgument>(
        _ name: String, arguments: (repeat (each Argument).Type), argumentNames: [String], resultSignature: String,
        resultNames: [String]
    ) -> ExportedInterface.Method {
        var inSignature = ""
        for type in repeat (each Argument).self { inSignature += type.busSignature }
        var declaration = ExportedInterface.Method(name, inSignature: inSignature, outSignature: resultSignature)
        declaration.argumentNames = argumentNames
        declaration.resultNames = resultNames
        return declaration
    }

    /// The one place where a call's arguments are decoded for every typed method: a value that does
    /// not decode, a missing or an extra one is `InvalidArgs` naming the method and the argument.
    private static func decode<each Argument: BusArgument>(
        _ call: BusMethodCall, _ names: [String], as types: (repeat (each Argument).Type)
    ) throws(BusError) -> (repeat each Argument) {
        var reader = BusArgumentReader(call.arguments, context: call.member, what: "argument", names: names)
        let arguments = (repeat try reader.next((each Argument).self))
        try reader.finish()
        return arguments
    }
}
