import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import InProcessHost
import SystemdBus
import SystemdBusTesting
import Testing

/// An app on the real host bridge, against python-dbusmock on private system and session buses.
@MainActor
final class HostRig {
    let systemBus: PrivateBus
    let sessionBus: PrivateBus
    var logind: DBusMock
    let timedated: DBusMock
    let lowMemory: DBusMock
    let screensaver: DBusMock
    var sessionPath: String
    let host: SystemdHost
    let delegate: ProbeDelegate
    let app: Application
    let recorder: LifecycleRecorder
    var releases: [String] = []
    private var waiters: [(name: String, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var running: Task<Void, Never>?

    /// A delegate that notes, at each callback, whether the bridge held the sleep lock.
    @MainActor final class ProbeDelegate: ApplicationDelegate {
        weak var host: SystemdHost?
        var heldSleepLockAt: [String: Bool] = [:]
        var beginsEndlessTask = false
        func applicationDidEnterBackground(_ application: Application) {
            heldSleepLockAt["background"] = host?.bridge.holdsDelayLock("sleep")
            if beginsEndlessTask { _ = application.beginBackgroundTask(withName: "endless") }
        }
        func applicationWillEnterForeground(_ application: Application) {
            heldSleepLockAt["foreground"] = host?.bridge.holdsDelayLock("sleep")
        }
        func applicationDidBecomeActive(_ application: Application) {}
        func applicationWillResignActive(_ application: Application) {}
        func applicationWillTerminate(_ application: Application) {}
        func applicationDidReceiveMemoryWarning(_ application: Application) {}
        func applicationSignificantTimeChange(_ application: Application) {}
        func applicationProtectedDataWillBecomeUnavailable(_ application: Application) {}
        func applicationProtectedDataDidBecomeAvailable(_ application: Application) {}
        /// Background fetch: completes at once with this result.
        var fetchResult = BackgroundFetchResult.newData
        func application(
            _ application: Application,
            performFetchWithCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
        ) {
            completionHandler(fetchResult)
        }
    }

    init(
        sources: Set<HostBridge.Source> = [.logind, .screensaver, .timedated, .lowMemoryMonitor],
        environment: [String: String] = [:], inhibitDelayMaxUSec: UInt64? = nil, beginsEndlessTask: Bool = false,
        thermalRoot: String? = nil
    ) throws {
        systemBus = try PrivateBus()
        sessionBus = try PrivateBus()
        logind = try DBusMock(template: "logind", address: systemBus.address)
        timedated = try DBusMock(
            template: "timedated", address: systemBus.address, parameters: #"{"Timezone": "Europe/Berlin"}"#)
        lowMemory = try DBusMock(template: "low_memory_monitor", address: systemBus.address)
        screensaver = try DBusMock(template: "gnome_screensaver", address: sessionBus.address, system: false)
        sessionPath = try logind.addSession(id: "c1", uid: getuid(), username: "tester", active: true)
        if let inhibitDelayMaxUSec {
            try logind.addProperty(
                interface: "org.freedesktop.login1.Manager", name: "InhibitDelayMaxUSec",
                value: "uint64 \(inhibitDelayMaxUSec)")
        }
        var configuration = HostBridge.Configuration(
            sources: sources, systemBus: .address(systemBus.address), sessionBus: .address(sessionBus.address),
            environment: environment.merging(["XDG_SESSION_ID": "c1"]) { a, _ in a },
            memoryWarningInterval: .seconds(60), sleepDelayMargin: .milliseconds(500),
            inhibitorWho: "lifecycle-tests")
        if let thermalRoot { configuration.thermalRoot = thermalRoot }
        host = SystemdHost(configuration: configuration)
        delegate = ProbeDelegate()
        delegate.beginsEndlessTask = beginsEndlessTask
        app = Application(
            delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
            configuration: .init(applicationIdentifier: "org.example.Tests", isStateRestorationEnabled: false))
        recorder = LifecycleRecorder(application: app)
        recorder.recordsStateChanges = true
        delegate.host = host
        recorder.onEntry = { [weak self] entry in self?.saw(entry.name) }
        host.sleepLockReleaseHandler = { [weak self] reason in
            self?.releases.append(reason)
            self?.saw("release:\(reason)")
        }
    }

    func launch() async {
        running = Task { @MainActor in await app.run() }
        await wait(for: Application.didBecomeActiveNotification.rawValue)
    }

    /// Waits until `name` has been seen `count` times in total (hang guard: 30 s, recorded as an issue).
    func wait(for name: String, count: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) async {
        if seen(name) >= count { return }
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: .seconds(30))
            guard let self else { return }
            if let index = self.waiters.firstIndex(where: { $0.name == name && $0.count == count }) {
                Issue.record(
                    "hang guard: \(name) ×\(count) not seen; timeline:\n\(self.recorder.timeline)",
                    sourceLocation: sourceLocation)
                self.waiters.remove(at: index).continuation.resume()
            }
        }
        defer { guardTask.cancel() }
        await withCheckedContinuation { waiters.append((name, count, $0)) }
    }

    private var counts: [String: Int] = [:]
    func seen(_ name: String) -> Int { counts[name] ?? 0 }

    private func saw(_ name: String) {
        counts[name, default: 0] += 1
        let ready = waiters.indices.filter { waiters[$0].name == name && waiters[$0].count <= counts[name]! }
        for index in ready.reversed() { waiters.remove(at: index).continuation.resume() }
    }

    /// The delay locks logind's mock lists, as "what:who:mode".
    func inhibitors() throws -> String {
        try logind.call(interface: "org.freedesktop.login1.Manager", method: "ListInhibitors")
    }

    func emitManager(_ member: String, _ value: Bool) throws {
        try logind.emitSignal(
            interface: "org.freedesktop.login1.Manager", name: member, signature: "b",
            arguments: [value ? "true" : "false"])
    }

    func session(_ method: String, _ arguments: [String] = []) throws {
        try logind.call(
            path: sessionPath, interface: "org.freedesktop.login1.Session", method: method, arguments: arguments)
    }

    func stop() async {
        if app.applicationState != .notRunning { app.handle(.terminate(.hostRequest)) }
        await running?.value
        host.stop()
        screensaver.stop()
        lowMemory.stop()
        timedated.stop()
        logind.stop()
        sessionBus.stop()
        systemBus.stop()
    }
}

@MainActor
@Suite("The host bridge drives the app: each row of the host-fact table", .serialized)
struct SystemdHostTests {
    @Test(
        "PrepareForSleep: the delay lock is held through the callbacks, released on suspend, re-taken before the foreground callbacks"
    )
    func sleepAndWake() async throws {
        let rig = try HostRig()
        await rig.launch()
        #expect(try rig.inhibitors().contains("'sleep', 'lifecycle-tests'"))
        #expect(try rig.inhibitors().contains("'shutdown', 'lifecycle-tests'"))
        try rig.emitManager("PrepareForSleep", true)
        await rig.wait(for: "release:suspended")
        #expect(rig.app.applicationState == .suspended)
        #expect(rig.delegate.heldSleepLockAt["background"] == true)
        #expect(try await eventually { try !rig.inhibitors().contains("'sleep', 'lifecycle-tests'") })
        try rig.emitManager("PrepareForSleep", false)
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
        #expect(rig.delegate.heldSleepLockAt["foreground"] == true)
        #expect(try rig.inhibitors().contains("'sleep', 'lifecycle-tests'"))
        try rig.recorder.verifyOrder([
            "applicationWillResignActive(_:)", "applicationDidEnterBackground(_:)",
            Application.didEnterBackgroundNotification.rawValue,
            "applicationWillEnterForeground(_:)", "applicationDidBecomeActive(_:)",
        ])
        await rig.stop()
    }

    @Test("a background task that never ends: the sleep lock goes at the cap below InhibitDelayMaxUSec")
    func sleepCap() async throws {
        let rig = try HostRig(inhibitDelayMaxUSec: 1_200_000, beginsEndlessTask: true)
        await rig.launch()
        try rig.emitManager("PrepareForSleep", true)
        await rig.wait(for: "release:cap")
        #expect(rig.releases == ["cap"])
        #expect(rig.app.applicationState == .background)
        #expect(try await eventually { try !rig.inhibitors().contains("'sleep', 'lifecycle-tests'") })
        await rig.stop()
    }

    @Test("PrepareForShutdown(true) terminates the app; the shutdown lock goes with it")
    func shutdown() async throws {
        let rig = try HostRig()
        await rig.launch()
        try rig.emitManager("PrepareForShutdown", true)
        await rig.wait(for: Application.willTerminateNotification.rawValue)
        #expect(rig.app.applicationState == .notRunning)
        try rig.recorder.verifyOrder([
            "applicationWillResignActive(_:)", "applicationWillTerminate(_:)",
            Application.willTerminateNotification.rawValue,
        ])
        await rig.stop()
    }

    @Test("Lock, LockedHint and the screensaver: protected data and active state, nothing twice")
    func lockSources() async throws {
        let rig = try HostRig()
        await rig.launch()
        try rig.session("Lock")
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        try rig.session("SetLockedHint", ["true"])
        try rig.session("Unlock")
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
        try rig.session("SetLockedHint", ["false"])
        try rig.screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
        await rig.wait(for: Application.willResignActiveNotification.rawValue, count: 2)
        try rig.screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 3)
        #expect(rig.recorder.count(of: "applicationProtectedDataWillBecomeUnavailable(_:)") == 2)
        #expect(rig.recorder.count(of: "applicationWillResignActive(_:)") == 2)
        try rig.recorder.verifyOrder([
            "applicationProtectedDataWillBecomeUnavailable(_:)", "applicationWillResignActive(_:)",
            "applicationProtectedDataDidBecomeAvailable(_:)", "applicationDidBecomeActive(_:)",
        ])
        await rig.stop()
    }

    @Test(
        "launched into a locked session, the app starts inactive without protected data, and becomes active on unlock")
    func launchIntoLockedSession() async throws {
        let rig = try HostRig(sources: [.logind])
        try rig.session("SetLockedHint", ["true"])
        let running = Task { @MainActor in await rig.app.run() }
        await rig.wait(for: Application.didFinishLaunchingNotification.rawValue)
        #expect(rig.app.applicationState == .inactive)
        #expect(!rig.app.isProtectedDataAvailable)
        try rig.session("SetLockedHint", ["false"])
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue)
        // Never active before the unlock: no resign, no "will become unavailable" for a lock it launched into.
        try rig.recorder.verifyAbsent("applicationWillResignActive(_:)")
        try rig.recorder.verifyAbsent("applicationProtectedDataWillBecomeUnavailable(_:)")
        try rig.recorder.verifyOrder([
            Application.didFinishLaunchingNotification.rawValue,
            "applicationProtectedDataDidBecomeAvailable(_:)", "applicationDidBecomeActive(_:)",
        ])
        #expect(rig.recorder.count(of: "applicationDidBecomeActive(_:)") == 1)
        await rig.stop()
        await running.value
    }

    @Test("logind and the screensaver are two lock sources: locked while either says so")
    func lockSourcesCombine() async throws {
        let rig = try HostRig()
        await rig.launch()
        try rig.session("SetLockedHint", ["true"])
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        try rig.screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
        try rig.session("SetLockedHint", ["false"])
        // A marker through the system bus, behind logind's change: the screensaver still locks.
        try rig.lowMemory.call(interface: "org.freedesktop.DBus.Mock", method: "EmitWarning", arguments: ["byte 255"])
        await rig.wait(for: Application.didReceiveMemoryWarningNotification.rawValue)
        #expect(
            rig.recorder.count(of: "applicationDidBecomeActive(_:)") == 1, "unlocked while the screensaver was active")
        try rig.screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
        #expect(rig.recorder.count(of: "applicationWillResignActive(_:)") == 1)
        #expect(rig.recorder.count(of: "applicationProtectedDataWillBecomeUnavailable(_:)") == 1)
        await rig.stop()
    }

    @Test("a screensaver that leaves the bus while active no longer locks the app")
    func screensaverLeaves() async throws {
        let rig = try HostRig(sources: [.logind, .screensaver])
        await rig.launch()
        try rig.screensaver.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        rig.screensaver.stop()
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
        #expect(rig.app.isProtectedDataAvailable)
        await rig.stop()
    }

    @Test("session Active=false sends the app to the background, Active=true brings it back")
    func sessionSwitch() async throws {
        let rig = try HostRig()
        await rig.launch()
        try rig.logind.updateProperties(
            path: rig.sessionPath, interface: "org.freedesktop.login1.Session", properties: ["Active": "false"])
        await rig.wait(for: Application.didEnterBackgroundNotification.rawValue)
        try rig.logind.updateProperties(
            path: rig.sessionPath, interface: "org.freedesktop.login1.Session", properties: ["Active": "true"])
        await rig.wait(for: Application.didBecomeActiveNotification.rawValue, count: 2)
        try rig.recorder.verifyOrder([
            "applicationDidEnterBackground(_:)", "applicationWillEnterForeground(_:)", "applicationDidBecomeActive(_:)",
        ])
        await rig.stop()
    }

    @Test("a time-zone change through timedated is one significant time change")
    func timeZone() async throws {
        let rig = try HostRig()
        await rig.launch()
        try rig.timedated.call(
            interface: "org.freedesktop.timedate1", method: "SetTimezone", arguments: ["'Asia/Tokyo'", "false"])
        await rig.wait(for: Application.significantTimeChangeNotification.rawValue)
        let change = try #require(
            rig.recorder.entries(named: Application.significantTimeChangeNotification.rawValue).first)
        #expect(change.userInfo[ApplicationUserInfoKey.timeZone] == "Asia/Tokyo")
        #expect(change.userInfo[ApplicationUserInfoKey.significantTimeChangeReason] == "timezone")
        await rig.stop()
    }

    @Test("with $TZ set, the system's time-zone change is no change for the app")
    func timeZoneFixedByTZ() async throws {
        let rig = try HostRig(environment: ["TZ": "UTC"])
        await rig.launch()
        try rig.timedated.call(
            interface: "org.freedesktop.timedate1", method: "SetTimezone", arguments: ["'Asia/Tokyo'", "false"])
        // A marker through the system bus, behind timedated's change.
        try rig.lowMemory.call(interface: "org.freedesktop.DBus.Mock", method: "EmitWarning", arguments: ["byte 255"])
        await rig.wait(for: Application.didReceiveMemoryWarningNotification.rawValue)
        try rig.recorder.verifyAbsent(Application.significantTimeChangeNotification.rawValue)
        await rig.stop()
    }

    @Test(
        "setting CLOCK_REALTIME to its own value fires CANCEL_ON_SET: a clock-set time change",
        .enabled(if: SystemdHostTests.canSetClock(), "this process may not set CLOCK_REALTIME (needs CAP_SYS_TIME)"))
    func clockSet() async throws {
        try await TestResourceLock.realtimeClock.withLock { try await clockSetHoldingTheClock() }
    }

    func clockSetHoldingTheClock() async throws {
        let rig = try HostRig(sources: [.clock])
        await rig.launch()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        #expect(clock_settime(CLOCK_REALTIME, &now) == 0)
        await rig.wait(for: Application.significantTimeChangeNotification.rawValue)
        #expect(
            rig.recorder.entries(named: Application.significantTimeChangeNotification.rawValue).first?
                .userInfo[ApplicationUserInfoKey.significantTimeChangeReason] == "clock-set")
        await rig.stop()
    }

    nonisolated static func canSetClock() -> Bool {
        // CAP_SYS_TIME is capability 25; read the effective set from /proc.
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << 25) != 0
    }

    @Test("memory: a FIFO as $MEMORY_PRESSURE_WATCH and low-memory-monitor, rate-limited together")
    func memory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pressure-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("memory.pressure").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let rig = try HostRig(
            sources: [.logind, .lowMemoryMonitor, .memoryPressure], environment: ["MEMORY_PRESSURE_WATCH": fifo])
        await rig.launch()
        let writer = open(fifo, O_WRONLY | O_NONBLOCK)
        #expect(writer >= 0)
        defer { close(writer) }
        #expect(write(writer, "x", 1) == 1)
        await rig.wait(for: Application.didReceiveMemoryWarningNotification.rawValue)
        // A more severe level passes the rate limit at once; the same level again does not.
        try rig.lowMemory.call(interface: "org.freedesktop.DBus.Mock", method: "EmitWarning", arguments: ["byte 255"])
        await rig.wait(for: Application.didReceiveMemoryWarningNotification.rawValue, count: 2)
        try rig.lowMemory.call(interface: "org.freedesktop.DBus.Mock", method: "EmitWarning", arguments: ["byte 255"])
        // A marker through the same system bus, after the rate-limited warning.
        try rig.session("Lock")
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        let warnings = rig.recorder.entries(named: Application.didReceiveMemoryWarningNotification.rawValue)
        #expect(
            warnings.map { $0.userInfo[ApplicationUserInfoKey.memoryWarningSource] } == [
                "memory-pressure-watch", "low-memory-monitor",
            ])
        #expect(warnings.last?.userInfo[ApplicationUserInfoKey.memoryWarningLevel] == "critical")
        await rig.stop()
    }

    @Test("a spoofed PrepareForSleep and Lock from a second connection change nothing")
    func spoofing() async throws {
        let rig = try HostRig()
        await rig.launch()
        let loop = try EventLoop(name: "spoofer")
        defer { loop.shutdown() }
        let spoofer = try await BusConnection(
            .address(rig.systemBus.address), loop: loop, description: "spoofer", timeout: .seconds(10))
        defer { spoofer.close() }
        try spoofer.emitSignal(
            path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager", member: "PrepareForSleep",
            arguments: [.bool(true)])
        try spoofer.emitSignal(path: rig.sessionPath, interface: "org.freedesktop.login1.Session", member: "Lock")
        // The real timedated's change arrives after the spoofed signals on the same bus.
        try rig.timedated.call(
            interface: "org.freedesktop.timedate1", method: "SetTimezone", arguments: ["'America/Lima'", "false"])
        await rig.wait(for: Application.significantTimeChangeNotification.rawValue)
        #expect(rig.app.applicationState == .active)
        try rig.recorder.verifyAbsent("applicationWillResignActive(_:)")
        try rig.recorder.verifyAbsent("applicationDidEnterBackground(_:)")
        await rig.stop()
    }

    @Test("the system bus restarts and logind returns later: the bridge reconnects, resyncs, and takes its locks again")
    func busRestart() async throws {
        let rig = try HostRig(sources: [.logind])
        await rig.launch()
        rig.logind.stop()
        try rig.systemBus.restart()
        // logind comes back later than the bus: only after the bridge found it missing twice (each
        // attempt is a connection that comes and goes on the bus), so it must keep trying.
        let loop = try EventLoop(name: "bus-watcher")
        defer { loop.shutdown() }
        let watcher = try await BusConnection(
            .address(rig.systemBus.address), loop: loop, description: "bus-watcher", timeout: .seconds(5))
        defer { watcher.close() }
        let gone = ValueRecorder<String>()
        let subscription = try await watcher.subscribe(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameOwnerChanged"
        ) { signal in
            guard let name = signal.arguments.first?.stringValue, name.hasPrefix(":"),
                signal.arguments.count == 3, signal.arguments[2].stringValue == ""
            else { return }
            gone.add(name)
        }
        defer { subscription.cancel() }
        #expect(await eventually { gone.values.count >= 2 }, "the bridge did not try the bus twice")
        rig.logind = try DBusMock(template: "logind", address: rig.systemBus.address)
        rig.sessionPath = try rig.logind.addSession(id: "c1", uid: getuid(), username: "tester", active: true)
        // Wait for the bridge to be back (through several reconnect backoff steps): its delay lock
        // shows up on the new logind.
        #expect(
            try await eventually(pause: .milliseconds(50)) {
                try rig.inhibitors().contains("'sleep', 'lifecycle-tests'")
            })
        try rig.session("Lock")
        await rig.wait(for: Application.willResignActiveNotification.rawValue)
        await rig.stop()
    }
}
