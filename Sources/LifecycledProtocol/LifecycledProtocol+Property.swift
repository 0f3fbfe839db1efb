extension LifecycledProtocol {
    /// The properties of `org.applifecycle.Lifecycled1` (all read-only).
    public enum Property: String, CaseIterable, Sendable {
        /// `sleeping`, `locked`, `session-active` (Booleans); `memory-reclaim` (`available` or
        /// `unavailable`) and `memory-reclaimed` (bytes reclaimed from frozen apps since the daemon started).
        case hostState = "HostState"
        /// As `ListApps`.
        case apps = "Apps"
        /// Whether `Simulate` is accepted.
        case simulationEnabled = "SimulationEnabled"
        /// The protocol version (``LifecycledProtocol/version``).
        case version = "Version"

        /// The member name on the bus.
        public var name: String { rawValue }

        /// The D-Bus type.
        public var signature: String {
            switch self {
            case .hostState: return "a{sv}"
            case .apps: return "a(sssu)"
            case .simulationEnabled: return "b"
            case .version: return "u"
            }
        }

        /// Whether the value is fixed for the daemon's life (`EmitsChangedSignal=const`); the others
        /// announce each change with `PropertiesChanged` carrying the new value.
        public var isConstant: Bool {
            switch self {
            case .hostState, .apps: return false
            case .simulationEnabled, .version: return true
            }
        }
    }
}
