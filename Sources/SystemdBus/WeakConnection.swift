import CSystemd
import Glibc
import Logging
import Synchronization

/// A weak reference to a connection, for callbacks that must not keep it alive.
final class WeakConnection: Sendable {
    // Sendable: a weak reference is read atomically by the Swift runtime; the connection is Sendable.
    weak let connection: BusConnection?
    init(_ connection: BusConnection) { self.connection = connection }
}
