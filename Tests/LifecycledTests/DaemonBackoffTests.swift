import SystemdBus
import Testing

@testable import LifecycleDaemon

@Suite("The daemon's retry delays")
struct DaemonBackoffTests {
    @Test func stateWritesRetryUpToThirtySecondsAndDeliveriesUpToAMinute() {
        var write = Backoff.stateWrite
        #expect(write.next() == .seconds(1))
        #expect((0..<7).map { _ in write.next() }.last == .seconds(30))
        var delivery = Backoff.delivery
        #expect(delivery.next() == .seconds(1))
        #expect((0..<7).map { _ in delivery.next() }.last == .seconds(60))
    }
}
