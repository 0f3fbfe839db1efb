import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

/// Implements two callbacks; the first posts a notification of its own from inside.
@MainActor
private final class PostingDelegate: ApplicationDelegate {
    func application(_ application: Application, didFinishLaunchingWithOptions launchOptions: LaunchOptions?) -> Bool {
        application.notificationCenter.post(
            name: LifecycleNotification.Name("Inside"), object: application, userInfo: ["k": .int(1)])
        return true
    }

    func applicationDidBecomeActive(_ application: Application) {}
}

@MainActor
private final class NothingDelegate: ApplicationDelegate {}

@Suite("LifecycleRecorder: what it records and how it verifies")
@MainActor
struct LifecycleRecorderTests {
    private func launched(_ delegate: any ApplicationDelegate, recordingStateChanges: Bool = false) -> (
        Application, LifecycleRecorder
    ) {
        let app = Application(
            delegate: delegate, host: VirtualHost(), notificationCenter: LifecycleNotificationCenter(),
            configuration: .init(isStateRestorationEnabled: false))
        let recorder = LifecycleRecorder(application: app)
        recorder.recordsStateChanges = recordingStateChanges
        app.launch(options: LaunchOptions())
        return (app, recorder)
    }

    @Test("implemented callbacks only; a call that posts is recorded before what it posts, once")
    func implementedCallsInRealOrder() {
        let (_, recorder) = launched(PostingDelegate())
        #expect(
            recorder.delegateCalls == [
                "application(_:didFinishLaunchingWithOptions:)", "applicationDidBecomeActive(_:)",
            ])
        #expect(recorder.count(of: "application(_:didFinishLaunchingWithOptions:)") == 1)
        #expect(throws: Never.self) {
            try recorder.verifyConsecutive(["application(_:didFinishLaunchingWithOptions:)", "Inside"])
        }
        #expect(recorder.entries(named: "Inside").first?.userInfo == ["k": .int(1)])
        #expect(recorder.entries(named: "applicationDidBecomeActive(_:)").first?.state == .active)

        let (_, silent) = launched(NothingDelegate())
        #expect(silent.delegateCalls.isEmpty)
        #expect(silent.notificationNames.contains("UIApplicationDidBecomeActiveNotification"))
    }

    @Test("state-change notifications only when asked for")
    func stateChanges() {
        let (_, quiet) = launched(NothingDelegate())
        let (_, verbose) = launched(NothingDelegate(), recordingStateChanges: true)
        let stateChange = Application.stateDidChangeNotification.rawValue
        #expect(quiet.count(of: stateChange) == 0)
        #expect(verbose.count(of: stateChange) > 0)
    }

    @Test("verifyOrder allows gaps, verifyConsecutive does not, verifyAbsent rejects any; failures carry the timeline")
    func verification() {
        let (_, recorder) = launched(PostingDelegate())
        let launch = "application(_:didFinishLaunchingWithOptions:)"
        let active = "applicationDidBecomeActive(_:)"
        #expect(throws: Never.self) { try recorder.verifyOrder([launch, active]) }
        #expect(throws: Never.self) { try recorder.verifyOrder([]) }
        #expect(throws: Never.self) { try recorder.verifyAbsent("applicationWillTerminate(_:)") }

        let reversed = #expect(throws: LifecycleRecorder.OrderError.self) {
            try recorder.verifyOrder([active, launch])
        }
        #expect(reversed?.description.contains(recorder.timeline) == true)
        #expect(reversed?.code == .outOfOrder)
        let split = #expect(throws: LifecycleRecorder.OrderError.self) {
            try recorder.verifyConsecutive([launch, active])
        }
        #expect(split?.code == .notConsecutive)
        let present = #expect(throws: LifecycleRecorder.OrderError.self) { try recorder.verifyAbsent(active) }
        #expect(present?.code == .recorded)
        #expect(throws: LifecycleRecorder.OrderError.self) { try recorder.verifyOrder(["never"]) }

        recorder.clear()
        #expect(recorder.entries.isEmpty)
        #expect(throws: LifecycleRecorder.OrderError.self) { try recorder.verifyConsecutive([launch]) }
    }
}
