/// One incoming call of an exported method, decoded, as handed to its handler.
public struct BusMethodCall: Sendable {
    /// The caller's unique name, for example `:1.42` (`nil` on a peer-to-peer connection).
    public var sender: String?
    /// The caller's credentials from the bus daemon (uid, pid), or `nil` if they could not be
    /// obtained (the caller already left, or a peer-to-peer connection).
    public var credentials: BusCredentials?
    /// The object path that was called.
    public var path: String
    /// The interface that was called.
    public var interface: String
    /// The method name.
    public var member: String
    /// The decoded arguments; sd-bus has already checked them against the declared signature.
    public var arguments: [BusValue]

    /// Creates a call value (mainly for tests of handlers).
    ///
    /// - Parameters:
    ///   - sender: The caller's unique name.
    ///   - credentials: The caller's credentials.
    ///   - path: The object path.
    ///   - interface: The interface.
    ///   - member: The method name.
    ///   - arguments: The arguments.
    public init(sender: String?, credentials: BusCredentials?, path: String, interface: String, member: String, arguments: [BusValue]) {
        self.sender = sender
        self.credentials = credentials
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }
}
