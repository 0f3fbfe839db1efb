import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@MainActor
@Suite("Background execution, sleep, time changes, termination")
struct BackgroundExecutionTests {
    @Test("sleep: resign → background → suspended; wake: foreground → active")
    func sleepAndWake() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.sleeping(true))
        #expect(harness.app.applicationState == .suspended)
        harness.host.send(.sleeping(false))
        #expect(harness.app.applicationState == .active)
        try harness.recorder.verifyOrder([
            "applicationWillResignActive(_:)", Application.names.willResignActive,
            "applicationDidEnterBackground(_:)", Application.names.didEnterBackground,
            Application.names.willEnterForeground, "applicationWillEnterForeground(_:)",
            "applicationDidBecomeActive(_:)", Application.names.didBecomeActive,
        ])
        #expect(
            harness.host.stateChanges.suffix(5).map(\.to) == [.background, .suspended, .background, .inactive, .active])
    }

    @Test("a background task keeps the app from suspending until it ends")
    func taskDefersSuspension() {
        let delegate = FullDelegate()
        var task = BackgroundTaskIdentifier.invalid
        delegate.onDidEnterBackground = { app in task = app.beginBackgroundTask(withName: "save") }
        let harness = Harness(delegate)
        harness.launch()
        #expect(harness.app.backgroundTimeRemaining == .greatestFiniteMagnitude)
        harness.host.send(.sleeping(true))
        #expect(harness.app.applicationState == .background)
        #expect(task != .invalid)
        harness.host.advance(by: .seconds(10))
        #expect(abs(harness.app.backgroundTimeRemaining - 20) < 0.001)
        harness.app.endBackgroundTask(task)
        #expect(harness.app.applicationState == .suspended)
        #expect(harness.app.activeBackgroundTasks.isEmpty)
    }

    @Test("background time runs out: expiration handlers in begin order, then forced end, then suspension")
    func expiry() {
        let delegate = FullDelegate()
        var expired: [String] = []
        final class TaskBox { var id = BackgroundTaskIdentifier.invalid }
        delegate.onDidEnterBackground = { app in
            let first = TaskBox()
            first.id = app.beginBackgroundTask(withName: "first") {
                expired.append("first")
                app.endBackgroundTask(first.id)
            }
            _ = app.beginBackgroundTask(withName: "second") { expired.append("second") }  // never ends itself
        }
        let harness = Harness(
            delegate, configuration: .init(backgroundTimeLimit: .seconds(30), isStateRestorationEnabled: false))
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.advance(by: .seconds(29))
        #expect(expired.isEmpty)
        #expect(harness.app.applicationState == .background)
        harness.host.advance(by: .seconds(1))
        #expect(expired == ["first", "second"])
        #expect(harness.app.applicationState == .suspended)
        #expect(harness.app.activeBackgroundTasks.isEmpty)
    }

    @Test("returning to the foreground cancels the expiry; a task begun while suspended is refused")
    func foregroundCancelsExpiry() {
        let delegate = FullDelegate()
        var expiredCount = 0
        delegate.onDidEnterBackground = { app in _ = app.beginBackgroundTask { expiredCount += 1 } }
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.foreground(true))
        harness.host.advance(by: .seconds(120))
        #expect(expiredCount == 0)
        #expect(harness.app.applicationState == .active)

        let idle = Harness(FullDelegate())
        idle.launch()
        idle.host.send(.foreground(false))
        #expect(idle.app.applicationState == .suspended)
        #expect(idle.app.beginBackgroundTask(withName: "late") == .invalid)
    }

    @Test("time changes while suspended coalesce: only the latest is delivered, on return to the foreground")
    func timeChangeCoalescing() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.sleeping(true))
        #expect(harness.app.applicationState == .suspended)
        harness.recorder.clear()
        harness.host.send(.significantTimeChange(SignificantTimeChange(reason: .clockSet)))
        harness.host.send(
            .significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: "Asia/Tokyo")))
        harness.host.send(.significantTimeChange(SignificantTimeChange(reason: .midnight)))
        #expect(harness.recorder.entries.isEmpty)
        harness.host.send(.sleeping(false))
        #expect(harness.recorder.count(of: "applicationSignificantTimeChange(_:)") == 1)
        let delivered = try #require(harness.recorder.entries(named: Application.names.timeChange).first)
        #expect(delivered.userInfo[ApplicationUserInfoKey.significantTimeChangeReason] == "midnight")
        try harness.recorder.verifyOrder([
            "applicationWillEnterForeground(_:)", Application.names.timeChange, "applicationSignificantTimeChange(_:)",
        ])
    }

    @Test("a time change in the (running) background is delivered at once")
    func timeChangeInBackground() {
        let delegate = FullDelegate()
        delegate.onDidEnterBackground = { app in _ = app.beginBackgroundTask(withName: "upload") }
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .background)
        harness.host.send(.significantTimeChange(SignificantTimeChange(reason: .daylightSavingTime)))
        #expect(harness.recorder.count(of: "applicationSignificantTimeChange(_:)") == 1)
    }

    @Test("a memory warning is not delivered to a suspended app")
    func memoryWarningWhileSuspended() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.memoryWarning(MemoryWarning(level: .low, source: "test")))
        try harness.recorder.verifyAbsent("applicationDidReceiveMemoryWarning(_:)")
    }

    @Test("willTerminate within the deadline posts its notification; an overrun is killed before it")
    func terminateDeadline() throws {
        let patient = FullDelegate()
        let harness = Harness(patient)
        harness.launch()
        patient.onWillTerminate = { _ in harness.host.advance(by: .seconds(4)) }
        harness.host.send(.terminate(.signal))
        try harness.recorder.verifyOrder([
            "applicationWillResignActive(_:)", "applicationWillTerminate(_:)", Application.names.willTerminate,
        ])
        #expect(harness.host.overruns.isEmpty)
        #expect(harness.host.terminationDeadline == .seconds(5))

        let slow = FullDelegate()
        let overrun = Harness(slow)
        overrun.launch()
        slow.onWillTerminate = { _ in overrun.host.advance(by: .seconds(6)) }
        overrun.host.send(.terminate(.shutdown))
        #expect(overrun.host.overruns == ["applicationWillTerminate(_:)"])
        try overrun.recorder.verifyAbsent(Application.names.willTerminate)
        #expect(overrun.app.applicationState == .notRunning)
        #expect(overrun.host.didTerminate)
    }

    @Test("didEnterBackground overrunning its five seconds ends the app")
    func enterBackgroundDeadline() throws {
        let slow = FullDelegate()
        let harness = Harness(slow)
        harness.launch()
        slow.onDidEnterBackground = { _ in harness.host.advance(by: .seconds(7)) }
        harness.host.send(.sleeping(true))
        #expect(harness.host.overruns == ["applicationDidEnterBackground(_:)"])
        #expect(harness.app.applicationState == .notRunning)
        try harness.recorder.verifyAbsent(Application.names.didEnterBackground)
    }

    @Test("terminating a suspended app wakes it to the background first; events after termination are ignored")
    func terminateSuspended() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.terminate(.memoryPressure))
        #expect(harness.host.stateChanges.suffix(2).map(\.to) == [.background, .notRunning])
        try harness.recorder.verifyOrder(["applicationWillTerminate(_:)", Application.names.willTerminate])
        harness.recorder.clear()
        harness.host.send(.foreground(true))
        harness.host.send(.memoryWarning(MemoryWarning(level: .critical, source: "test")))
        #expect(harness.recorder.entries.isEmpty)
    }

    @Test("run() returns once the app terminated")
    func runReturns() async {
        let harness = Harness(FullDelegate())
        // Handed over before launch, the request is replayed once the launch finished.
        harness.app.handle(.terminate(.hostRequest))
        await harness.app.run()
        #expect(harness.recorder.count(of: "applicationDidBecomeActive(_:)") == 1)
        #expect(harness.app.applicationState == .notRunning)
    }

    @Test("a background fetch wakes a suspended app and keeps it awake until the handler is called")
    func backgroundFetch() async throws {
        let delegate = FullDelegate()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .suspended)
        harness.host.send(.backgroundFetch)
        #expect(harness.app.applicationState == .background)
        let completion = try #require(delegate.fetchCompletion)
        completion(.newData)
        #expect(harness.app.applicationState == .suspended)
        let posted = try #require(harness.recorder.entries(named: "ApplicationPerformFetchNotification").first)
        #expect(posted.userInfo[ApplicationUserInfoKey.fetchResult] == "newData")
    }

    @Test("a fetch handler not called in time ends the app as the watchdog would: no willTerminate")
    func fetchOverrunEndsTheApp() throws {
        let delegate = FullDelegate()
        let harness = Harness(
            delegate, configuration: .init(completionHandlerDeadline: .seconds(30), isStateRestorationEnabled: false))
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.backgroundFetch)
        harness.host.advance(by: .seconds(29))
        #expect(harness.app.applicationState == .background)
        #expect(harness.host.overruns.isEmpty)
        harness.host.advance(by: .seconds(1))
        #expect(harness.host.overruns == ["application(_:performFetchWithCompletionHandler:)"])
        #expect(harness.app.applicationState == .notRunning)
        #expect(harness.host.didTerminate)
        try harness.recorder.verifyAbsent(Application.names.willTerminate)
        try harness.recorder.verifyAbsent("ApplicationPerformFetchNotification")
        // Calling the handler afterwards changes nothing.
        let late = try #require(delegate.fetchCompletion)
        late(.newData)
        #expect(harness.app.applicationState == .notRunning)
    }

    @Test("a remote-notification fetch handler not called in time ends the app too")
    func remoteNotificationFetchOverrunEndsTheApp() throws {
        let harness = Harness(
            FullDelegate(),
            configuration: .init(completionHandlerDeadline: .seconds(30), isStateRestorationEnabled: false))
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.remoteNotification(["aps": .dictionary(["content-available": .int(1)])]))
        #expect(harness.app.applicationState == .background)
        harness.host.advance(by: .seconds(30))
        #expect(
            harness.host.overruns == ["application(_:didReceiveRemoteNotification:fetchCompletionHandler:)"])
        #expect(harness.app.applicationState == .notRunning)
        try harness.recorder.verifyAbsent(Application.names.willTerminate)
    }

    @Test("other completion handlers (a background URL session's) are only given up at their deadline")
    func otherCompletionDeadline() {
        final class SessionDelegate: ApplicationDelegate {
            var handler: (@Sendable () -> Void)?
            func application(
                _ application: Application, handleEventsForBackgroundURLSession identifier: String,
                completionHandler: @escaping @Sendable () -> Void
            ) { handler = completionHandler }
        }
        let delegate = SessionDelegate()
        // Background time longer than the deadline: the deadline, not background time, gives it up.
        let harness = Harness(
            delegate,
            configuration: .init(
                backgroundTimeLimit: .seconds(180), completionHandlerDeadline: .seconds(30),
                isStateRestorationEnabled: false))
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.backgroundURLSessionEvents(identifier: "downloads"))
        #expect(delegate.handler != nil)
        #expect(harness.app.applicationState == .background)
        harness.host.advance(by: .seconds(30))
        #expect(harness.host.overruns.isEmpty)
        #expect(harness.app.applicationState == .suspended)
    }

    @Test("a fetch is a background task for the host: begun with the call, ended after the result is posted")
    func fetchIsAHostBackgroundTask() throws {
        let delegate = FullDelegate()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.backgroundFetch)
        #expect(harness.host.backgroundTaskReports == ["began 1 \(Application.backgroundFetchTaskName)"])
        #expect(harness.app.activeBackgroundTasks.isEmpty, "the app's own tasks are its own")
        let completion = try #require(delegate.fetchCompletion)
        completion(.noData)
        #expect(harness.host.backgroundTaskReports.last == "ended 1")
        #expect(harness.app.applicationState == .suspended)
        // A task the app begins next does not reuse the fetch's identifier.
        harness.host.send(.foreground(true))
        #expect(harness.app.beginBackgroundTask(withName: "upload").rawValue == 2)
    }

    @Test("setMinimumBackgroundFetchInterval: never by default, changes reach the host, NaN is refused")
    func minimumBackgroundFetchInterval() {
        let harness = Harness(FullDelegate())
        harness.launch()
        #expect(harness.app.minimumBackgroundFetchInterval == Application.backgroundFetchIntervalNever)
        #expect(Application.backgroundFetchIntervalNever == .greatestFiniteMagnitude)
        #expect(Application.backgroundFetchIntervalMinimum == 0)
        harness.app.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalMinimum)
        harness.app.setMinimumBackgroundFetchInterval(-5)
        harness.app.setMinimumBackgroundFetchInterval(.nan)
        harness.app.setMinimumBackgroundFetchInterval(3600)
        harness.app.setMinimumBackgroundFetchInterval(Application.backgroundFetchIntervalNever)
        #expect(harness.host.backgroundFetchIntervals == [0, 3600, .greatestFiniteMagnitude])
        #expect(harness.app.minimumBackgroundFetchInterval == .greatestFiniteMagnitude)
    }
}
