import CSystemd
import CSystemdShim
import Glibc
import Logging
import Synchronization

/// An interface exported at an object path, as returned by ``BusConnection/export(_:at:)``.
///
/// Holds the current property values: change them with ``setProperty(_:_:)``, which emits
/// `PropertiesChanged` as the property declares. Emit the interface's signals with
/// ``emitSignal(_:arguments:destination:)``. Call ``unexport()`` to remove the object from the bus; it
/// is also removed when the connection closes.
public final class ExportedObject: Sendable {
    /// The object path.
    public let path: String
    /// The exported interface's description.
    public let interface: ExportedInterface
    private let values: Mutex<[String: BusValue]>
    private let connection: WeakConnection
    let box: ObjectBox

    init(path: String, interface: ExportedInterface, connection: BusConnection) {
        self.path = path
        self.interface = interface
        self.values = Mutex(
            Dictionary(interface.properties.map { ($0.name, $0.initialValue) }, uniquingKeysWith: { a, _ in a }))
        self.connection = WeakConnection(connection)
        self.box = ObjectBox(interface: interface, connection: connection, logger: connection.logger)
        self.box.object = self
    }

    /// The calls of an interface exported with ``ExportedInterface/CallDelivery/inOrder``, in the
    /// order they arrived; answer each with ``IncomingMethodCall/reply(_:)``. Finishes when the
    /// object is unexported. Empty and finished for ``ExportedInterface/CallDelivery/tasks``.
    public var incomingCalls: AsyncStream<IncomingMethodCall> { box.incoming }

    /// The current value of a property, or `nil` if there is no such property.
    ///
    /// - Parameters:
    ///   - name: The property name.
    public func property(_ name: String) -> BusValue? {
        values.withLock { $0[name] }
    }

    /// Changes a property and announces it (`PropertiesChanged`) as the property declares.
    ///
    /// Setting the value the property already has announces nothing: `PropertiesChanged`
    /// means a change, and publishers may set a property whenever something it is derived
    /// from moves. The new value is readable (``property(_:)``, a remote `Get`) at once; the
    /// announcement is handed to the loop, in order with the caller's other hand-overs, and never
    /// waited for (a failure there is logged).
    ///
    /// - Parameters:
    ///   - name: The property name.
    ///   - value: The new value; must have the property's signature.
    /// - Throws: ``BusError`` if the property is unknown, the type differs, or the connection is closed.
    public func setProperty(_ name: String, _ value: BusValue) throws {
        guard let declared = interface.properties.first(where: { $0.name == name }) else {
            throw BusError(
                name: BusError.Name.unknownProperty, message: "no property \(name) on \(interface.name)", errno: ENOENT)
        }
        guard value.signature == declared.signature else {
            throw BusError(
                name: BusError.Name.invalidSignature,
                message: "property \(name) has type \(declared.signature), not \(value.signature)", errno: EINVAL)
        }
        guard let connection = connection.connection, connection.isOpen else { throw BusError.notConnected }
        let changed = values.withLock { values in
            defer { values[name] = value }
            return values[name] != value
        }
        guard changed, declared.changeSignal == .emitsValue || declared.changeSignal == .invalidates else { return }
        let accepted = connection.loop.perform { [self] in
            do {
                try emitChanged([name], on: connection)
            } catch {
                connection.logger.debug("could not announce \(interface.name).\(name): \(error)")
            }
        }
        guard accepted else { throw BusError.loopShutDown }
    }

    /// Stores a value set remotely (already validated) and announces it after the `Set`
    /// reply has gone out (sd-bus does not emit `PropertiesChanged` for a remote `Set`).
    /// Loop thread only.
    func storeRemote(_ name: String, _ value: BusValue) {
        connection.connection?.loop.assertInEventLoop()
        values.withLock { $0[name] = value }
        guard let connection = connection.connection,
            let declared = interface.properties.first(where: { $0.name == name }),
            declared.changeSignal == .emitsValue || declared.changeSignal == .invalidates
        else { return }
        connection.loop.perform { [self] in
            do {
                try emitChanged([name], on: connection)
            } catch {
                connection.logger.debug("could not announce \(interface.name).\(name): \(error)")
            }
        }
    }

    private func emitChanged(_ names: [String], on connection: BusConnection) throws {
        connection.loop.assertInEventLoop()
        guard let bus = connection.bus, connection.isOpen else { throw BusError.notConnected }
        var pointers: [UnsafeMutablePointer<CChar>?] = names.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        let r = pointers.withUnsafeMutableBufferPointer {
            sd_bus_emit_properties_changed_strv(bus, path, interface.name, $0.baseAddress)
        }
        try BusError.check(r, "emit PropertiesChanged \(interface.name) \(names)")
    }

    /// Emits one of the interface's declared signals from this object.
    ///
    /// - Parameters:
    ///   - member: The signal name; must be declared in the interface.
    ///   - arguments: The arguments; their signature must match the declaration.
    ///   - destination: The unique name of the one connection the signal is for, or `nil` to
    ///     broadcast it to every connection whose match rules select it.
    /// - Throws: ``BusError`` if the signal is undeclared, the signature differs, or sending fails.
    public func emitSignal(_ member: String, arguments: [BusValue] = [], destination: String? = nil) throws {
        guard let declared = interface.signals.first(where: { $0.name == member }) else {
            throw BusError(
                name: BusError.Name.unknownMethod, message: "no signal \(member) on \(interface.name)", errno: ENOENT)
        }
        let signature = BusValue.signature(of: arguments)
        guard signature == declared.signature else {
            throw BusError(
                name: BusError.Name.invalidSignature,
                message: "signal \(member) has signature \(declared.signature), not \(signature)", errno: EINVAL)
        }
        guard let connection = connection.connection else { throw BusError.notConnected }
        try connection.emitSignal(
            path: path, interface: interface.name, member: member, arguments: arguments, destination: destination)
    }

    /// Removes the object from the bus. Calling it again does nothing.
    ///
    /// Returns at once; the object leaves the bus on the loop thread, after everything handed to
    /// the loop before (its last signals go out first).
    public func unexport() {
        guard let connection = connection.connection else { return }
        connection.loop.perform { [self] in
            box.destroySlot()
            box.finishIncoming()
            connection.onLoop.value.exported[ObjectIdentifier(self)] = nil
        }
    }
}

extension BusConnection {
    /// Exports an interface at an object path.
    ///
    /// The vtable is built at run time and registered with `sd_bus_add_object_vtable`, so
    /// sd-bus answers `Introspect`, `Get`/`GetAll`/`Set` and `Ping` itself. Method handlers run
    /// in tasks and get the decoded arguments and the caller's credentials; what they return
    /// becomes the reply, a thrown ``BusError`` becomes an error reply with its name and message.
    ///
    /// - Parameters:
    ///   - interface: The interface description.
    ///   - path: The object path, for example `/org/example/App`.
    /// - Returns: The exported object, to change properties, emit signals and unexport.
    /// - Throws: ``BusError`` if the path or interface is invalid (argument names that do not match
    ///   the signatures too), already exported, or the connection is closed.
    public func export(_ interface: ExportedInterface, at path: String) async throws -> ExportedObject {
        try ObjectBox.validate(interface)
        let object = ExportedObject(path: path, interface: interface, connection: self)
        try await loop.run { [self] in
            guard let bus, isOpen else { throw BusError.notConnected }
            let box = object.box
            let table = box.buildVTable()
            let userdata = box.retainedUserdata()
            var slot: OpaquePointer?
            let r = sd_bus_add_object_vtable(bus, &slot, path, interface.name, table, userdata)
            guard r >= 0, let slot else {
                SlotBox.releaseUserdata(userdata)
                throw BusError(errno: r, context: "export \(interface.name) at \(path)")
            }
            box.adopt(slot)
            onLoop.value.exported[ObjectIdentifier(object)] = object
        }
        return object
    }
}
