/// The ids of the last pushes a connector accepted, so that a push the distributor sends again is
/// recognised and reaches the app once.
///
/// Why a connector sees a push twice: lifecycled hands a push to a running app *before* the broker
/// gets its PUBACK, and sends the PUBACK only once the app's `Message` reply arrived. If lifecycled
/// (or its broker connection) dies between that reply and the PUBACK, the broker sends the push
/// again and the next lifecycled delivers it again, with the same id.
///
/// Kept in memory only, not in `remote-notifications.json`: the repeat comes within the time
/// lifecycled needs to restart and reconnect, to the same app process, which keeps running when
/// lifecycled dies. Remembering across the app's own restarts would cost a file write (and an
/// fsync, to mean anything) on every push, the cost the design removes from lifecycled; the repeat
/// would then need the app *and* lifecycled to die within the same few microseconds.
///
/// Bounded: ``capacity`` ids, the oldest forgotten first. That is more than the broker's in-flight
/// window (the most pushes a repeat can come back behind: mosquitto's `max_inflight_messages`,
/// 20 by default) many times over, and 1,024 ids of a UUID each are ~50 KiB.
package struct RecentMessageIDs {
    /// How many ids are remembered.
    package static let capacity = 1024

    private var order: [String] = []
    private var members: Set<String> = []
    /// The index in ``order`` of the oldest id, once the ring is full.
    private var oldest = 0

    /// An empty record.
    package init() {}

    /// Whether `id` was accepted recently.
    package func contains(_ id: String) -> Bool { members.contains(id) }

    /// Remembers `id`, forgetting the oldest when ``capacity`` are held; returns `false` if it was
    /// remembered already.
    @discardableResult
    package mutating func insert(_ id: String) -> Bool {
        guard members.insert(id).inserted else { return false }
        if order.count < Self.capacity {
            order.append(id)
        } else {
            members.remove(order[oldest])
            order[oldest] = id
            oldest = (oldest + 1) % Self.capacity
        }
        return true
    }
}
