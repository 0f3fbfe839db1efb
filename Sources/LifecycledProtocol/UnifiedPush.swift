import SystemdBus

/// The names of the UnifiedPush D-Bus specification (DBUS 0.3.0), shared by the connector every
/// app runs (`UnifiedPushConnector`) and the distributor lifecycled runs.
public enum UnifiedPush {
    /// The prefix of every distributor's well-known name on the session bus.
    public static let distributorNamePrefix = "org.unifiedpush.Distributor."
    /// lifecycled's distributor name.
    public static let lifecycledDistributorName = "org.unifiedpush.Distributor.applifecycle"
    /// The distributor's object path.
    public static let distributorPath = "/org/unifiedpush/Distributor"
    /// The distributor interface of version 2 (`Register(a{sv}) → a{sv}`, `Unregister(a{sv})`).
    public static let distributor2 = "org.unifiedpush.Distributor2"
    /// The distributor interface of version 1 (`Register(sss) → (ss)`, `Unregister(s)`).
    public static let distributor1 = "org.unifiedpush.Distributor1"
    /// The connector's object path, under the app's own bus name.
    public static let connectorPath = "/org/unifiedpush/Connector"
    /// The connector interface of version 2 (`Message`, `NewEndpoint`, `Unregistered`, each `a{sv}`).
    public static let connector2 = "org.unifiedpush.Connector2"
    /// The connector interface of version 1 (`Message(say s)`, `NewEndpoint(ss)`, `Unregistered(s)`).
    public static let connector1 = "org.unifiedpush.Connector1"

    /// `Register`'s answer (`success`) when the distributor took the registration.
    public static let registrationSucceeded = "REGISTRATION_SUCCEEDED"
    /// `Register`'s answer (`success`) when it did not; `reason` says why.
    public static let registrationFailed = "REGISTRATION_FAILED"

    /// Why a distributor refused a registration (`reason`).
    public enum FailureReason: String, Sendable, CaseIterable {
        /// Something went wrong inside the distributor.
        case internalError = "INTERNAL_ERROR"
        /// The distributor cannot reach its push server now.
        case network = "NETWORK"
        /// The user must act first (configure a push server, log in).
        case actionRequired = "ACTION_REQUIRED"
        /// The distributor needs a VAPID key with the registration.
        case vapidRequired = "VAPID_REQUIRED"
    }

    /// The longest connector token the specification allows, in bytes.
    public static let maximumTokenLength = 100
    /// The longest endpoint URL the specification allows, in bytes.
    public static let maximumEndpointLength = 1000
    /// The largest message body (RFC 8291 ciphertext) a distributor delivers, in bytes.
    public static let maximumMessageLength = 4096

    /// The message bytes of a `Message` call's `message` argument: `ay` as KDE sends it, or a
    /// string, which the specification allows too.
    public static func messageBytes(_ value: BusValue?) -> [UInt8]? {
        switch value?.unwrapped {
        case .array(_, let elements):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(elements.count)
            for element in elements {
                guard case .byte(let byte) = element else { return nil }
                bytes.append(byte)
            }
            return bytes
        case .string(let text):
            return Array(text.utf8)
        default:
            return nil
        }
    }

    /// `ay` of `bytes`.
    public static func byteArray(_ bytes: some Sequence<UInt8>) -> BusValue {
        .array(elementSignature: "y", bytes.map { .byte($0) })
    }

    /// The value of `key` in an `a{sv}` argument.
    public static func field(_ key: String, in dictionary: BusValue?) -> BusValue? {
        guard case .dictionary(_, _, let entries) = dictionary else { return nil }
        return entries.first { $0.key.stringValue == key }?.value.unwrapped
    }
}
