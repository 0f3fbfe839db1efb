import FoundationEssentials

/// The keyed archive the state-preservation callbacks write into and read from.
///
/// The Linux counterpart of the `NSCoder` that UIKit passes to
/// `application(_:shouldSaveApplicationState:)`, `application(_:willEncodeRestorableStateWith:)`
/// and their restoring twins. Values are property-list values (``UserInfoValue``) or any
/// `Codable` type (stored in its JSON form). Restorable objects are recorded by their
/// identifier path (the restoration identifiers from the root to the object); on restore,
/// ``ApplicationDelegate/application(_:restorableObjectWithIdentifierPath:coder:)`` is asked
/// for each one.
@MainActor
public final class StateRestorationCoder {
    /// The archive's entries.
    public private(set) var values: [String: UserInfoValue]
    /// The identifier paths of the restorable objects encoded, in encoding order.
    public private(set) var restorableObjectPaths: [[String]]
    /// Whether the coder is being written (preservation) rather than read (restoration).
    public let isEncoding: Bool

    init(archive: RestorationArchive? = nil) {
        self.values = archive?.values ?? [:]
        self.restorableObjectPaths = archive?.objectPaths ?? []
        self.isEncoding = archive == nil
    }

    /// Stores a property-list value under a key.
    public func encode(_ value: UserInfoValue, forKey key: String) {
        values[key] = value
    }

    /// Stores a `Codable` value under a key, in its JSON form.
    ///
    /// - Throws: `EncodingError` when the value cannot be encoded.
    public func encodeCodable<Value: Encodable>(_ value: Value, forKey key: String) throws {
        let data = try JSONEncoder().encode(value)
        values[key] = try JSONDecoder().decode(UserInfoValue.self, from: data)
    }

    /// The property-list value under a key, or `nil`.
    public func decodeValue(forKey key: String) -> UserInfoValue? {
        values[key]
    }

    /// The `Codable` value under a key, or `nil` when there is none.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - key: The key the value was encoded under.
    /// - Throws: `DecodingError` when the stored value does not decode as `type`.
    public func decodeCodable<Value: Decodable>(_ type: Value.Type, forKey key: String) throws -> Value? {
        guard let value = values[key] else { return nil }
        return try JSONDecoder().decode(type, from: JSONEncoder().encode(value))
    }

    /// Whether a value is stored under a key.
    public func containsValue(forKey key: String) -> Bool { values[key] != nil }

    /// Records a restorable object by its identifier path, so that restoration asks for it again.
    ///
    /// - Parameters:
    ///   - identifierPath: The restoration identifiers from the root to the object; empty paths are ignored.
    public func encodeRestorableObject(identifierPath: [String]) {
        guard !identifierPath.isEmpty, !restorableObjectPaths.contains(identifierPath) else { return }
        restorableObjectPaths.append(identifierPath)
    }

    func archive(applicationIdentifier: String, savedAt: Date) -> RestorationArchive {
        RestorationArchive(
            applicationIdentifier: applicationIdentifier, savedAt: savedAt, values: values,
            objectPaths: restorableObjectPaths)
    }
}
