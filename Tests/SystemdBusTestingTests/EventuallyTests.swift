import SystemdBusTesting
import Testing

private struct Unreachable: Error {}

@Suite("eventually: tries until the fact holds, gives up at the hang guard, passes errors on")
struct EventuallyTests {
    @Test func returnsTrueOnTheTryWhereTheFactFirstHolds() async {
        var tries = 0
        // A generous guard: what is tested is the try it stops on, and a starved machine can
        // stretch three 1 ms pauses past the default 10 s.
        let settled = await eventually(hangGuard: .seconds(120), pause: .milliseconds(1)) {
            tries += 1
            return tries == 4
        }
        #expect(settled)
        #expect(tries == 4)
    }

    @Test func returnsFalseOnceTheHangGuardHasPassedAndStopsTrying() async {
        var tries = 0
        let settled = await eventually(hangGuard: .milliseconds(30), pause: .milliseconds(5)) {
            tries += 1
            return false
        }
        #expect(!settled)
        #expect(tries >= 2)
        let after = tries
        try? await Task.sleep(for: .milliseconds(20))
        #expect(tries == after)
    }

    @Test func anErrorFromTheConditionEndsTheWait() async {
        var tries = 0
        await #expect(throws: Unreachable.self) {
            _ = try await eventually(pause: .milliseconds(1)) {
                tries += 1
                if tries == 2 { throw Unreachable() }
                return false
            }
        }
        #expect(tries == 2)
    }
}
