import SystemdBus

extension BusConnection {
    /// Makes the bus daemon read its configuration and service directories again
    /// (`org.freedesktop.DBus.ReloadConfig`), so service files written after it started count
    /// for `ListActivatableNames` at once.
    public func reloadBusConfiguration() async throws {
        _ = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ReloadConfig")
    }
}
