extension ExportedObject {
    /// How ``serve(_:order:whenGone:_:)`` runs the calls of an in-order object on the main actor.
    public enum ServingOrder: Sendable {
        /// Each call starts at once, before the next is taken (`Task.immediate`): what a handler does
        /// before its first suspension runs in arrival order, and a call that suspends does not hold
        /// up the ones behind it.
        case startInOrder
        /// Each call is answered completely before the next one starts.
        case oneAtATime
    }

    /// Answers this object's ``incomingCalls`` on the main actor with `handler`, until the object
    /// is unexported: the one serving loop of every ``ExportedInterface/CallDelivery/inOrder``
    /// interface.
    ///
    /// The owner is held weakly; once it is gone, calls are refused with `Failed` and `whenGone`.
    /// A thrown ``BusError`` becomes the error reply, with its name and message.
    ///
    /// - Parameters:
    ///   - owner: The object that answers (held weakly).
    ///   - order: How calls overlap.
    ///   - whenGone: The message of the `Failed` reply once the owner is gone, such as "the app is stopping".
    ///   - handler: Answers one call with the reply's values.
    /// - Returns: The serving task; it ends when the object is unexported.
    @MainActor
    public func serve<Owner: AnyObject>(
        _ owner: Owner, order: ServingOrder = .startInOrder, whenGone: String,
        _ handler: @escaping @MainActor (Owner, BusMethodCall) async throws -> [BusValue]
    ) -> Task<Void, Never> {
        serve(owner, order: order, whenGone: whenGone) { (owner: Owner, call: IncomingMethodCall) in
            do {
                call.reply(.success(try await handler(owner, call.request)))
            } catch {
                call.reply(.failure(error))
            }
        }
    }

    /// Answers this object's ``incomingCalls`` on the main actor with typed methods: each call goes to
    /// the ``ExportedMethod`` of its member, which decodes the arguments, runs its handler and encodes
    /// the results. Otherwise as ``serve(_:order:whenGone:_:)``.
    ///
    /// - Parameters:
    ///   - owner: The object that answers (held weakly).
    ///   - methods: The interface's methods; their ``ExportedMethod/declaration``s are the ones exported.
    ///   - order: How calls overlap.
    ///   - whenGone: The message of the `Failed` reply once the owner is gone.
    ///   - admit: Run first for every call (a caller check, say); a thrown ``BusError`` is the reply.
    /// - Returns: The serving task; it ends when the object is unexported.
    @MainActor
    public func serve<Owner: AnyObject>(
        _ owner: Owner, methods: [ExportedMethod<Owner>], order: ServingOrder = .startInOrder, whenGone: String,
        admitting admit: (@MainActor (Owner, BusMethodCall) throws -> Void)? = nil
    ) -> Task<Void, Never> {
        let table = Dictionary(methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let interfaceName = interface.name
        return serve(owner, order: order, whenGone: whenGone) { (owner: Owner, call: BusMethodCall) in
            // sd-bus routes only the exported members here; one without an entry is a bug of the table.
            guard let method = table[call.member] else {
                throw BusError(
                    name: BusError.Name.unknownMethod, message: "no method \(call.member) on \(interfaceName)")
            }
            try admit?(owner, call)
            return try await method.answer(owner, call)
        }
    }

    /// Like the other `serve`, for a handler
    /// that replies itself (``IncomingMethodCall/reply(_:)``), before it goes on with what the call
    /// asked for.
    ///
    /// - Parameters:
    ///   - owner: The object that answers (held weakly).
    ///   - order: How calls overlap.
    ///   - whenGone: The message of the `Failed` reply once the owner is gone.
    ///   - handler: Answers one call; it must reply exactly once.
    /// - Returns: The serving task; it ends when the object is unexported.
    @MainActor
    public func serve<Owner: AnyObject>(
        _ owner: Owner, order: ServingOrder = .startInOrder, whenGone: String,
        replying handler: @escaping @MainActor (Owner, IncomingMethodCall) async -> Void
    ) -> Task<Void, Never> {
        let calls = incomingCalls
        return Task { @MainActor [weak owner] in
            for await call in calls {
                guard let owner else {
                    call.reply(.failure(BusError(name: BusError.Name.failed, message: whenGone)))
                    continue
                }
                switch order {
                case .startInOrder: Task.immediate { @MainActor in await handler(owner, call) }
                case .oneAtATime: await handler(owner, call)
                }
            }
        }
    }
}
