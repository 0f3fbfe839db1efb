/// The description of a D-Bus interface to export: methods, signals and properties.
///
/// Pass it to ``BusConnection/export(_:at:)``. sd-bus builds the introspection data, and the
/// standard `org.freedesktop.DBus.Properties`, `Introspectable` and `Peer` interfaces, from it.
public struct ExportedInterface: Sendable {
    /// The interface name, for example `org.example.Lifecycle1`.
    public var name: String
    /// The methods.
    public var methods: [Method]
    /// The signals.
    public var signals: [Signal]
    /// The properties.
    public var properties: [Property]
    /// Who may read and write the properties through `org.freedesktop.DBus.Properties`
    /// (`Get`, `GetAll`, `Set`); `nil` lets every peer the bus lets through.
    ///
    /// Method handlers get the caller's credentials in ``BusMethodCall/credentials`` and check
    /// them themselves; property access goes through sd-bus's own `Properties` interface, so
    /// the check is declared here and run for every property a remote call touches, before the
    /// value is read or stored. The object's own reads (the values sd-bus puts into
    /// `PropertiesChanged`) are not checked. It gets the sender's credentials from the bus daemon
    /// (`GetConnectionCredentials`, cached per unique name; `nil` if they cannot be had, and
    /// for a peer-to-peer connection) and throws ``BusError`` (for example `AccessDenied`) to
    /// refuse. The loop never waits for that look-up: a `Properties` call from a sender not known
    /// yet is held back (other messages go on being dispatched), the sender is looked up
    /// asynchronously, and the call is dispatched again once the answer is in.
    ///
    /// `PropertiesChanged` is a broadcast signal and is not covered: on a bus shared between
    /// users, only the bus policy keeps other users from receiving signals.
    public var propertyAccessCheck: (@Sendable (BusCredentials?) throws(BusError) -> Void)?

    /// How incoming method calls reach their handlers.
    ///
    /// Either way calls are taken in the order they arrived, each with its caller's credentials
    /// (looked up asynchronously, in order: a call waits only for the look-ups of calls before it),
    /// and at most ``maximumPendingCalls`` are queued or running at once.
    public enum CallDelivery: Sendable {
        /// Each call's handler runs in a task of its own, concurrently with the others: fine for
        /// handlers whose effects need no order.
        case tasks
        /// Calls are handed, in arrival order, to ``ExportedObject/incomingCalls``, which the
        /// owner consumes on its own actor and answers with ``IncomingMethodCall/reply(_:)``. A
        /// consumer that starts each call before taking the next (for example with `Task.immediate`
        /// on its actor) applies calls in the order callers sent them, also when a caller sends
        /// several without awaiting the replies; the method handlers are not used.
        case inOrder
    }

    /// How incoming method calls reach their handlers; ``CallDelivery/tasks`` by default.
    public var callDelivery: CallDelivery = .tasks

    /// The most calls queued or being answered at once; beyond it a call is refused at once with
    /// `org.freedesktop.DBus.Error.LimitsExceeded`, so a caller that floods the object cannot make
    /// it grow without bound.
    public var maximumPendingCalls = 256

    /// Creates an interface description.
    ///
    /// - Parameters:
    ///   - name: The interface name.
    ///   - methods: The methods.
    ///   - signals: The signals.
    ///   - properties: The properties.
    ///   - propertyAccessCheck: Who may read and write the properties (see ``propertyAccessCheck``).
    public init(
        name: String, methods: [Method] = [], signals: [Signal] = [], properties: [Property] = [],
        propertyAccessCheck: (@Sendable (BusCredentials?) throws(BusError) -> Void)? = nil
    ) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
        self.propertyAccessCheck = propertyAccessCheck
    }

    /// A method and the handler that answers it.
    public struct Method: Sendable {
        /// The method name.
        public var name: String
        /// The input signature; sd-bus rejects calls with other arguments (`InvalidArgs`).
        public var inSignature: String
        /// The output signature; a handler result with another signature becomes a `Failed` error.
        public var outSignature: String
        /// The names of the input arguments, one per complete type of ``inSignature``, shown by
        /// introspection (`<arg name=…>`); empty leaves them unnamed.
        public var argumentNames: [String] = []
        /// The names of the results, one per complete type of ``outSignature``.
        public var resultNames: [String] = []
        /// Whether only privileged callers may call it (sd-bus checks `CAP_SYS_ADMIN` or the same
        /// uid on untrusted buses); `false` lets everyone call it, and the handler checks
        /// ``BusMethodCall/credentials`` itself.
        public var requiresPrivilege: Bool
        /// The handler: runs in a task; its result is the reply, a thrown ``BusError`` the error reply.
        /// Not used with ``CallDelivery/inOrder``, where the owner answers ``ExportedObject/incomingCalls``.
        public var handler: @Sendable (BusMethodCall) async throws -> [BusValue]

        /// Creates a method.
        ///
        /// - Parameters:
        ///   - name: The method name.
        ///   - inSignature: The input signature (`""` for none).
        ///   - outSignature: The output signature (`""` for none).
        ///   - requiresPrivilege: Whether sd-bus should restrict it to privileged callers.
        ///   - handler: Answers a call; throw ``BusError`` for a D-Bus error reply with that name.
        public init(
            _ name: String, inSignature: String = "", outSignature: String = "", requiresPrivilege: Bool = false,
            handler: @escaping @Sendable (BusMethodCall) async throws -> [BusValue]
        ) {
            self.name = name
            self.inSignature = inSignature
            self.outSignature = outSignature
            self.requiresPrivilege = requiresPrivilege
            self.handler = handler
        }

        /// Creates a method of an interface exported with ``CallDelivery/inOrder``, whose calls the
        /// owner answers from ``ExportedObject/incomingCalls`` (it has no handler of its own).
        ///
        /// - Parameters:
        ///   - name: The method name.
        ///   - inSignature: The input signature (`""` for none).
        ///   - outSignature: The output signature (`""` for none).
        ///   - requiresPrivilege: Whether sd-bus should restrict it to privileged callers.
        public init(
            _ name: String, inSignature: String = "", outSignature: String = "", requiresPrivilege: Bool = false
        ) {
            self.init(name, inSignature: inSignature, outSignature: outSignature, requiresPrivilege: requiresPrivilege)
            {
                call throws in
                throw BusError(name: BusError.Name.failed, message: "\(call.member) is answered through incomingCalls")
            }
        }
    }

    /// A signal the object may emit (declared for introspection and checked on emission).
    public struct Signal: Sendable {
        /// The signal name.
        public var name: String
        /// The signature of its arguments.
        public var signature: String
        /// The names of its arguments, one per complete type of ``signature``; empty leaves them unnamed.
        public var argumentNames: [String]

        /// Creates a signal declaration.
        ///
        /// - Parameters:
        ///   - name: The signal name.
        ///   - signature: The signature of its arguments.
        ///   - argumentNames: Their names, for introspection.
        public init(_ name: String, signature: String = "", argumentNames: [String] = []) {
            self.name = name
            self.signature = signature
            self.argumentNames = argumentNames
        }
    }

    /// A property with its initial value.
    public struct Property: Sendable {
        /// How clients learn about changes (`org.freedesktop.DBus.Property.EmitsChangedSignal`).
        public enum ChangeSignal: Sendable {
            /// `PropertiesChanged` carries the new value.
            case emitsValue
            /// `PropertiesChanged` lists the property as invalidated, without the value.
            case invalidates
            /// The value never changes.
            case constant
            /// No signal; clients must poll.
            case none
        }

        /// The property name.
        public var name: String
        /// Its D-Bus type signature (a single complete type).
        public var signature: String
        /// The initial value; must have ``signature``.
        public var initialValue: BusValue
        /// How changes are announced.
        public var changeSignal: ChangeSignal
        /// For a writable property, a validator run (on the loop thread) before a remote `Set` is
        /// accepted; throw ``BusError`` to refuse. `nil` makes the property read-only remotely.
        public var validateSet: (@Sendable (BusValue) throws -> Void)?

        /// Creates a property.
        ///
        /// - Parameters:
        ///   - name: The property name.
        ///   - initialValue: The initial value; its signature becomes the property's type.
        ///   - changeSignal: How changes are announced.
        ///   - validateSet: Makes the property writable by clients when given; throw to refuse a value.
        public init(
            _ name: String, initialValue: BusValue, changeSignal: ChangeSignal = .emitsValue,
            validateSet: (@Sendable (BusValue) throws -> Void)? = nil
        ) {
            self.name = name
            self.signature = initialValue.signature
            self.initialValue = initialValue
            self.changeSignal = changeSignal
            self.validateSet = validateSet
        }
    }
}
