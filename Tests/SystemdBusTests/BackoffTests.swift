import SystemdBus
import SystemdBusTesting
import Testing

@Suite("The one retry rule")
struct BackoffTests {
    @Test func delaysDoubleUpToTheMaximumAndAResetStartsOver() {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(3))
        #expect(backoff.current == nil)
        #expect(
            (0..<5).map { _ in backoff.next() } == [
                .milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3),
            ])
        #expect(backoff.current == .seconds(3))
        backoff.reset()
        #expect(backoff.current == nil)
        #expect(backoff.next() == .milliseconds(500))
    }

    @Test func jitterCutsEachDelayByAtMostItsShareAndNeverBelowTheInitialDelay() {
        var generator = SeededGenerator(state: 17)
        var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1), jitter: 0.5)
        var cut = 0
        for _ in 0..<50 {
            backoff.reset()
            // The first delay could only be cut below the initial one: it is the initial one.
            #expect(backoff.next(using: &generator) == .milliseconds(100))
            // The doubling follows the delays before jitter; each is cut to half of it at most.
            for full in [Duration.milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)] {
                let delay = backoff.next(using: &generator)
                #expect(delay <= full && delay >= full / 2, "\(delay) for \(full)")
                #expect(backoff.current == full)
                if delay < full { cut += 1 }
            }
        }
        #expect(cut > 200, "only \(cut) of 250 delays were jittered")
    }

    @Test func withoutJitterTheDelaysAreExact() {
        var generator = SeededGenerator(state: 17)
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(4))
        #expect(
            (0..<4).map { _ in backoff.next(using: &generator) } == [
                .seconds(1), .seconds(2), .seconds(4), .seconds(4),
            ])
        #expect((0..<4).map { _ in backoff.next() } == [.seconds(4), .seconds(4), .seconds(4), .seconds(4)])
    }
}
