import BrokerLink
import FleetProtocol
import FoundationEssentials

/// The pushes lifecycled holds for apps, persisted in `push-queue.json` in its state directory:
/// what arrived from the broker and must wait (the app is not running, unreachable, or held back
/// by the urgency rule), the ones being handed to their app, and the ids of the last ones delivered.
///
/// A push that must wait is added (and written) before the broker gets its PUBACK, so neither a
/// crash nor a restart loses it; its id stays among ``delivered`` after delivery, so the broker's
/// QoS 1 redelivery of a push whose PUBACK never left is recognised and dropped. A push handed
/// straight to a running app is never added: its id joins ``delivered`` (``recordDelivered(_:)``)
/// in memory, and reaches the file with the next write of the queue, if any.
///
/// Delivery is at most once across restarts: a push is marked handed over (``markHandedOver(_:)``)
/// and that mark written *before* the connector's `Message` is called. A push still marked when
/// lifecycled starts was on its way when it stopped, and counts as delivered
/// (``settleHandedOver()``): most UnifiedPush connectors do not drop an id they have seen.
///
/// A full queue never drops what was acknowledged: ``add(_:)`` answers ``Addition/full`` and the
/// caller holds the broker's PUBACK until there is room, so the broker keeps the push meanwhile.
/// There is one bound, for all registrations together: MQTT sends PUBACKs in the order the
/// messages came, so one held PUBACK holds back every later one (and the link's writes), whatever
/// registration they are for; a bound per registration would stall the whole device for one app.
struct PushQueue: Codable, Equatable {
    /// The most pushes held in all, by default (2,000 of at most 4 KiB each: ~12 MiB on disk).
    static let defaultCapacity = 2000
    /// The most pushes held in all (not written to the file).
    var capacity = Self.defaultCapacity
    /// How many delivered ids are remembered.
    static let rememberedDeliveries = 1024

    /// Undelivered pushes, oldest first.
    private(set) var pending: [PushEnvelope] = []
    /// Ids of the last pushes delivered (or dropped), oldest first.
    private(set) var delivered: [String] = []
    /// ``delivered`` as a set (not written: rebuilt when read), so that the redelivery check of
    /// every arriving push is not a scan of 1,024 strings (it was the daemon's hottest function in
    /// `lifecycle-bench push`'s throughput run).
    private var deliveredIDs: Set<String> = []
    /// Ids of pending pushes whose `Message` call may have started (absent from files written
    /// before it existed).
    private(set) var handedOver: [String]? = nil

    private enum CodingKeys: String, CodingKey {
        case pending, delivered, handedOver
    }

    /// An empty queue.
    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        pending = try container.decode([PushEnvelope].self, forKey: .pending)
        delivered = try container.decode([String].self, forKey: .delivered)
        handedOver = try container.decodeIfPresent([String].self, forKey: .handedOver)
        deliveredIDs = Set(delivered)
    }

    /// What ``add(_:)`` did.
    enum Addition: Equatable {
        case added
        /// The same id is pending or was delivered: a redelivery.
        case duplicate
        /// It replaced an undelivered push with the same RFC 8030 `Topic`.
        case replaced(String)
        /// It was not added: the queue holds ``capacity`` pushes. The caller keeps it
        /// unacknowledged (the broker keeps it) and adds it when there is room.
        case full
    }

    /// Adds a push that arrived from the broker (see ``Addition``).
    mutating func add(_ push: PushEnvelope) -> Addition {
        if contains(push.id) { return .duplicate }
        // A push already on its way to the app is not replaced: the new one follows it.
        if let topic = push.topic,
            let index = pending.firstIndex(where: {
                $0.token == push.token && $0.topic == topic && !isHandedOver($0.id)
            })
        {
            let old = pending[index].id
            pending[index] = push
            remember(old)
            return .replaced(old)
        }
        guard pending.count < capacity else { return .full }
        pending.append(push)
        return .added
    }

    /// Whether a push with this id is pending or was delivered lately (a redelivery).
    func contains(_ id: String) -> Bool {
        deliveredIDs.contains(id) || pending.contains { $0.id == id }
    }

    /// Remembers a push delivered without being queued (handed straight to a running app), so that
    /// a copy the broker sends again while this lifecycled runs is recognised.
    mutating func recordDelivered(_ id: String) { remember(id) }

    /// Marks a pending push as handed to its app (write the queue before calling `Message`).
    mutating func markHandedOver(_ id: String) {
        guard pending.contains(where: { $0.id == id }), handedOver?.contains(id) != true else { return }
        handedOver = (handedOver ?? []) + [id]
    }

    /// Takes the mark back: the `Message` call got an error answer (the connector refused it, or
    /// its connection was gone), which proves it was not taken.
    mutating func unmarkHandedOver(_ id: String) {
        handedOver?.removeAll { $0 == id }
        if handedOver?.isEmpty == true { handedOver = nil }
    }

    /// Whether a push is marked as handed over.
    func isHandedOver(_ id: String) -> Bool { handedOver?.contains(id) == true }

    /// At start: the pushes that were being handed over when lifecycled stopped count as
    /// delivered (at most once); returns their ids.
    mutating func settleHandedOver() -> [String] {
        let ids = handedOver ?? []
        for id in ids { complete(id) }
        handedOver = nil
        return ids
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
        unmarkHandedOver(id)
        remember(id)
    }

    /// Drops every push of a registration that went away.
    mutating func drop(token: String) {
        for push in pending where push.token == token {
            unmarkHandedOver(push.id)
            remember(push.id)
        }
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
        guard deliveredIDs.insert(id).inserted else { return }
        delivered.append(id)
        if delivered.count > Self.rememberedDeliveries {
            let forgotten = delivered.count - Self.rememberedDeliveries
            for old in delivered.prefix(forgotten) { deliveredIDs.remove(old) }
            delivered.removeFirst(forgotten)
        }
    }
}
