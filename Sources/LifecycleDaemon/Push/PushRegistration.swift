import FoundationEssentials
import LifecycledProtocol

/// One app's registration with lifecycled's distributor, kept in `push-registrations.json`.
struct PushRegistration: Codable, Equatable, Sendable {
    /// The endpoint's token (160 random bits, base64url): the last path segment of the endpoint,
    /// the key of the broker's retained registration record.
    var endpointToken: String
    /// The connector's token (chosen by the app).
    var connectorToken: String
    /// The connector's bus name (the app's id).
    var service: String
    /// What the app called itself.
    var description: String?
    /// The app server's VAPID public key, when the app registered one.
    var vapid: String?
    /// 2 for `Distributor2`, 1 for `Distributor1`: how to call the connector back.
    var version: Int
    /// When it was created (Unix milliseconds).
    var created: Int64

    /// The interface its connector is called back on (`Connector2` or `Connector1`, by ``version``).
    var connectorInterface: String { version == 2 ? UnifiedPush.connector2 : UnifiedPush.connector1 }

    /// A new endpoint token: 20 bytes from the kernel's CSPRNG, base64url (27 characters).
    static func makeEndpointToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<20).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
            .replacing("=", with: "")
    }
}
