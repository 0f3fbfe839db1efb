import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

/// Each callback against its notification: "after calling this method, the app posts …" means
/// delegate first; "shortly before" and "prior to calling" mean notification first.
@MainActor
@Suite("Delegate call against its notification")
struct CallbackOrderTests {
    func launched() -> Harness {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.recorder.clear()
        return harness
    }

    @Test("didBecomeActive, then UIApplicationDidBecomeActiveNotification")
    func didBecomeActive() throws {
        let harness = launched()
        harness.host.send(.locked(true))
        harness.host.send(.locked(false))
        try harness.recorder.verifyConsecutive(["applicationDidBecomeActive(_:)", Application.names.didBecomeActive])
    }

    @Test("willResignActive, then UIApplicationWillResignActiveNotification")
    func willResignActive() throws {
        let harness = launched()
        harness.host.send(.foreground(false))
        try harness.recorder.verifyConsecutive(["applicationWillResignActive(_:)", Application.names.willResignActive])
    }

    @Test("didEnterBackground, then UIApplicationDidEnterBackgroundNotification")
    func didEnterBackground() throws {
        let harness = launched()
        harness.host.send(.foreground(false))
        try harness.recorder.verifyConsecutive([
            "applicationDidEnterBackground(_:)", Application.names.didEnterBackground,
        ])
    }

    @Test("UIApplicationWillEnterForegroundNotification shortly before willEnterForeground")
    func willEnterForeground() throws {
        let harness = launched()
        harness.host.send(.foreground(false))
        harness.host.send(.foreground(true))
        try harness.recorder.verifyConsecutive([
            Application.names.willEnterForeground, "applicationWillEnterForeground(_:)",
        ])
        try harness.recorder.verifyOrder(["applicationWillEnterForeground(_:)", "applicationDidBecomeActive(_:)"])
    }

    @Test("willTerminate, then UIApplicationWillTerminateNotification")
    func willTerminate() throws {
        let harness = launched()
        harness.host.send(.terminate(.hostRequest))
        try harness.recorder.verifyConsecutive(["applicationWillTerminate(_:)", Application.names.willTerminate])
        #expect(harness.app.applicationState == .notRunning)
        #expect(harness.host.didTerminate)
    }

    @Test("didReceiveMemoryWarning, then the notification with the level")
    func memoryWarning() throws {
        let harness = launched()
        harness.host.send(.memoryWarning(MemoryWarning(level: .critical, source: "psi")))
        try harness.recorder.verifyConsecutive([
            "applicationDidReceiveMemoryWarning(_:)", Application.names.memoryWarning,
        ])
        let posted = try #require(harness.recorder.entries(named: Application.names.memoryWarning).first)
        #expect(posted.userInfo[ApplicationUserInfoKey.memoryWarningLevel] == "critical")
        #expect(posted.userInfo[ApplicationUserInfoKey.memoryWarningSource] == "psi")
    }

    @Test("UIApplicationSignificantTimeChangeNotification prior to significantTimeChange")
    func significantTimeChange() throws {
        let harness = launched()
        harness.host.send(.significantTimeChange(SignificantTimeChange(reason: .midnight)))
        try harness.recorder.verifyConsecutive([Application.names.timeChange, "applicationSignificantTimeChange(_:)"])
        #expect(
            harness.recorder.entries.first?.userInfo[ApplicationUserInfoKey.significantTimeChangeReason] == "midnight")
    }

    @Test("lock: protected data will become unavailable, then resign active; unlock: the reverse")
    func lockAndUnlock() throws {
        let harness = launched()
        harness.host.send(.locked(true))
        try harness.recorder.verifyConsecutive([
            "applicationProtectedDataWillBecomeUnavailable(_:)", Application.names.protectedUnavailable,
            "applicationWillResignActive(_:)", Application.names.willResignActive,
        ])
        #expect(harness.app.applicationState == .inactive)
        harness.recorder.clear()
        harness.host.send(.locked(false))
        try harness.recorder.verifyConsecutive([
            "applicationProtectedDataDidBecomeAvailable(_:)", Application.names.protectedAvailable,
            "applicationDidBecomeActive(_:)", Application.names.didBecomeActive,
        ])
    }

    @Test("a lock reported twice (signal and hint) is delivered once")
    func lockDeduplicated() {
        let harness = launched()
        harness.host.send(.locked(true))
        harness.host.send(.locked(true))
        harness.host.send(.locked(false))
        harness.host.send(.locked(false))
        #expect(harness.recorder.count(of: "applicationWillResignActive(_:)") == 1)
        #expect(harness.recorder.count(of: "applicationDidBecomeActive(_:)") == 1)
        #expect(harness.recorder.count(of: "applicationProtectedDataWillBecomeUnavailable(_:)") == 1)
    }

    @Test("status bar: will-change then did-change, each delegate first, carrying new then old values")
    func statusBar() throws {
        let harness = launched()
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        try harness.recorder.verifyConsecutive([
            "application(_:willChangeStatusBarOrientation:duration:)",
            "UIApplicationWillChangeStatusBarOrientationNotification",
            "application(_:didChangeStatusBarOrientation:)", "UIApplicationDidChangeStatusBarOrientationNotification",
        ])
        #expect(
            harness.recorder.entries(named: "UIApplicationWillChangeStatusBarOrientationNotification").first?.userInfo[
                ApplicationUserInfoKey.statusBarOrientation] == .int(4))
        #expect(
            harness.recorder.entries(named: "UIApplicationDidChangeStatusBarOrientationNotification").first?.userInfo[
                ApplicationUserInfoKey.statusBarOrientation] == .int(1))
        let frame = Rect(x: 0, y: 0, width: 1920, height: 32)
        harness.host.send(.statusBarFrame(frame))
        try harness.recorder.verifyConsecutive([
            "application(_:willChangeStatusBarFrame:)", "UIApplicationWillChangeStatusBarFrameNotification",
            "application(_:didChangeStatusBarFrame:)", "UIApplicationDidChangeStatusBarFrameNotification",
        ])
        #expect(harness.app.statusBarFrame == frame)
    }

    @Test("session switch: background then foreground")
    func sessionSwitch() throws {
        let harness = launched()
        harness.host.send(.sessionActive(false))
        #expect(harness.app.applicationState == .suspended)
        harness.host.send(.sessionActive(true))
        try harness.recorder.verifyOrder([
            "applicationWillResignActive(_:)", "applicationDidEnterBackground(_:)",
            Application.names.willEnterForeground, "applicationWillEnterForeground(_:)",
            "applicationDidBecomeActive(_:)",
        ])
        #expect(harness.app.applicationState == .active)
    }

    @Test("window focus: another app's window takes it (inactive), it comes back (active); no background on the way")
    func focusMovesBetweenActiveAndInactive() throws {
        let harness = launched()
        harness.host.send(.focused(false))
        #expect(harness.app.applicationState == .inactive)
        harness.host.send(.focused(true))
        #expect(harness.app.applicationState == .active)
        try harness.recorder.verifyConsecutive([
            "applicationWillResignActive(_:)", "UIApplicationWillResignActiveNotification",
            "applicationDidBecomeActive(_:)", "UIApplicationDidBecomeActiveNotification",
        ])
        // Unfocused while in the background, then brought to the foreground: inactive, not active.
        harness.host.send(.foreground(false))
        harness.host.send(.focused(false))
        harness.host.send(.foreground(true))
        #expect(harness.app.applicationState == .inactive)
        harness.host.send(.focused(true))
        #expect(harness.app.applicationState == .active)
    }

    @Test("every state change the host saw is a legal transition")
    func onlyLegalTransitions() {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.run(VirtualHost.scriptedDay)
        #expect(!harness.host.stateChanges.isEmpty)
        for change in harness.host.stateChanges {
            #expect(change.from.canTransition(to: change.to), "\(change.from) → \(change.to)")
        }
        #expect(harness.host.stateChanges.last?.to == .notRunning)
    }

    @Test("the transition table: exactly the documented pairs are legal")
    func transitionTable() {
        let legal = Set(ApplicationState.legalTransitions.map { "\($0.from)→\($0.to)" })
        #expect(
            legal == [
                "not-running→inactive", "inactive→active", "active→inactive", "inactive→background",
                "background→inactive",
                "background→suspended", "suspended→background", "inactive→not-running", "background→not-running",
                "suspended→not-running",
            ])
        #expect(!ApplicationState.active.canTransition(to: .background))
        #expect(!ApplicationState.suspended.canTransition(to: .active))
    }
}
