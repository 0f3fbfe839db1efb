extension LifecycledProtocol {
    /// The signals of `org.applifecycle.Lifecycled1`.
    public enum Signal: String, CaseIterable, Sendable {
        /// Every lifecycle notification of every app.
        case notification = "Notification"
        /// An app's state changed.
        case stateChanged = "StateChanged"
        /// The daemon tells one app something (``LifecycledCommand``), sent to its unique name only.
        case command = "Command"
        /// What the display server shows of an app changed: its window state (`activated`,
        /// `visible`, `hidden`, `closed`) and its windows, one description each.
        case windowsChanged = "WindowsChanged"

        /// The member name on the bus.
        public var name: String { rawValue }

        /// The arguments.
        public var arguments: [Argument] {
            switch self {
            case .notification: return [Argument("app_id", "s"), Argument("name", "s"), Argument("user_info", "a{sv}")]
            case .stateChanged: return [Argument("app_id", "s"), Argument("previous", "s"), Argument("state", "s")]
            case .command: return [Argument("app_id", "s"), Argument("command", "s"), Argument("arguments", "a{sv}")]
            case .windowsChanged:
                return [Argument("app_id", "s"), Argument("window_state", "s"), Argument("windows", "as")]
            }
        }

        /// The signature: the arguments' signatures in order.
        public var signature: String { arguments.map(\.signature).joined() }
    }
}
