/// The fleet's MQTT topic layout, under `applifecycle/v1/<device>/`.
///
/// | topic | direction | QoS | retained |
/// | --- | --- | --- | --- |
/// | `<prefix>/push` | gateway → device: ``PushEnvelope`` JSON | 1 | no |
/// | `<prefix>/presence` | device: `online` after CONNACK, `offline` as its Last Will | 1 | yes |
/// | `<prefix>/apps/<appID>/state` | device: an app's lifecycle state | 1 | yes |
/// | `<prefix>/apps/<appID>/notifications` | device: an app's notifications | 1 | no |
/// | `<prefix>/registrations/<token>` | device: a push endpoint registration | 1 | yes |
///
/// Operators and the gateway subscribe with the wildcard filters (``allRegistrations``,
/// ``allPresence``, ``allAppStates``, ``allAppNotifications``); ``parse(_:)`` maps a concrete topic
/// back to its device, kind and key. Broker ACLs confine a device to `applifecycle/v1/<its id>/#`.
public struct FleetTopics: Sendable, Equatable {
    /// The first two levels of every fleet topic.
    public static let root = "applifecycle/v1"
    /// The longest app id or token accepted as a topic level, in bytes.
    public static let maximumLevelLength = 128
    /// The retained presence payload after a connection.
    public static let online: [UInt8] = Array("online".utf8)
    /// The retained presence payload of the Last Will.
    public static let offline: [UInt8] = Array("offline".utf8)

    /// The wildcard filter of every device's registrations (the gateway).
    public static let allRegistrations = "\(root)/+/registrations/+"
    /// The wildcard filter of every device's presence.
    public static let allPresence = "\(root)/+/presence"
    /// The wildcard filter of every app state of every device.
    public static let allAppStates = "\(root)/+/apps/+/state"
    /// The wildcard filter of every app notification of every device.
    public static let allAppNotifications = "\(root)/+/apps/+/notifications"
    /// The wildcard filter of everything in the fleet (operators).
    public static let everything = "\(root)/#"

    /// The device these topics belong to.
    public let device: String

    /// The topics of one device.
    ///
    /// - Parameters:
    ///   - device: The device id (``DeviceIdentity/isValid(_:)``).
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidTopic`` for an invalid id.
    public init(device: String) throws {
        guard DeviceIdentity.isValid(device) else {
            throw FleetProtocolError(.invalidTopic, "invalid device id \"\(device)\"")
        }
        self.device = device
    }

    /// `applifecycle/v1/<device>`.
    public var prefix: String { "\(Self.root)/\(device)" }
    /// The filter of everything of this device: `applifecycle/v1/<device>/#`.
    public var all: String { "\(prefix)/#" }
    /// Where the gateway publishes ``PushEnvelope``s for this device (QoS 1).
    public var push: String { "\(prefix)/push" }
    /// The device's retained presence.
    public var presence: String { "\(prefix)/presence" }

    /// The retained state topic of an app.
    ///
    /// - Parameters:
    ///   - appID: The app's id (a valid topic level, ``isValidLevel(_:)``).
    /// - Returns: `<prefix>/apps/<appID>/state`.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidTopic`` for an invalid app id.
    public func appState(_ appID: String) throws -> String {
        "\(prefix)/apps/\(try Self.level(appID, "app id"))/state"
    }

    /// The notifications topic of an app.
    ///
    /// - Parameters:
    ///   - appID: The app's id (a valid topic level, ``isValidLevel(_:)``).
    /// - Returns: `<prefix>/apps/<appID>/notifications`.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidTopic`` for an invalid app id.
    public func appNotifications(_ appID: String) throws -> String {
        "\(prefix)/apps/\(try Self.level(appID, "app id"))/notifications"
    }

    /// The retained registration topic of a push endpoint.
    ///
    /// - Parameters:
    ///   - token: The endpoint token (a valid topic level, ``isValidLevel(_:)``).
    /// - Returns: `<prefix>/registrations/<token>`.
    /// - Throws: ``FleetProtocolError`` with ``FleetProtocolError/Code/invalidTopic`` for an invalid token.
    public func registration(_ token: String) throws -> String {
        "\(prefix)/registrations/\(try Self.level(token, "token"))"
    }

    /// What a fleet topic is.
    public enum Kind: Sendable, Equatable {
        /// `<prefix>/push`.
        case push
        /// `<prefix>/presence`.
        case presence
        /// `<prefix>/apps/<appID>/state`; the key is the app id.
        case appState
        /// `<prefix>/apps/<appID>/notifications`; the key is the app id.
        case appNotifications
        /// `<prefix>/registrations/<token>`; the key is the token.
        case registration
    }

    /// A concrete fleet topic, taken apart.
    public struct Parsed: Sendable, Equatable {
        /// The device id.
        public var device: String
        /// The kind of topic.
        public var kind: Kind
        /// The app id or token, for the kinds that have one.
        public var key: String?
    }

    /// Takes a concrete topic apart.
    ///
    /// - Parameters:
    ///   - topic: A topic a message arrived on.
    /// - Returns: Its device, kind and key, or `nil` if it is not a valid fleet topic.
    public static func parse(_ topic: String) -> Parsed? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count >= 4, levels[0] == "applifecycle", levels[1] == "v1", DeviceIdentity.isValid(levels[2])
        else { return nil }
        let device = levels[2]
        switch Array(levels[3...]) {
        case ["push"]:
            return Parsed(device: device, kind: .push, key: nil)
        case ["presence"]:
            return Parsed(device: device, kind: .presence, key: nil)
        case let rest where rest.count == 3 && rest[0] == "apps" && isValidLevel(rest[1]):
            switch rest[2] {
            case "state": return Parsed(device: device, kind: .appState, key: rest[1])
            case "notifications": return Parsed(device: device, kind: .appNotifications, key: rest[1])
            default: return nil
            }
        case let rest where rest.count == 2 && rest[0] == "registrations" && isValidLevel(rest[1]):
            return Parsed(device: device, kind: .registration, key: rest[1])
        default:
            return nil
        }
    }

    /// Whether `value` can be one topic level: 1–``maximumLevelLength`` bytes, no `+`, `#`, `/`,
    /// NUL or other control character.
    ///
    /// - Parameters:
    ///   - value: An app id or token.
    public static func isValidLevel(_ value: String) -> Bool {
        let bytes = value.utf8
        guard (1...maximumLevelLength).contains(bytes.count) else { return false }
        return value.unicodeScalars.allSatisfy { scalar in
            scalar != "+" && scalar != "#" && scalar != "/" && scalar.value >= 0x20 && scalar.value != 0x7f
        }
    }

    private static func level(_ value: String, _ what: String) throws -> String {
        guard isValidLevel(value) else { throw FleetProtocolError(.invalidTopic, "invalid \(what) \"\(value)\"") }
        return value
    }
}
