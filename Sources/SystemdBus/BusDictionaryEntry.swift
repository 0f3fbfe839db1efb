/// One entry of a D-Bus dictionary (`{kv}`).
///
/// A dictionary is an ordered list of entries on the wire; keys are basic types.
public struct BusDictionaryEntry: Sendable, Equatable {
    /// The key, a basic type (`s`, `o`, integers…).
    public var key: BusValue
    /// The value, any type.
    public var value: BusValue

    /// Creates a dictionary entry.
    ///
    /// - Parameters:
    ///   - key: The key, of a basic type.
    ///   - value: The entry's value.
    public init(key: BusValue, value: BusValue) {
        self.key = key
        self.value = value
    }
}
