/// A D-Bus struct (`(…)`) of typed fields, such as `BusStruct<String, String, UInt32>` for `(ssu)`:
/// the tuple of typed arguments, for array elements and results.
public struct BusStruct<each Field: BusArgument>: BusArgument {
    /// The fields in order.
    public var fields: (repeat each Field)

    /// Creates a struct of its fields.
    ///
    /// - Parameters:
    ///   - fields: The fields in order.
    public init(_ fields: repeat each Field) { self.fields = (repeat each fields) }

    public static var busSignature: String {
        var signature = "("
        for type in repeat (each Field).self { signature += type.busSignature }
        return signature + ")"
    }

    public init(busValue: BusValue) throws(BusError) {
        guard case .structure(let values) = busValue, busValue.signature == Self.busSignature else {
            throw Self.typeMismatch(busValue)
        }
        fields = try Self.decode(values)
    }

    private static func decode(_ values: [BusValue]) throws(BusError) -> (repeat each Field) {
        var reader = BusArgumentReader(values)
        return (repeat try reader.next((each Field).self))
    }

    public var busValue: BusValue {
        var values: [BusValue] = []
        for field in repeat each fields { values.append(field.busValue) }
        return .structure(values)
    }
}
