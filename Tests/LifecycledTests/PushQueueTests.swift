import BrokerLink
import Foundation
import Testing

@testable import LifecycleDaemon

@Suite("The push queue: once each, topics replace, bounded, expiry with grace")
struct PushQueueTests {
    static func push(
        _ token: String = "token-aaaaaaaaaaaaaaaaaaaa", id: String = UUID().uuidString.lowercased(), ttl: Int = 60,
        topic: String? = nil, received: Int64 = 1_000_000
    ) throws -> PushEnvelope {
        try PushEnvelope(id: id, token: token, ttl: ttl, topic: topic, received: received, body: [1, 2, 3])
    }

    @Test func aRedeliveredIdIsADuplicateWhetherPendingOrDelivered() throws {
        var queue = PushQueue()
        let first = try Self.push()
        #expect(queue.add(first) == .added)
        #expect(queue.add(first) == .duplicate)
        queue.complete(first.id)
        #expect(queue.pending.isEmpty)
        #expect(queue.add(first) == .duplicate, "a push delivered already came again")
        #expect(queue.delivered == [first.id])
    }

    @Test func aTopicReplacesTheUndeliveredPushOfTheSameRegistrationOnly() throws {
        var queue = PushQueue()
        let old = try Self.push(topic: "score")
        let other = try Self.push("token-bbbbbbbbbbbbbbbbbbbb", topic: "score")
        #expect(queue.add(old) == .added)
        #expect(queue.add(other) == .added)
        let new = try Self.push(topic: "score")
        #expect(queue.add(new) == .replaced(old.id))
        #expect(queue.pending.map(\.id) == [new.id, other.id])
        #expect(queue.add(old) == .duplicate, "the replaced push must not come back")
    }

    @Test func aRegistrationHoldsAtMostItsBoundTheOldestGoes() throws {
        var queue = PushQueue()
        var ids: [String] = []
        for _ in 0..<PushQueue.maximumPerRegistration {
            let push = try Self.push()
            ids.append(push.id)
            #expect(queue.add(push) == .added)
        }
        let extra = try Self.push()
        #expect(queue.add(extra) == .overflowed(ids[0]))
        #expect(queue.pending.count == PushQueue.maximumPerRegistration)
        #expect(queue.next(for: "token-aaaaaaaaaaaaaaaaaaaa")?.id == ids[1])
        #expect(queue.waitingTokens == ["token-aaaaaaaaaaaaaaaaaaaa"])
    }

    @Test func expiryCountsTheTTLPlusAGraceSoTTLZeroReachesARunningApp() throws {
        var queue = PushQueue()
        let now: Int64 = 10_000_000
        let zero = try Self.push(ttl: 0, received: now)
        let minute = try Self.push(ttl: 60, received: now)
        _ = queue.add(zero)
        _ = queue.add(minute)
        #expect(queue.dropExpired(nowMilliseconds: now + 1000).isEmpty, "TTL 0 gets the grace")
        #expect(queue.dropExpired(nowMilliseconds: now + PushQueue.expiryGraceMilliseconds + 1).map(\.id) == [zero.id])
        #expect(
            queue.dropExpired(nowMilliseconds: now + 60_000 + PushQueue.expiryGraceMilliseconds + 1).map(\.id) == [
                minute.id
            ])
        #expect(queue.pending.isEmpty)
        #expect(queue.add(zero) == .duplicate, "an expired push that comes again stays dropped")
    }

    @Test func theRememberedIdsAreBounded() throws {
        var queue = PushQueue()
        for _ in 0..<(PushQueue.rememberedDeliveries + 10) {
            let push = try Self.push()
            _ = queue.add(push)
            queue.complete(push.id)
        }
        #expect(queue.delivered.count == PushQueue.rememberedDeliveries)
    }

    @Test func aFarFutureReceivedTimeIsRefusedAndExpiryNeverOverflows() throws {
        #expect(throws: (any Error).self) { try Self.push(received: .max - 5) }
        let latest = try Self.push(ttl: PushEnvelope.maximumTTL, received: PushEnvelope.latestReceived)
        #expect(latest.expiresAt > latest.received)
    }
}
