extension BusConnection {
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// Reads one property (`org.freedesktop.DBus.Properties.Get`).
    ///
    /// - Parameters:
    ///   - destination: The service's bus name.
    ///   - path: The object path.
    ///   - interface: The interface that has the property.
    ///   - name: The property name.
    /// - Returns: The value, unwrapped from its variant.
    /// - Throws: ``BusError``, for example `UnknownProperty`.
    public func getProperty(destination: String, path: String, interface: String, name: String) async throws -> BusValue
    {
        let reply = try await call(
            destination: destination, path: path, interface: BusConnection.propertiesInterface,
            member: "Get", arguments: [.string(interface), .string(name)])
        guard let value = reply.first else {
            throw BusError(name: BusError.Name.invalidSignature, message: "empty Get reply", errno: 0)
        }
        return value.unwrapped
    }

    /// Reads all properties of an interface (`org.freedesktop.DBus.Properties.GetAll`).
    ///
    /// - Parameters:
    ///   - destination: The service's bus name.
    ///   - path: The object path.
    ///   - interface: The interface the property belongs to.
    /// - Returns: Property names to values, unwrapped from their variants.
    /// - Throws: ``BusError`` on failure.
    public func getAllProperties(destination: String, path: String, interface: String) async throws -> [String:
        BusValue]
    {
        let reply = try await call(
            destination: destination, path: path, interface: BusConnection.propertiesInterface,
            member: "GetAll", arguments: [.string(interface)])
        guard let dict = reply.first?.dictionaryValue else {
            throw BusError(name: BusError.Name.invalidSignature, message: "GetAll reply is not a{sv}", errno: 0)
        }
        return dict.mapValues(\.unwrapped)
    }

    /// Writes one property (`org.freedesktop.DBus.Properties.Set`).
    ///
    /// - Parameters:
    ///   - destination: The service's bus name.
    ///   - path: The object path.
    ///   - interface: The interface the property belongs to.
    ///   - name: The property name.
    ///   - value: The new value (wrapped in a variant for you).
    /// - Throws: ``BusError``, for example `PropertyReadOnly`.
    public func setProperty(destination: String, path: String, interface: String, name: String, value: BusValue)
        async throws
    {
        let wrapped: BusValue = if case .variant = value { value } else { .variant(value) }
        _ = try await call(
            destination: destination, path: path, interface: BusConnection.propertiesInterface,
            member: "Set", arguments: [.string(interface), .string(name), wrapped])
    }

    /// Follows `PropertiesChanged` of one interface at one path, from a verified sender.
    ///
    /// Built on ``subscribe(sender:path:interface:member:signature:arg0:handler:)``: only
    /// the current owner of `wellKnownName` is believed, and the signature must be `sa{sv}as`.
    ///
    /// - Parameters:
    ///   - wellKnownName: The service's well-known name.
    ///   - path: The object path.
    ///   - interface: The interface whose properties to follow.
    ///   - handler: Called on the loop thread with each change.
    /// - Returns: The subscription; cancel it to stop.
    /// - Throws: ``BusError`` if the subscription cannot be installed.
    public func observeProperties(
        sender wellKnownName: String, path: String, interface: String,
        handler: @escaping @Sendable (PropertiesChange) -> Void
    ) async throws -> BusSubscription {
        try await subscribe(
            sender: wellKnownName, path: path, interface: BusConnection.propertiesInterface,
            member: "PropertiesChanged", signature: "sa{sv}as", arg0: interface
        ) { signal in
            let changed = (signal.arguments[1].dictionaryValue ?? [:]).mapValues(\.unwrapped)
            let invalidated = signal.arguments[2].stringArrayValue ?? []
            handler(
                PropertiesChange(
                    sender: signal.sender, path: signal.path,
                    interface: signal.arguments[0].stringValue ?? interface,
                    changed: changed, invalidated: invalidated))
        }
    }
}
