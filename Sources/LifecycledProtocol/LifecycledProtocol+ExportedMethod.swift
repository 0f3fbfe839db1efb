import SystemdBus

extension ExportedMethod {
    /// A method of `org.applifecycle.Lifecycled1` with typed arguments and results, its name and
    /// argument names taken from `method`.
    ///
    /// Traps when the types' signatures are not the ones `method` declares: a programming error of
    /// the table, seen as soon as it is built.
    ///
    /// - Parameters:
    ///   - method: The member, as the protocol declares it.
    ///   - arguments: The argument types in order (`()` for none).
    ///   - results: The result types in order (`()` for none).
    ///   - handler: Answers a call with its decoded arguments.
    public init<each Argument: BusArgument, each Result: BusArgument>(
        _ method: LifecycledProtocol.Method, arguments: (repeat (each Argument).Type),
        results: (repeat (each Result).Type),
        _ handler:
            @escaping @MainActor @Sendable (Owner, BusMethodCall, repeat each Argument) async throws -> (
                repeat each Result
            )
    ) {
        self.init(
            method.name, arguments: (repeat (each Argument).self), argumentNames: method.arguments.map(\.name),
            results: (repeat (each Result).self), resultNames: method.results.map(\.name), handler)
        Self.check(declaration, against: method)
    }

    /// A method of `org.applifecycle.Lifecycled1` whose handler builds its results as values (checked
    /// against the declared output signature when it replies).
    ///
    /// - Parameters:
    ///   - method: The member, as the protocol declares it.
    ///   - arguments: The argument types in order (`()` for none).
    ///   - handler: Answers a call with its decoded arguments.
    public init<each Argument: BusArgument>(
        _ method: LifecycledProtocol.Method, arguments: (repeat (each Argument).Type),
        _ handler:
            @escaping @MainActor @Sendable (Owner, BusMethodCall, repeat each Argument) async throws -> [BusValue]
    ) {
        self.init(
            method.name, arguments: (repeat (each Argument).self), argumentNames: method.arguments.map(\.name),
            resultSignature: method.outSignature, resultNames: method.results.map(\.name), handler)
        Self.check(declaration, against: method)
    }

    private static func check(_ declaration: ExportedInterface.Method, against method: LifecycledProtocol.Method) {
        precondition(
            declaration.inSignature == method.inSignature && declaration.outSignature == method.outSignature,
            "\(method.name) is declared (\(method.inSignature)) → (\(method.outSignature)), its handler takes (\(declaration.inSignature)) → (\(declaration.outSignature))"
        )
    }
}
