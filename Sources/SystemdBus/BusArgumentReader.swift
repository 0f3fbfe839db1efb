/// Reads typed values from a list of ``BusValue``s in order (a call's arguments, a struct's fields),
/// and says which one did not decode.
struct BusArgumentReader {
    private let values: [BusValue]
    private let context: String
    private let what: String
    private let names: [String]
    private var index = 0

    /// - Parameters:
    ///   - values: The values in order.
    ///   - context: What they belong to, at the start of an error's message (a method's name), or "".
    ///   - what: What one value is called in a message ("argument", "field").
    ///   - names: The values' names, if known.
    init(_ values: [BusValue], context: String = "", what: String = "field", names: [String] = []) {
        self.values = values
        self.context = context.isEmpty ? "" : context + ": "
        self.what = what
        self.names = names
    }

    /// The next value as `type`; `InvalidArgs` (or what the type threw) naming the value when there
    /// is none or it does not decode.
    mutating func next<Value: BusArgument>(_ type: Value.Type) throws(BusError) -> Value {
        let position = index
        index += 1
        let named = position < names.count ? " (\(names[position]))" : ""
        guard position < values.count else {
            throw BusError(
                name: BusError.Name.invalidArgs,
                message: "\(context)\(what) \(position + 1)\(named) of type \(Value.busSignature) is missing", errno: 22
            )
        }
        do {
            return try Value(busValue: values[position])
        } catch {
            throw BusError(
                name: error.name, message: "\(context)\(what) \(position + 1)\(named): \(error.message)",
                errno: error.errno)
        }
    }

    /// Refuses values left over after the last one read.
    func finish() throws(BusError) {
        guard index == values.count else {
            throw BusError(
                name: BusError.Name.invalidArgs,
                message: "\(context)expected \(index) \(what)s, got \(values.count)", errno: 22)
        }
    }
}
