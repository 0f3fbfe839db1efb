import LifecycledProtocol
import SystemdBus

/// A notification name as a method argument (`s`): 1 to
/// ``LifecycledProtocol/Limits/notificationNameLength`` bytes, else `InvalidArgs`.
struct NotificationNameArgument: BusArgument {
    /// The name.
    let name: String

    static var busSignature: String { "s" }

    init(busValue: BusValue) throws(BusError) {
        let name = try String(busValue: busValue)
        guard !name.isEmpty, name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength else {
            throw DaemonError.invalidArgs(
                "the notification name must be 1 to \(LifecycledProtocol.Limits.notificationNameLength) bytes, got \(name.utf8.count)"
            )
        }
        self.name = name
    }

    var busValue: BusValue { .string(name) }
}
