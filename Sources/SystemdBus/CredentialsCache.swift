import CSystemd
import Glibc
import Logging
import Synchronization

/// A bounded map from unique bus names to their credentials (oldest entries evicted first).
///
/// Sendable: its state is behind a mutex.
final class CredentialsCache: Sendable {
    private static let capacity = 1024
    private let state = Mutex<(entries: [String: BusCredentials], order: [String])>(([:], []))

    subscript(name: String) -> BusCredentials? {
        get { state.withLock { $0.entries[name] } }
        set {
            guard let newValue else { return }
            state.withLock { state in
                if state.entries.updateValue(newValue, forKey: name) == nil { state.order.append(name) }
                if state.order.count > Self.capacity {
                    let evicted = state.order.removeFirst()
                    state.entries[evicted] = nil
                }
            }
        }
    }
}
