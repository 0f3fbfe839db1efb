import Testing

@testable import LifecycleDaemon

@Suite("The daemon's retry rule")
struct BackoffTests {
    @Test func delaysDoubleUpToTheMaximumAndAResetStartsOver() {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(3))
        #expect(
            (0..<5).map { _ in backoff.next() } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3),
            ])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(500))
        var write = Backoff.stateWrite
        #expect((0..<7).map { _ in write.next() }.last == .seconds(30))
    }
}
