/// One `org.freedesktop.DBus.Properties.PropertiesChanged` signal, decoded.
public struct PropertiesChange: Sendable, CustomStringConvertible {
    /// The unique name of the sender (already verified to own the subscribed name).
    public var sender: String
    /// The object path whose properties changed.
    public var path: String
    /// The interface whose properties changed.
    public var interface: String
    /// The new values, unwrapped from their variants.
    public var changed: [String: BusValue]
    /// Properties that changed without their new value being sent (fetch them if needed).
    public var invalidated: [String]

    /// Creates a change value.
    ///
    /// - Parameters:
    ///   - sender: The sender's unique name.
    ///   - path: The object path.
    ///   - interface: The interface whose properties changed.
    ///   - changed: The new values.
    ///   - invalidated: The names of invalidated properties.
    public init(sender: String, path: String, interface: String, changed: [String: BusValue], invalidated: [String]) {
        self.sender = sender
        self.path = path
        self.interface = interface
        self.changed = changed
        self.invalidated = invalidated
    }

    /// `interface at path: changed […] invalidated […]`.
    public var description: String {
        "\(interface) at \(path): changed \(changed.keys.sorted()) invalidated \(invalidated)"
    }
}
