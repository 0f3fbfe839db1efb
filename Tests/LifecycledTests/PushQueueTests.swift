import BrokerLink
import FleetProtocol
import Foundation
import SystemdBus
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

    /// Nothing acknowledged is dropped to make room: a full queue refuses the next push (its
    /// PUBACK is held, the broker keeps it) and takes it once one was delivered. The bound is the
    /// queue's, not a registration's: one app's many pushes do not hold back another's.
    @Test func aFullQueueRefusesTheNextPushAndKeepsEveryOneItHolds() throws {
        var queue = PushQueue()
        queue.capacity = 300
        var ids: [String] = []
        for _ in 0..<250 {
            let push = try Self.push()
            ids.append(push.id)
            #expect(queue.add(push) == .added, "a registration may hold more than 200")
        }
        for _ in 0..<50 { #expect(queue.add(try Self.push("token-bbbbbbbbbbbbbbbbbbbb")) == .added) }
        let extra = try Self.push()
        #expect(queue.add(extra) == .full)
        #expect(queue.add(try Self.push("token-cccccccccccccccccccc")) == .full, "the bound is the queue's")
        #expect(queue.pending.filter { $0.token == extra.token }.map(\.id) == ids, "a push already held was dropped")
        queue.complete(ids[0])
        #expect(queue.add(extra) == .added)
        #expect(queue.pending.filter { $0.token == extra.token }.map(\.id) == Array(ids.dropFirst()) + [extra.id])
        // The capacity is a setting, not part of the file.
        let read = try JSONDecoder().decode(PushQueue.self, from: JSONEncoder().encode(queue))
        #expect(read.capacity == PushQueue.defaultCapacity && read.pending == queue.pending)
    }

    /// At most once across restarts: a push marked handed over (written before `Message`) is
    /// delivered, not sent again, when the queue is read back.
    @Test func aPushHandedOverBeforeAStopIsNotDeliveredAgain() throws {
        var queue = PushQueue()
        let first = try Self.push()
        let second = try Self.push()
        _ = queue.add(first)
        _ = queue.add(second)
        queue.markHandedOver(first.id)
        var read = try JSONDecoder().decode(PushQueue.self, from: JSONEncoder().encode(queue))
        #expect(read.settleHandedOver() == [first.id])
        #expect(read.pending.map(\.id) == [second.id])
        #expect(read.add(first) == .duplicate, "the broker's redelivery of it is dropped too")
        // A failed call takes the mark back: that push is tried again.
        queue.unmarkHandedOver(first.id)
        read = try JSONDecoder().decode(PushQueue.self, from: JSONEncoder().encode(queue))
        #expect(read.settleHandedOver().isEmpty)
        #expect(read.pending.map(\.id) == [first.id, second.id])
        // A file written before the mark existed still reads.
        let old = try JSONDecoder().decode(PushQueue.self, from: Data(#"{"pending":[],"delivered":["x"]}"#.utf8))
        #expect(old.delivered == ["x"])
    }

    /// At most once within a run too: a `Message` that timed out or was cut off may have reached
    /// the connector, so it counts as delivered; an error answer proves it was not taken.
    @Test @MainActor func onlyAnErrorAnswerProvesAPushWasNotTaken() {
        for name in [BusError.Name.noReply, BusError.Name.disconnected, "org.freedesktop.DBus.Error.Timeout"] {
            #expect(PushDistributor.mayHaveReachedTheApp(BusError(name: name, message: "")), "\(name)")
        }
        for name in [
            BusError.Name.serviceUnknown, BusError.Name.nameHasNoOwner, BusError.Name.accessDenied,
            BusError.Name.unknownMethod, BusError.Name.failed, "org.example.Connector.Error.Busy",
        ] {
            #expect(!PushDistributor.mayHaveReachedTheApp(BusError(name: name, message: "")), "\(name)")
        }
    }

    /// A push on its way to the app is not replaced by a newer one of the same topic: both go.
    @Test func aTopicDoesNotReplaceAPushBeingHandedOver() throws {
        var queue = PushQueue()
        let old = try Self.push(topic: "score")
        _ = queue.add(old)
        queue.markHandedOver(old.id)
        let new = try Self.push(topic: "score")
        #expect(queue.add(new) == .added)
        #expect(queue.pending.map(\.id) == [old.id, new.id])
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
