import SystemdBus

/// One app known to `lifecycled`, as `ListApps` and the `Apps` property report it (`(sssu)`).
public struct LifecycledApp: Sendable, Hashable, Codable {
    /// The app id.
    public var id: String
    /// Its state (`notRunning`, `active`, …) as the daemon spells it.
    public var state: String
    /// Its display name.
    public var name: String
    /// Its process id, 0 when it is not running.
    public var pid: UInt32

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - id: The app id, reverse-DNS.
    ///   - state: The app's state as lifecycled reports it, such as `active` or `suspended`.
    ///   - name: The display name.
    ///   - pid: The process id, or 0.
    public init(id: String, state: String, name: String, pid: UInt32) {
        self.id = id
        self.state = state
        self.name = name
        self.pid = pid
    }

    /// Reads one `(sssu)`, or `nil` when it has another shape.
    ///
    /// - Parameters:
    ///   - value: The struct.
    public init?(_ value: BusValue) {
        guard let fields = value.structValue, fields.count == 4,
            let id = fields[0].stringValue, let state = fields[1].stringValue,
            let name = fields[2].stringValue, let pid = fields[3].uint32Value
        else { return nil }
        self.init(id: id, state: state, name: name, pid: pid)
    }

    /// The `(sssu)` form.
    public var busValue: BusValue { .structure([.string(id), .string(state), .string(name), .uint32(pid)]) }

    /// Reads an `a(sssu)`, skipping malformed entries; empty for anything else.
    ///
    /// - Parameters:
    ///   - value: The array (or `nil`).
    public static func list(from value: BusValue?) -> [LifecycledApp] {
        (value?.arrayValue ?? []).compactMap(LifecycledApp.init)
    }
}
