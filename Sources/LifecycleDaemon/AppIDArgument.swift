import LifecycledProtocol
import SystemdBus

/// An app id as a method argument (`s`): decoding refuses one that is not a valid id
/// (``LifecycledProtocol/isValidAppID(_:)``) with `InvalidArgs`.
struct AppIDArgument: BusArgument {
    /// The id.
    let id: String

    static var busSignature: String { "s" }

    init(busValue: BusValue) throws(BusError) {
        let id = try String(busValue: busValue)
        guard LifecycledProtocol.isValidAppID(id) else {
            let shown = id.utf8.count > 64 ? String(id.prefix(64)) + "…" : id
            throw DaemonError.invalidArgs(
                "'\(shown)' is not a valid app id (reverse-DNS like org.example.App, at most \(LifecycledProtocol.Limits.appIDLength) bytes)"
            )
        }
        self.id = id
    }

    var busValue: BusValue { .string(id) }
}
