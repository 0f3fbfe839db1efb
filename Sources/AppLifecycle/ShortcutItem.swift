/// A quick action for the app: on Linux, a desktop-file action (`[Desktop Action …]`).
///
/// The counterpart of `UIApplicationShortcutItem`.
public struct ShortcutItem: Sendable, Hashable, Codable {
    /// The action's type, an app-defined string (the desktop action's id).
    public var type: String
    /// The title shown to the user.
    public var localizedTitle: String
    /// A subtitle shown under the title.
    public var localizedSubtitle: String?
    /// App-defined data.
    public var userInfo: UserInfo

    /// Creates a quick action.
    ///
    /// - Parameters:
    ///   - type: The action's type.
    ///   - localizedTitle: The title.
    ///   - localizedSubtitle: The subtitle.
    ///   - userInfo: App-defined data.
    public init(type: String, localizedTitle: String, localizedSubtitle: String? = nil, userInfo: UserInfo = [:]) {
        self.type = type
        self.localizedTitle = localizedTitle
        self.localizedSubtitle = localizedSubtitle
        self.userInfo = userInfo
    }

    private enum CodingKeys: String, CodingKey {
        case type, localizedTitle, localizedSubtitle, userInfo
    }

    /// Decodes an item; `localizedSubtitle` and `userInfo` may be left out (as in a manifest).
    ///
    /// - Parameters:
    ///   - decoder: The decoder.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            type: try container.decode(String.self, forKey: .type),
            localizedTitle: try container.decode(String.self, forKey: .localizedTitle),
            localizedSubtitle: try container.decodeIfPresent(String.self, forKey: .localizedSubtitle),
            userInfo: try container.decodeIfPresent(UserInfo.self, forKey: .userInfo) ?? [:])
    }

    /// Encodes the item (the subtitle only when set).
    ///
    /// - Parameters:
    ///   - encoder: The encoder.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(localizedTitle, forKey: .localizedTitle)
        try container.encodeIfPresent(localizedSubtitle, forKey: .localizedSubtitle)
        try container.encode(userInfo, forKey: .userInfo)
    }

    /// The item as a property-list dictionary (launch options, commands, `RegisterApp` facts).
    public var propertyList: UserInfoValue {
        var entries: [String: UserInfoValue] = [
            "type": .string(type), "localizedTitle": .string(localizedTitle), "userInfo": .dictionary(userInfo.values),
        ]
        if let localizedSubtitle { entries["localizedSubtitle"] = .string(localizedSubtitle) }
        return .dictionary(entries)
    }

    /// Reads an item from its property-list form; `nil` without a type and a title.
    ///
    /// - Parameters:
    ///   - propertyList: A dictionary as produced by ``propertyList``.
    public init?(propertyList: UserInfoValue) {
        guard let entries = propertyList.dictionaryValue, let type = entries["type"]?.stringValue,
            let title = entries["localizedTitle"]?.stringValue
        else { return nil }
        self.init(
            type: type, localizedTitle: title, localizedSubtitle: entries["localizedSubtitle"]?.stringValue,
            userInfo: UserInfo(entries["userInfo"]?.dictionaryValue ?? [:]))
    }
}
