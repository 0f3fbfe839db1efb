import SystemdBus

/// The one timer of a host's fetch scheduler (lifecycled's, `SystemdHost`'s): armed on the event
/// loop's `CLOCK_REALTIME` at the scheduler's next wake-up, so a clock set or a suspend of the
/// machine is followed; each arming replaces the last, and a wake-up from an arming that was
/// replaced or disarmed meanwhile is dropped.
@MainActor
package final class FetchTimer {
    private var token: EventSourceToken?
    /// Which arming is current; an older one's timer and wake-up are ignored.
    private var generation = 0

    /// No timer yet.
    package nonisolated init() {}

    /// Arms the timer at `wake` (replacing any), or only disarms it when there is nothing to wake for.
    ///
    /// - Parameters:
    ///   - wake: The scheduler's next wake-up, in Unix seconds on `clock`; `nil`: none.
    ///   - clock: The fetch clock (its test offset is taken off for the loop).
    ///   - loop: The loop to arm on; `nil`: none (the host is not running).
    ///   - fire: What runs on the main actor when it fires.
    package func arm(
        at wake: Double?, clock: FetchClock, on loop: EventLoop?, fire: @escaping @MainActor () async -> Void
    ) {
        disarm()
        guard let wake, let loop else { return }
        let deadline = clock.loopDeadlineMicroseconds(for: wake)
        let generation = generation
        Task { @MainActor [weak self] in
            guard let self, self.generation == generation else { return }
            let token = try? await loop.addTimer(
                on: .realtime, deadline: .microseconds(deadline), leeway: .seconds(1)
            ) { [weak self] _ in
                Task { @MainActor in
                    guard let self, self.generation == generation else { return }
                    await fire()
                }
            }
            if self.generation == generation { self.token = token } else { token?.cancel() }
        }
    }

    /// Cancels the timer; a wake-up already on its way is dropped.
    package func disarm() {
        token?.cancel()
        token = nil
        generation += 1
    }
}
