import CSystemd
import CSystemdShim
import Glibc
import Logging
import Synchronization

/// The userdata of an exported vtable: dispatches sd-bus callbacks to Swift.
///
/// Owns the C vtable and the strings it points to; they are freed in `deinit`, which runs
/// only after sd-bus destroyed the slot (the destroy callback drops the last retain).
final class ObjectBox: SlotBox, @unchecked Sendable {
    // Why @unchecked Sendable is safe: `vtable` and `strings` are written once on the loop
    // thread before the slot exists and freed in deinit; `object` is a weak reference set
    // once before registration; the call queue is in a LoopBoundBox (checked on every access);
    // the stream and its continuation are Sendable; everything else is immutable.
    let interface: ExportedInterface
    let connection: WeakConnection
    let logger: Logger
    weak var object: ExportedObject?
    var vtable: UnsafeMutablePointer<sd_bus_vtable>?
    var strings: [UnsafeMutablePointer<CChar>] = []

    init(interface: ExportedInterface, connection: BusConnection, logger: Logger) {
        self.interface = interface
        self.connection = WeakConnection(connection)
        self.logger = logger
        calls = .makeBoxSendingValue(CallQueue(), eventLoop: connection.loop)
        (incoming, incomingContinuation) = AsyncStream.makeStream(of: IncomingMethodCall.self)
        if interface.callDelivery == .tasks { incomingContinuation.finish() }
    }

    deinit {
        if let vtable { csd_vtable_free(vtable) }
        strings.forEach { free($0) }
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        strings.append(copy)
        return copy
    }

    /// sd-bus's argument names (`SD_BUS_PARAM`): each name followed by a NUL, then one more NUL, so
    /// a missing name reads as none.
    private func keep(names: [String]) -> UnsafeMutablePointer<CChar> {
        let bytes: [UInt8] = names.flatMap { Array($0.utf8) + [0] } + [0]
        let copy = malloc(bytes.count)!.bindMemory(to: CChar.self, capacity: bytes.count)
        for (index, byte) in bytes.enumerated() { copy[index] = CChar(bitPattern: byte) }
        strings.append(copy)
        return copy
    }

    /// Checks the declared argument names against the signatures before sd-bus sees them: one name
    /// per complete type, for the arguments and the results of a method alike (sd-bus reads them as
    /// one list, so names for only one side would name the wrong ones), and for a signal's arguments.
    ///
    /// - Throws: ``BusError`` `InvalidSignature` for a malformed signature, `InvalidArgs` for a
    ///   count that does not match, each naming the member.
    static func validate(_ interface: ExportedInterface) throws(BusError) {
        func check(_ names: [String], _ signature: String, _ what: String) throws(BusError) {
            guard let types = BusSignature.completeTypes(of: signature) else {
                throw BusError(
                    name: BusError.Name.invalidSignature,
                    message: "\(what) of \(interface.name) has an invalid signature '\(signature)'", errno: EINVAL)
            }
            guard names.count == types.count else {
                throw BusError(
                    name: BusError.Name.invalidArgs,
                    message:
                        "\(what) of \(interface.name) names \(names.count) of the \(types.count) complete types of '\(signature)'",
                    errno: EINVAL)
            }
        }
        for method in interface.methods {
            if method.argumentNames.isEmpty && method.resultNames.isEmpty {
                guard BusSignature.completeTypes(of: method.inSignature) != nil,
                    BusSignature.completeTypes(of: method.outSignature) != nil
                else {
                    throw BusError(
                        name: BusError.Name.invalidSignature,
                        message: "method \(method.name) of \(interface.name) has an invalid signature", errno: EINVAL)
                }
                continue
            }
            try check(method.argumentNames, method.inSignature, "the arguments of method \(method.name)")
            try check(method.resultNames, method.outSignature, "the results of method \(method.name)")
        }
        for signal in interface.signals where !signal.argumentNames.isEmpty {
            try check(signal.argumentNames, signal.signature, "signal \(signal.name)")
        }
    }

    /// Builds the C vtable. Loop thread only.
    func buildVTable() -> UnsafeMutablePointer<sd_bus_vtable> {
        connection.connection?.loop.preconditionInEventLoop()
        let count = 2 + interface.methods.count + interface.signals.count + interface.properties.count
        let table = csd_vtable_new(count)!
        var index = 0
        csd_vtable_set_start(table, index, 0)
        index += 1
        let empty = keep("")
        for method in interface.methods {
            let flags = method.requiresPrivilege ? 0 : csd_vtable_flag_unprivileged()
            let names =
                method.argumentNames.isEmpty && method.resultNames.isEmpty
                ? empty : keep(names: method.argumentNames + method.resultNames)
            csd_vtable_set_method(
                table, index, keep(method.name), keep(method.inSignature), keep(method.outSignature),
                names, ObjectBox.methodTrampoline, flags)
            index += 1
        }
        for signal in interface.signals {
            let names = signal.argumentNames.isEmpty ? empty : keep(names: signal.argumentNames)
            csd_vtable_set_signal(table, index, keep(signal.name), keep(signal.signature), names, 0)
            index += 1
        }
        for property in interface.properties {
            var flags: UInt64 = 0
            switch property.changeSignal {
            case .emitsValue: flags |= csd_vtable_flag_property_emits_change()
            case .invalidates: flags |= csd_vtable_flag_property_emits_invalidation()
            case .constant: flags |= csd_vtable_flag_property_const()
            case .none: break
            }
            let setter: sd_bus_property_set_t? = property.validateSet == nil ? nil : ObjectBox.setterTrampoline
            if setter != nil { flags |= csd_vtable_flag_unprivileged() }
            csd_vtable_set_property(
                table, index, keep(property.name), keep(property.signature),
                ObjectBox.getterTrampoline, setter, flags)
            index += 1
        }
        csd_vtable_set_end(table, index)
        vtable = table
        return table
    }

    // MARK: Trampolines (called by sd-bus on the loop thread)

    static let methodTrampoline: sd_bus_message_handler_t = { message, userdata, error in
        let box: ObjectBox = SlotBox.from(userdata)
        return box.handleMethod(message!, error)
    }

    static let getterTrampoline: sd_bus_property_get_t = { bus, _, _, property, reply, userdata, error in
        let box: ObjectBox = SlotBox.from(userdata)
        let name = String(cString: property!)
        if let refusal = box.accessRefusal(on: bus) { return sd_bus_error_set(error, refusal.name, refusal.message) }
        guard let value = box.object?.property(name) else {
            return sd_bus_error_set(error, BusError.Name.unknownProperty, "no property \(name)")
        }
        do {
            try BusMessageCodec.append(value, to: reply!)
            return 0
        } catch let failure as BusError {
            return sd_bus_error_set(error, failure.name, failure.message)
        } catch let other {
            return sd_bus_error_set(error, BusError.Name.failed, "\(other)")
        }
    }

    static let setterTrampoline: sd_bus_property_set_t = { bus, _, _, property, value, userdata, error in
        let box: ObjectBox = SlotBox.from(userdata)
        let name = String(cString: property!)
        if let refusal = box.accessRefusal(on: bus) { return sd_bus_error_set(error, refusal.name, refusal.message) }
        guard let declared = box.interface.properties.first(where: { $0.name == name }),
            let validate = declared.validateSet
        else {
            return sd_bus_error_set(error, BusError.Name.propertyReadOnly, "property \(name) is read-only")
        }
        do {
            guard let newValue = try BusMessageCodec.readNext(from: value!) else {
                return sd_bus_error_set(error, BusError.Name.invalidArgs, "missing value")
            }
            try validate(newValue)
            box.object?.storeRemote(name, newValue)
            return 0
        } catch let failure as BusError {
            return sd_bus_error_set(error, failure.name, failure.message)
        } catch let other {
            return sd_bus_error_set(error, BusError.Name.failed, "\(other)")
        }
    }

    /// Runs the interface's property access check for the method call sd-bus is dispatching,
    /// and returns the refusal, if any. Loop thread only (inside a getter or setter).
    ///
    /// sd-bus also reads properties for its own purposes, with no method call being dispatched:
    /// to put new values into `PropertiesChanged` when the object emits it. Those reads are
    /// the object's own and are not checked (refusing them would silence every change signal).
    private func accessRefusal(on bus: OpaquePointer?) -> BusError? {
        connection.connection?.loop.preconditionInEventLoop()
        guard let check = interface.propertyAccessCheck else { return nil }
        guard let bus, let message = sd_bus_get_current_message(bus),
            sd_bus_message_is_method_call(message, nil, nil) > 0
        else { return nil }
        let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
        // Known by now: the connection's filter held the call back until the look-up had answered.
        let credentials = sender.flatMap { connection.connection?.cachedCredentials(of: $0) }
        do {
            try check(credentials)
            return nil
        } catch {
            logger.info("refused property access on \(interface.name) to \(sender ?? "a peer"): \(error.message)")
            return error
        }
    }

    /// A call taken off the wire, waiting for its caller's credentials and its turn.
    private struct QueuedCall {
        let message: SendablePointer
        let method: ExportedInterface.Method
        let sender: String?
        let path: String
        let arguments: [BusValue]
        /// The credentials look-up of the sender has been tried (it may have failed).
        var lookedUp = false
    }

    /// The calls taken off the wire and not answered yet; the loop thread's alone.
    private struct CallQueue {
        /// Calls in arrival order, waiting for their sender's credentials.
        var waiting: [QueuedCall] = []
        /// Whether the credentials of the head are being looked up.
        var resolving = false
        /// Calls taken and not answered yet (waiting or being answered).
        var pending = 0
    }

    private let calls: LoopBoundBox<CallQueue>
    /// Where ``ExportedInterface/CallDelivery/inOrder`` calls go (finished for `.tasks`).
    let incoming: AsyncStream<IncomingMethodCall>
    private let incomingContinuation: AsyncStream<IncomingMethodCall>.Continuation

    /// Decodes a call and queues it in arrival order; refuses it at once when the queue is full.
    /// Loop thread only.
    private func handleMethod(_ message: OpaquePointer, _ error: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        guard let method = interface.methods.first(where: { $0.name == member }), let connection = connection.connection
        else {
            return sd_bus_error_set(error, BusError.Name.unknownMethod, "no method \(member) on \(interface.name)")
        }
        connection.loop.preconditionInEventLoop()
        guard calls.value.pending < interface.maximumPendingCalls else {
            logger.info("refused \(interface.name).\(member): \(calls.value.pending) calls already pending")
            return sd_bus_error_set(
                error, BusError.Name.limitsExceeded,
                "\(interface.name) has \(calls.value.pending) calls pending; try again later")
        }
        let arguments: [BusValue]
        do {
            arguments = try BusMessageCodec.readAll(from: message)
        } catch let failure {
            return sd_bus_error_set(error, BusError.Name.invalidArgs, failure.message)
        }
        // Keep the call alive until the reply is sent (sd-bus allows replying later).
        sd_bus_message_ref(message)
        calls.value.pending += 1
        calls.value.waiting.append(
            QueuedCall(
                message: SendablePointer(message), method: method,
                sender: sd_bus_message_get_sender(message).map { String(cString: $0) },
                path: sd_bus_message_get_path(message).map { String(cString: $0) } ?? "", arguments: arguments))
        drain(connection)
        return 1
    }

    /// Hands the queue's calls on in order, each once its sender's credentials are known (from the
    /// cache, or after one asynchronous look-up that the calls behind it wait for). Loop thread only.
    private func drain(_ connection: BusConnection) {
        while let head = calls.value.waiting.first {
            var credentials: BusCredentials?
            if let sender = head.sender {
                credentials = connection.cachedCredentials(of: sender)
                if credentials == nil && !head.lookedUp {
                    guard !calls.value.resolving else { return }
                    calls.value.resolving = true
                    Task { [self] in
                        _ = try? await connection.credentials(of: sender)
                        connection.loop.perform { [self] in
                            calls.value.resolving = false
                            // By sender, not position: the head may have left already (its
                            // credentials were cached before this ran) and another taken its place.
                            for index in calls.value.waiting.indices where calls.value.waiting[index].sender == sender {
                                calls.value.waiting[index].lookedUp = true
                            }
                            drain(connection)
                        }
                    }
                    return
                }
            }
            calls.value.waiting.removeFirst()
            dispatch(head, credentials: credentials, on: connection)
        }
    }

    /// Starts answering one call: a task running its handler, or the in-order stream. Loop thread only.
    private func dispatch(_ call: QueuedCall, credentials: BusCredentials?, on connection: BusConnection) {
        let request = BusMethodCall(
            sender: call.sender, credentials: credentials, path: call.path,
            interface: interface.name, member: call.method.name, arguments: call.arguments)
        let replier = MethodReplier(
            message: call.message.pointer, loop: connection.loop, box: self, outSignature: call.method.outSignature,
            description: "\(interface.name).\(call.method.name)", logger: logger)
        switch interface.callDelivery {
        case .tasks:
            let handler = call.method.handler
            Task {
                let result: Result<[BusValue], any Error>
                do {
                    result = .success(try await handler(request))
                } catch {
                    result = .failure(error)
                }
                replier.finish(result, request: request)
            }
        case .inOrder:
            incomingContinuation.yield(IncomingMethodCall(request: request, method: call.method, replier: replier))
        }
    }

    /// One call was answered. Loop thread only.
    func callFinished() {
        connection.connection?.loop.assertInEventLoop()
        calls.value.pending -= 1
    }

    /// Ends the in-order stream (the object left the bus).
    func finishIncoming() {
        incomingContinuation.finish()
    }

    /// Sends a method return or error for a kept call. Loop thread only.
    static func reply(to call: OpaquePointer, with result: Result<[BusValue], BusError>, logger: Logger) {
        switch result {
        case .success(let values):
            var message: OpaquePointer?
            var r = sd_bus_message_new_method_return(call, &message)
            if r >= 0, let message {
                defer { sd_bus_message_unref(message) }
                do {
                    try BusMessageCodec.append(values, to: message)
                    r = sd_bus_send(nil, message, nil)
                } catch let failure {
                    reply(to: call, with: .failure(failure), logger: logger)
                    return
                }
            }
            if r < 0 { logger.debug("could not send reply: \(BusError(errno: r))") }
        case .failure(let failure):
            var error = sd_bus_error()
            _ = sd_bus_error_set(&error, failure.name, failure.message)
            let r = sd_bus_reply_method_error(call, &error)
            sd_bus_error_free(&error)
            if r < 0 { logger.debug("could not send error reply: \(BusError(errno: r))") }
        }
    }
}
