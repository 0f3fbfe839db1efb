import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import InProcessHost
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting

/// The scripted day on real signals: private system and session buses, python-dbusmock's
/// logind, timedated, low_memory_monitor and gnome_screensaver, and the real ``SystemdHost``.
///
/// Each step acts on a mock through its D-Bus interface (a logind session's `Lock`, a
/// `PrepareForSleep` signal, timedated's `SetTimezone`, …) and waits until the app shows the
/// expected notification, so the timeline is the app's real reaction to real bus traffic.
@MainActor
struct SandboxDay {
    let printer: TimelinePrinter
    let start = ContinuousClock.now

    struct Step {
        let note: String
        let action: () async throws -> Void
        /// The notification the step must produce, or `nil` when the step only queues something.
        let expect: String?
        /// Something else the step must produce (a call a mock received), checked after `expect`.
        var until: (() async throws -> Void)? = nil
    }

    func run() async throws {
        // Piped into `head`, a write to the closed pipe would end the process by SIGPIPE before
        // the defers below stop the bus daemons and mocks, leaving them running; ignored, the write
        // fails instead, the day plays to its end and everything is stopped by pid.
        signal(SIGPIPE, SIG_IGN)
        let systemBus = try PrivateBus()
        let sessionBus = try PrivateBus()
        defer {
            sessionBus.stop()
            systemBus.stop()
        }
        let logind = try DBusMock(template: "logind", address: systemBus.address)
        defer { logind.stop() }
        let timedated = try DBusMock(
            template: "timedated", address: systemBus.address, parameters: #"{"Timezone": "Europe/Berlin"}"#)
        defer { timedated.stop() }
        let lowMemory = try DBusMock(template: "low_memory_monitor", address: systemBus.address)
        defer { lowMemory.stop() }
        let screensaver = try DBusMock(template: "gnome_screensaver", address: sessionBus.address, system: false)
        defer { screensaver.stop() }
        let notificationServer = try DBusMock(template: "notification_daemon", address: sessionBus.address)
        defer { notificationServer.stop() }
        let dock = try await DockWatcher(address: sessionBus.address, printer: printer)
        defer { dock.stop() }
        let session = try logind.addSession(id: "c1", uid: getuid(), username: "demo", active: true)

        let host = SystemdHost(
            configuration: HostBridge.Configuration(
                sources: [.logind, .screensaver, .timedated, .lowMemoryMonitor],
                systemBus: .address(systemBus.address), sessionBus: .address(sessionBus.address),
                environment: ["XDG_SESSION_ID": "c1"], inhibitorWho: "lifecycle-example"))
        host.sleepLockReleaseHandler = { reason in printer.note("logind's sleep delay lock released (\(reason))") }
        let app = Application(
            delegate: NotesAppDelegate(), host: host,
            configuration: .init(applicationIdentifier: "org.example.Notes", isStateRestorationEnabled: false))
        let recorder = LifecycleRecorder(application: app)
        let waiter = NotificationWaiter(recorder: recorder)
        recorder.onEntry = { entry in
            printer.print(entry)
            waiter.saw(entry.name)
        }

        printer.note(
            "08:00 the user opens the app with notes://today (logind, timedated, low-memory-monitor and the screensaver are python-dbusmock on private buses)"
        )
        var options = LaunchOptions()
        options.url = URL(string: "notes://today")
        options.sourceApplication = "org.gnome.Nautilus"
        let running = Task { @MainActor in await app.run(launchOptions: options) }
        try await waiter.wait(for: Application.didBecomeActiveNotification.rawValue)

        let manager = "org.freedesktop.login1.Manager"
        let steps: [Step] = [
            Step(
                note: "09:00 the user locks the screen: logind emits Lock on the session",
                action: { try logind.call(path: session, interface: "org.freedesktop.login1.Session", method: "Lock") },
                expect: Application.willResignActiveNotification.rawValue),
            Step(
                note: "09:01 the user unlocks: logind emits Unlock",
                action: {
                    try logind.call(path: session, interface: "org.freedesktop.login1.Session", method: "Unlock")
                },
                expect: Application.didBecomeActiveNotification.rawValue),
            Step(
                note: "10:00 the screensaver starts: org.gnome.ScreenSaver ActiveChanged(true)",
                action: {
                    try screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
                },
                expect: Application.willResignActiveNotification.rawValue),
            Step(
                note: "10:05 the screensaver ends: ActiveChanged(false)",
                action: {
                    try screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
                },
                expect: Application.didBecomeActiveNotification.rawValue),
            Step(
                note: "12:30 the lid closes: logind emits PrepareForSleep(true)",
                action: {
                    try logind.emitSignal(
                        interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["true"])
                },
                expect: Application.stateDidChangeNotification.rawValue),
            Step(
                note: "12:31 while the app is suspended, the time zone changes through timedated (queued)",
                action: {
                    try timedated.call(
                        interface: "org.freedesktop.timedate1", method: "SetTimezone",
                        arguments: ["'Asia/Tokyo'", "false"])
                },
                expect: nil),
            Step(
                note: "13:30 the lid opens: PrepareForSleep(false); the lock is taken again, then the app returns",
                action: {
                    try logind.emitSignal(
                        interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["false"])
                },
                expect: Application.significantTimeChangeNotification.rawValue),
            Step(
                note: "15:00 memory runs short: low-memory-monitor emits LowMemoryWarning(100)",
                action: {
                    try lowMemory.call(
                        interface: "org.freedesktop.DBus.Mock", method: "EmitWarning", arguments: ["byte 100"])
                },
                expect: Application.didReceiveMemoryWarningNotification.rawValue),
            Step(
                note: "15:55 the screensaver starts: the app resigns active",
                action: {
                    try screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
                },
                expect: Application.willResignActiveNotification.rawValue),
            Step(
                note:
                    "16:00 the stand-up reminder the app scheduled comes due while it is not active: a banner through org.freedesktop.Notifications (python-dbusmock's notification_daemon), badge 1 on the dock",
                action: {
                    app.scheduleLocalNotification(
                        LocalNotification(
                            identifier: "standup", fireDate: Date(timeIntervalSinceNow: 0.3), alertTitle: "Stand-up",
                            alertBody: "In 5 minutes, room 2", applicationIconBadgeNumber: 1, category: "reminder"))
                },
                expect: nil,
                until: {
                    try await waitUntil("the banner") {
                        try notificationServer.methodCalls("Notify").contains("Stand-up")
                    }
                    printer.note("banner shown: \"Stand-up\" with the buttons Open and Snooze 10 min")
                }),
            Step(
                note: "16:01 the user clicks the banner: the server emits ActionInvoked(1, \"default\")",
                action: {
                    try notificationServer.emitSignal(
                        interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
                        arguments: ["uint32 1", "'default'"])
                },
                expect: Application.didReceiveLocalNotificationNotification.rawValue),
            Step(
                note: "16:02 the screensaver ends",
                action: {
                    try screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
                },
                expect: Application.didBecomeActiveNotification.rawValue),
            Step(
                note:
                    "16:30 the user picks \"New note\" in the dock: gdbus calls org.freedesktop.Application.ActivateAction on org.example.Notes",
                action: {
                    // Not awaited: the app answers the call on the main actor, where the step waits.
                    let address = sessionBus.address
                    Task.detached {
                        let result = try? ChildProcess.run(
                            "/usr/bin/gdbus",
                            [
                                "call", "--address", address, "--dest", "org.example.Notes", "--object-path",
                                "/org/example/Notes", "--method", "org.freedesktop.Application.ActivateAction",
                                "new-note", "[]", "{}",
                            ])
                        if result?.status != 0 {
                            let output = result?.output ?? "gdbus did not run"
                            Task { @MainActor in printer.note("gdbus ActivateAction failed: \(output)") }
                        }
                    }
                },
                expect: Application.performActionForShortcutItemNotification.rawValue),
            Step(
                note: "18:00 the system shuts down: logind emits PrepareForShutdown(true)",
                action: {
                    try logind.emitSignal(
                        interface: manager, name: "PrepareForShutdown", signature: "b", arguments: ["true"])
                },
                expect: Application.willTerminateNotification.rawValue),
        ]
        recorder.recordsStateChanges = false
        for step in steps {
            printer.note(step.note)
            if step.expect == Application.stateDidChangeNotification.rawValue {
                waiter.expectState(.suspended, of: app)
            }
            try await step.action()
            if let until = step.until { try await until() }
            if let expect = step.expect {
                if expect == Application.stateDidChangeNotification.rawValue {
                    try await waiter.waitForState()
                } else {
                    try await waiter.wait(for: expect)
                }
            } else if step.until == nil {
                // Nothing is delivered while suspended; give timedated's signal time to be queued.
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        await running.value
        printer.summary("\(recorder.entries.count) events on real D-Bus signals; final state: \(app.applicationState)")
    }
}

/// Polls a condition every 20 ms until it holds, for at most 10 s.
@MainActor
func waitUntil(_ what: String, _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(10)
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw DemoError("no \(what) within 10 s") }
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Prints the badge the app announces to docks (`com.canonical.Unity.LauncherEntry.Update`).
final class DockWatcher: Sendable {
    private let loop: EventLoop
    private let connection: BusConnection
    private let subscription: BusSubscription

    init(address: String, printer: TimelinePrinter) async throws {
        loop = try EventLoop(name: "dock")
        connection = try await BusConnection(.address(address), loop: loop, description: "dock", timeout: .seconds(10))
        let rule = "type='signal',interface='com.canonical.Unity.LauncherEntry',member='Update'"
        subscription = try await connection.addMatch(rule) { signal in
            guard signal.arguments.count == 2,
                let properties = try? UserInfoBusCodec.decodeUserInfo(signal.arguments[1])
            else { return }
            let count = properties["count"]?.intValue ?? 0
            Task { @MainActor in printer.note("dock: \(signal.arguments[0].stringValue ?? "?") badge \(count)") }
        }
    }

    func stop() {
        subscription.cancel()
        connection.close()
        loop.shutdown()
    }
}

/// Waits for the next recorded notification of a name, or for a state, with a hang guard.
@MainActor
final class NotificationWaiter {
    private let recorder: LifecycleRecorder
    private var waiting: (name: String, continuation: CheckedContinuation<Void, any Error>)?
    private var stateWait: (state: ApplicationState, app: Application, token: NotificationObservation?)?
    private var stateContinuation: CheckedContinuation<Void, any Error>?
    private var stateReached = false

    init(recorder: LifecycleRecorder) { self.recorder = recorder }

    func saw(_ name: String) {
        guard let waiting, waiting.name == name else { return }
        self.waiting = nil
        waiting.continuation.resume()
    }

    func wait(for name: String, timeout: Duration = .seconds(20)) async throws {
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: timeout)
            guard let self, let waiting = self.waiting, waiting.name == name else { return }
            self.waiting = nil
            waiting.continuation.resume(throwing: DemoError("no \(name) within \(timeout)"))
        }
        defer { guardTask.cancel() }
        try await withCheckedThrowingContinuation { waiting = (name, $0) }
    }

    func expectState(_ state: ApplicationState, of app: Application) {
        stateReached = false
        let token = app.notificationCenter.addObserver(for: Application.StateDidChangeMessage.self, object: app) {
            [weak self] message in
            guard let self, message.state == state else { return }
            self.stateReached = true
            self.stateContinuation?.resume()
            self.stateContinuation = nil
        }
        stateWait = (state, app, token)
    }

    func waitForState(timeout: Duration = .seconds(20)) async throws {
        defer { stateWait = nil }
        if stateReached { return }
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: timeout)
            guard let self, let continuation = self.stateContinuation else { return }
            self.stateContinuation = nil
            continuation.resume(
                throwing: DemoError("state \(self.stateWait?.state.rawValue ?? "?") not reached within \(timeout)"))
        }
        defer { guardTask.cancel() }
        try await withCheckedThrowingContinuation { stateContinuation = $0 }
    }
}

/// A demo step that did not happen.
struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
