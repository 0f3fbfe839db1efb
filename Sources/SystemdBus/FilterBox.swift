import CSystemd
import Glibc
import Logging
import Synchronization

/// The userdata of the connection's message filter (disconnect detection).
final class FilterBox: SlotBox, @unchecked Sendable {
    // Safe for the same reason as SlotBox; `connection` is a weak immutable reference.
    weak let connection: BusConnection?
    init(connection: BusConnection) { self.connection = connection }
}
