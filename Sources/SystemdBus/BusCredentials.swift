/// The credentials of a bus peer, as the bus daemon reports them.
///
/// Obtained with ``BusConnection/credentials(of:)`` (the daemon's
/// `GetConnectionCredentials`), and handed to exported method handlers for the caller. The
/// bus daemon takes them from the kernel (`SO_PEERCRED`) when the peer connected, so they
/// cannot be forged by the peer. Use ``uid`` for access checks; ``pid`` is informational
/// (a process may have exited and its pid been reused).
public struct BusCredentials: Sendable, Equatable, CustomStringConvertible {
    /// The unique bus name of the peer, for example `:1.42`.
    public var uniqueName: String
    /// The peer's Unix user id, if the daemon knows it.
    public var uid: UInt32?
    /// The peer's process id, if the daemon knows it.
    public var pid: UInt32?
    /// The peer's supplementary group ids, if the daemon reports them.
    public var groupIDs: [UInt32]?

    /// Creates a credentials value.
    ///
    /// - Parameters:
    ///   - uniqueName: The peer's unique name.
    ///   - uid: The Unix user id.
    ///   - pid: The process id.
    ///   - groupIDs: The supplementary group ids.
    public init(uniqueName: String, uid: UInt32?, pid: UInt32?, groupIDs: [UInt32]? = nil) {
        self.uniqueName = uniqueName
        self.uid = uid
        self.pid = pid
        self.groupIDs = groupIDs
    }

    /// `:1.42 uid=1000 pid=1234`.
    public var description: String {
        "\(uniqueName) uid=\(uid.map(String.init) ?? "?") pid=\(pid.map(String.init) ?? "?")"
    }
}
