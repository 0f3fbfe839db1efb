import BrokerLink
import FoundationEssentials

/// The pushes lifecycled holds for apps, persisted in `push-queue.json` in its state directory:
/// what arrived from the broker and was not yet delivered, and the ids of the last ones delivered.
///
/// A push is added (and written) before the broker gets its PUBACK, so neither a crash nor a
/// restart loses it; its id stays among ``delivered`` after delivery, so the broker's QoS 1
/// redelivery of a push whose PUBACK never left is recognised and dropped.
struct PushQueue: Codable, Equatable {
    /// The most pushes held for one registration; the oldest beyond it is dropped (and logged).
    static let maximumPerRegistration = 200
    /// The most pushes held in all.
    static let maximumPending = 2000
    /// How many delivered ids are remembered.
    static let rememberedDeliveries = 1024

    /// Undelivered pushes, oldest first.
    private(set) var pending: [PushEnvelope] = []
    /// Ids of the last pushes delivered (or dropped), oldest first.
    private(set) var delivered: [String] = []

    /// What ``add(_:)`` did.
    enum Addition: Equatable {
        case added
        /// The same id is pending or was delivered: a redelivery.
        case duplicate
        /// It replaced an undelivered push with the same RFC 8030 `Topic`.
        case replaced(String)
        /// It was added, and the oldest push of its registration (this id) was dropped to make room.
        case overflowed(String)
    }

    mutating func add(_ push: PushEnvelope) -> Addition {
        if pending.contains(where: { $0.id == push.id }) || delivered.contains(push.id) { return .duplicate }
        if let topic = push.topic,
            let index = pending.firstIndex(where: { $0.token == push.token && $0.topic == topic })
        {
            let old = pending[index].id
            pending[index] = push
            remember(old)
            return .replaced(old)
        }
        pending.append(push)
        let mine = pending.indices.filter { pending[$0].token == push.token }
        if mine.count > Self.maximumPerRegistration || pending.count > Self.maximumPending {
            let index = mine.count > Self.maximumPerRegistration ? mine[0] : 0
            let dropped = pending.remove(at: index).id
            remember(dropped)
            return .overflowed(dropped)
        }
        return .added
    }

    /// The oldest push for a registration.
    func next(for token: String) -> PushEnvelope? { pending.first { $0.token == token } }

    /// The oldest push for a registration that `allowed` lets through.
    func next(for token: String, where allowed: (PushEnvelope) -> Bool) -> PushEnvelope? {
        pending.first { $0.token == token && allowed($0) }
    }

    /// The registrations with pushes waiting, in the order of their oldest push.
    var waitingTokens: [String] {
        var seen = Set<String>()
        return pending.compactMap { seen.insert($0.token).inserted ? $0.token : nil }
    }

    /// Removes a delivered (or dropped) push and remembers its id.
    mutating func complete(_ id: String) {
        pending.removeAll { $0.id == id }
        remember(id)
    }

    /// Drops every push of a registration that went away.
    mutating func drop(token: String) {
        for push in pending where push.token == token { remember(push.id) }
        pending.removeAll { $0.token == token }
    }

    /// How long past its TTL a push is still delivered: a TTL of 0 ("now or never", pywebpush's
    /// default) gets this long to reach a running app, and a few seconds of clock skew between
    /// the gateway and the device do not drop pushes.
    static let expiryGraceMilliseconds: Int64 = 5000

    /// Drops the pushes whose TTL (plus ``expiryGraceMilliseconds``) ran out; returns them.
    mutating func dropExpired(nowMilliseconds: Int64) -> [PushEnvelope] {
        let expired = pending.filter { $0.expiresAt < nowMilliseconds - Self.expiryGraceMilliseconds }
        for push in expired { complete(push.id) }
        return expired
    }

    private mutating func remember(_ id: String) {
        delivered.append(id)
        if delivered.count > Self.rememberedDeliveries {
            delivered.removeFirst(delivered.count - Self.rememberedDeliveries)
        }
    }
}
