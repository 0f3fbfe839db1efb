extension BusConnection {
    /// The names the bus daemon can start on demand (`ListActivatableNames`): those with a
    /// D-Bus service file in one of its service directories, and its own name.
    ///
    /// - Parameters:
    ///   - timeout: How long the bus daemon may take to answer; `nil` uses sd-bus's default (25 s).
    /// - Throws: ``BusError`` when the daemon does not answer.
    public func activatableNames(timeout: Duration? = nil) async throws -> [String] {
        try await callDaemon("ListActivatableNames", [], timeout: timeout).first?.arrayValue?.compactMap(\.stringValue)
            ?? []
    }

    /// The unique owner of `name`, starting its service through D-Bus activation first when the
    /// name has no owner but is activatable; `nil` when it is neither owned nor activatable.
    ///
    /// Activation works as `busctl` and `gdbus` do it: a method call to the name with the
    /// auto-start flag set (`org.freedesktop.DBus.Peer.Ping`, which every sd-bus and GDBus peer
    /// answers without any code of its own). The bus daemon, or the user's service manager for a
    /// service file with `SystemdService=`, starts the service and holds the call until the name
    /// is owned, so the owner is known once the call returns.
    ///
    /// - Parameters:
    ///   - name: A well-known name.
    ///   - timeout: How long the start may take; `nil` uses sd-bus's default (25 s).
    /// - Returns: The unique name that owns `name` now, or `nil`.
    /// - Throws: ``BusError``: the activation failed (for example `org.freedesktop.DBus.Error.Spawn.ChildExited`),
    ///   or the bus did not answer.
    public func ownerStartingIfActivatable(_ name: String, timeout: Duration? = nil) async throws -> String? {
        if let owner = try await nameOwner(name) { return owner }
        guard try await activatableNames().contains(name) else { return nil }
        do {
            _ = try await call(
                destination: name, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping",
                timeout: timeout)
        } catch let error as BusError where error.name == BusError.Name.serviceUnknown {
            // The service file went away between the listing and the call.
            return nil
        }
        return try await nameOwner(name)
    }
}
