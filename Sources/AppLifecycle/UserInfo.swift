import FoundationEssentials

/// The userInfo of a named notification: string keys to property-list values plus null.
///
/// `UserInfo` is the value type that every named notification, launch-options dictionary
/// and D-Bus broadcast carries. Unlike Foundation's `[AnyHashable: Any]` it is `Sendable`,
/// `Hashable` and `Codable`, so a notification's userInfo survives actor hops, JSON traces
/// and the session bus unchanged.
///
/// Keys are UIKit's raw strings (`"UIApplicationLaunchOptionsURLKey"`); any
/// `RawRepresentable` key whose raw value is a `String` can subscript it directly.
public struct UserInfo: Sendable, Hashable, Codable {
    /// The entries.
    public var values: [String: UserInfoValue]

    /// Creates a userInfo with the given entries.
    ///
    /// - Parameters:
    ///   - values: The entries.
    public init(_ values: [String: UserInfoValue] = [:]) {
        self.values = values
    }

    /// The value for a key, or `nil` when there is none; assigning `nil` removes the entry.
    ///
    /// - Parameters:
    ///   - key: The raw key string.
    public subscript(key: String) -> UserInfoValue? {
        get { values[key] }
        set { values[key] = newValue }
    }

    /// The value for a typed key, or `nil`; assigning `nil` removes the entry.
    ///
    /// - Parameters:
    ///   - key: A key whose raw value is the userInfo key string.
    public subscript<Key: RawRepresentable>(key: Key) -> UserInfoValue? where Key.RawValue == String {
        get { values[key.rawValue] }
        set { values[key.rawValue] = newValue }
    }

    /// Whether there are no entries.
    public var isEmpty: Bool { values.isEmpty }

    /// The number of entries.
    public var count: Int { values.count }

    /// The keys, sorted, for stable output.
    public var sortedKeys: [String] { values.keys.sorted() }

    /// The deepest nesting of arrays and dictionaries among the values.
    public var nestingDepth: Int { values.values.map(\.nestingDepth).max() ?? 0 }

    /// This userInfo with the entries of another laid over it (the other wins on a shared key).
    ///
    /// - Parameters:
    ///   - other: The entries to add.
    public func merging(_ other: UserInfo) -> UserInfo {
        UserInfo(values.merging(other.values, uniquingKeysWith: { _, new in new }))
    }

    /// Creates a userInfo from its JSON text.
    ///
    /// - Parameters:
    ///   - json: A JSON object; see ``UserInfoValue`` for how dates and bytes are spelt.
    /// - Throws: `DecodingError` when the text is not a JSON object of property-list values.
    public init(json: String) throws {
        self = try JSONDecoder().decode(UserInfo.self, from: Data(json.utf8))
    }

    /// The JSON text of this userInfo, keys sorted.
    ///
    /// JSON has no NaN or infinity: such a number is written as the string `"nan"`, `"inf"` or
    /// `"-inf"`, so the text always shows every key (it never falls back to an empty object).
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Decodes a userInfo from a JSON object.
    ///
    /// - Parameters:
    ///   - decoder: The decoder to read from.
    public init(from decoder: any Decoder) throws {
        let value = try UserInfoValue(from: decoder)
        guard case .dictionary(let entries) = value else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath, debugDescription: "userInfo must be an object"))
        }
        self.values = entries
    }

    /// Encodes the userInfo as a JSON object.
    ///
    /// - Parameters:
    ///   - encoder: The encoder to write to.
    public func encode(to encoder: any Encoder) throws {
        try UserInfoValue.dictionary(values).encode(to: encoder)
    }
}

extension UserInfo: ExpressibleByDictionaryLiteral {
    /// Creates a userInfo from a literal; a repeated key keeps its last value.
    ///
    /// - Parameters:
    ///   - elements: The literal's key-value pairs.
    public init(dictionaryLiteral elements: (String, UserInfoValue)...) {
        self.values = Dictionary(elements, uniquingKeysWith: { _, last in last })
    }
}

extension UserInfo: CustomStringConvertible {
    /// A compact rendering with sorted keys, for timelines and logs.
    public var description: String { UserInfoValue.dictionary(values).description }
}
