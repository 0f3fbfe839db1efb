import SystemdBus
import Testing

@Suite("Duration.saturatingMicroseconds: the one conversion to sd-event's and sd_notify's unit")
struct DurationMicrosecondsTests {
    @Test func negativeDurationsAreZeroAndHugeOnesSaturateWithoutTrapping() {
        #expect(Duration.milliseconds(-500).saturatingMicroseconds == 0)
        #expect(Duration.seconds(-3).saturatingMicroseconds == 0)
        #expect(Duration.seconds(Int64.max).saturatingMicroseconds == UInt64.max)
        #expect(Duration.milliseconds(1500).saturatingMicroseconds == 1_500_000)
        #expect((Duration.seconds(2) + .nanoseconds(999)).saturatingMicroseconds == 2_000_000)
    }
}
