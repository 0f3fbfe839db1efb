/// A signal received from the bus, decoded.
///
/// Delivered to the handlers of ``BusConnection/subscribe(sender:path:interface:member:signature:arg0:handler:)``
/// only after the sender was verified to be the current owner of the subscribed name.
public struct BusSignal: Sendable, CustomStringConvertible {
    /// The unique name of the sending connection, for example `:1.7`.
    public var sender: String
    /// The object path that emitted the signal.
    public var path: String
    /// The interface of the signal.
    public var interface: String
    /// The signal's name.
    public var member: String
    /// The body signature, for example `b` for logind's `PrepareForSleep`.
    public var signature: String
    /// The decoded arguments.
    public var arguments: [BusValue]
    /// The destination for a unicast signal, or `nil` for a broadcast.
    public var destination: String?

    /// Creates a signal value (mainly for tests).
    ///
    /// - Parameters:
    ///   - sender: The sender's unique name.
    ///   - path: The object path.
    ///   - interface: The interface name.
    ///   - member: The signal name.
    ///   - arguments: The arguments; the signature is derived from them.
    ///   - destination: The destination of a unicast signal.
    public init(
        sender: String, path: String, interface: String, member: String, arguments: [BusValue],
        destination: String? = nil
    ) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.member = member
        self.signature = BusValue.signature(of: arguments)
        self.arguments = arguments
        self.destination = destination
    }

    /// `interface.member(signature) from sender at path`.
    public var description: String {
        "\(interface).\(member)(\(signature)) from \(sender) at \(path)"
    }
}
