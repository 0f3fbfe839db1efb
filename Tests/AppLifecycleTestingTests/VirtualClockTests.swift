import AppLifecycle
import AppLifecycleTesting
import Synchronization
import Testing

@Suite("VirtualClock: deterministic timers and watchdogs")
@MainActor
struct VirtualClockTests {
    @Test("timers fire in deadline order, ties in scheduling order, only when the clock reaches them")
    func deadlineOrder() {
        let clock = VirtualClock()
        var fired: [String] = []
        _ = clock.schedule(after: .seconds(3)) { fired.append("c@3") }
        _ = clock.schedule(after: .seconds(1)) { fired.append("a@1") }
        _ = clock.schedule(after: .seconds(1)) { fired.append("b@1") }
        _ = clock.schedule(after: .seconds(-5)) { fired.append("now") }
        #expect(clock.nextDeadline == .zero)
        #expect(clock.pendingTimerCount == 4)

        clock.advance(by: .milliseconds(999))
        #expect(fired == ["now"])
        #expect(clock.now == .milliseconds(999))
        clock.advance(by: .milliseconds(1))
        #expect(fired == ["now", "a@1", "b@1"])
        clock.advance(by: .seconds(10))
        #expect(fired == ["now", "a@1", "b@1", "c@3"])
        #expect(clock.now == .seconds(11))
        #expect(clock.nextDeadline == nil)
        #expect(clock.pendingTimerCount == 0)
    }

    @Test("each action sees the clock at its own deadline; the past and negative advances do nothing")
    func nowDuringFiring() {
        let clock = VirtualClock()
        var seen: [Duration] = []
        _ = clock.schedule(after: .seconds(2)) { seen.append(clock.now) }
        _ = clock.schedule(after: .seconds(5)) { seen.append(clock.now) }
        clock.advance(by: .seconds(7))
        #expect(seen == [.seconds(2), .seconds(5)])
        clock.advance(to: .seconds(1))
        clock.advance(by: .seconds(-3))
        #expect(clock.now == .seconds(7))
    }

    @Test("a cancelled timer never fires; cancelling after it fired is harmless")
    func cancellation() {
        let clock = VirtualClock()
        var fired: [String] = []
        let cancelled = clock.schedule(after: .seconds(1)) { fired.append("cancelled") }
        let kept = clock.schedule(after: .seconds(2)) { fired.append("kept") }
        cancelled.cancel()
        #expect(clock.pendingTimerCount == 1)
        #expect(clock.nextDeadline == .seconds(2))
        clock.runUntilIdle()
        kept.cancel()
        #expect(fired == ["kept"])
    }

    @Test("timers scheduled while firing fire in the same advance when due before its end")
    func chainedTimers() {
        let clock = VirtualClock()
        var fired: [Duration] = []
        func chain() {
            fired.append(clock.now)
            if clock.now < .seconds(5) { _ = clock.schedule(after: .seconds(1)) { chain() } }
        }
        _ = clock.schedule(after: .seconds(1)) { chain() }
        clock.advance(by: .milliseconds(3500))
        #expect(fired == [.seconds(1), .seconds(2), .seconds(3)])
        #expect(clock.nextDeadline == .seconds(4))
        // Drain the chain: the pending timer's closure refers to the clock (a cycle until it fires).
        clock.runUntilIdle()
        #expect(fired.last == .seconds(5))
    }

    @Test("a watchdog fires while an action is still running, as a real watchdog thread would")
    func watchdogDuringSlowCallback() {
        let clock = VirtualClock()
        var events: [String] = []
        let expired = ExpiryFlag()
        _ = clock.watchdog(after: .seconds(5)) { expired.set() }
        _ = clock.schedule(after: .seconds(1)) {
            events.append("slow callback starts")
            clock.advance(by: .seconds(10))  // the callback takes 10 s
            events.append("slow callback ends, watchdog expired: \(expired.isSet)")
        }
        clock.advance(by: .seconds(1))
        #expect(events == ["slow callback starts", "slow callback ends, watchdog expired: true"])
        #expect(clock.now == .seconds(11))
    }

    @Test("runUntilIdle fires everything, moving the clock to the last deadline")
    func runUntilIdle() {
        let clock = VirtualClock()
        var count = 0
        for seconds in [30, 10, 20] { _ = clock.schedule(after: .seconds(seconds)) { count += 1 } }
        clock.runUntilIdle()
        #expect(count == 3)
        #expect(clock.now == .seconds(30))
    }
}

/// A flag a `@Sendable` watchdog can set.
final class ExpiryFlag: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}
