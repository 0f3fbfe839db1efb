import Testing

@testable import LifecycleDaemon

@Suite("Memory-pressure plan")
struct MemoryPressurePlanTests {
    @Test func suspendedAppsAreEndedLargestFirstThenRunningOnesAreWarned() {
        let plan = MemoryPressurePlan(apps: [
            .init(id: "a.small-suspended", state: .suspended, residentBytes: 10),
            .init(id: "a.active", state: .active, residentBytes: 500),
            .init(id: "a.big-suspended", state: .suspended, residentBytes: 900),
            .init(id: "a.background", state: .background, residentBytes: 800),
            .init(id: "a.not-running", state: .notRunning, residentBytes: 0),
            .init(id: "a.inactive", state: .inactive, residentBytes: 500),
            .init(id: "a.mid-suspended", state: .suspended, residentBytes: 300),
        ])
        #expect(plan.terminate == ["a.big-suspended", "a.mid-suspended", "a.small-suspended"])
        #expect(plan.warn == ["a.background", "a.active", "a.inactive"])
    }

    @Test func noSuspendedAppsMeansOnlyWarnings() {
        let plan = MemoryPressurePlan(apps: [.init(id: "a.x", state: .background, residentBytes: 1)])
        #expect(plan.terminate.isEmpty)
        #expect(plan.warn == ["a.x"])
    }
}
