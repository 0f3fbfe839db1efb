import AppLifecycle
import AppLifecycleTesting
import Foundation
import LifecycledClient
import LifecycledProtocol
import LifecycledTestSupport
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("LifecycledHost against a fake lifecycled")
struct LifecycledHostTests {
    /// Implements the transitions (the recorder records implemented methods only) and takes a
    /// background task on entering the background.
    @MainActor final class Delegate: ApplicationDelegate {
        var task = BackgroundTaskIdentifier.invalid
        var takesBackgroundTask = false
        func applicationDidBecomeActive(_ application: Application) {}
        func applicationWillResignActive(_ application: Application) {}
        func applicationDidEnterBackground(_ application: Application) {
            if takesBackgroundTask { task = application.beginBackgroundTask(withName: "save") }
        }
        func applicationWillEnterForeground(_ application: Application) {}
        func applicationDidReceiveMemoryWarning(_ application: Application) {}
        func applicationProtectedDataWillBecomeUnavailable(_ application: Application) {}
        func applicationProtectedDataDidBecomeAvailable(_ application: Application) {}
        func applicationWillTerminate(_ application: Application) {}
    }

    /// One app with a LifecycledHost on a private bus, and the recorder's change signal.
    @MainActor struct Hosted {
        let host: LifecycledHost
        let app: Application
        let delegate: Delegate
        let recorder: LifecycleRecorder
        let changes: ChangeSignal

        init(address: String, appID: String = FakeLifecycled.counterID) {
            host = LifecycledHost(
                configuration: .init(
                    appID: appID, busAddress: .address(address), environment: [:], handlesTerminationSignals: false))
            delegate = Delegate()
            app = Application(
                delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
                configuration: .init(applicationIdentifier: appID, isStateRestorationEnabled: false))
            recorder = LifecycleRecorder(application: app)
            let changes = ChangeSignal()
            recorder.onEntry = { _ in changes.signal() }
            self.changes = changes
        }

        func waitForDelegateCall(_ name: String) async throws {
            let recorder = self.recorder
            try await changes.wait(for: name) { @MainActor in recorder.delegateCalls.contains(name) }
        }
    }

    static let didEnterBackground = "UIApplicationDidEnterBackgroundNotification"

    @MainActor
    @Test(
        "registers with its app id, launches with the daemon's facts and options, follows its own verified Commands in order, reports back"
    )
    func registersFollowsAndReports() async throws {
        try await withFakeLifecycled(
            facts: ["sleeping": false, "locked": true, "session-active": true, "foreground": true],
            launchOptions: ["UIApplicationLaunchOptionsURLKey": "counter://start"]
        ) { env in
            let bus = env.bus
            let loop = env.loop
            let fake = env.fake
            let spoof = try await BusConnection(
                .address(bus.address), loop: loop, description: "spoof", timeout: .seconds(10))
            defer { spoof.close() }

            let hosted = Hosted(address: bus.address)
            defer { hosted.host.stop() }
            await hosted.host.prepare(hosted.app)
            #expect(
                fake.log.calls(LifecycledProtocol.Method.registerApp.name).map(CallLog.strings) == [
                    [FakeLifecycled.counterID]
                ])
            #expect(hosted.host.status.isHosted)
            #expect(hosted.host.launchOptions.url?.absoluteString == "counter://start")

            hosted.app.launch(options: hosted.host.launchOptions)
            // Locked at launch: the app launches into inactive, never active.
            #expect(hosted.app.applicationState == .inactive)
            #expect(!hosted.recorder.delegateCalls.contains("applicationDidBecomeActive(_:)"))

            // A spoofed Command (not from the name's owner), then one for another app, then the real ones.
            let spoofed = HostEventBusCodec.encode(.terminate(.hostRequest))!
            try spoof.emitSignal(
                path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
                member: LifecycledProtocol.Signal.command.name,
                arguments: [
                    .string(FakeLifecycled.counterID), .string(spoofed.command),
                    UserInfoBusCodec.encode(spoofed.arguments),
                ])
            try await busBarrier(spoof)
            try fake.command(FakeLifecycled.notesID, .memoryWarning(MemoryWarning(level: .critical, source: "test")))
            try fake.command(FakeLifecycled.counterID, .locked(false))
            try fake.command(FakeLifecycled.counterID, .sleeping(true))
            try await hosted.waitForDelegateCall("applicationDidEnterBackground(_:)")

            try hosted.recorder.verifyOrder([
                "applicationProtectedDataDidBecomeAvailable(_:)", "applicationDidBecomeActive(_:)",
                "applicationWillResignActive(_:)", "applicationDidEnterBackground(_:)",
            ])
            try hosted.recorder.verifyAbsent("applicationDidReceiveMemoryWarning(_:)")
            try hosted.recorder.verifyAbsent("applicationWillTerminate(_:)")
            #expect(hosted.host.hostFacts["sleeping"] == .bool(true))

            // Reports: every state in order, and the notifications the app posted.
            try await fake.log.wait(for: LifecycledProtocol.Method.reportState.name, "suspended") {
                CallLog.strings($0) == [FakeLifecycled.counterID, "suspended"]
            }
            try await fake.log.wait(for: LifecycledProtocol.Method.reportNotification.name, Self.didEnterBackground) {
                CallLog.strings($0).dropFirst().first == Self.didEnterBackground
            }
            let states = fake.log.calls(LifecycledProtocol.Method.reportState.name).map { CallLog.strings($0)[1] }
            #expect(states == ["inactive", "active", "inactive", "background", "suspended"])
            let names = fake.log.calls(LifecycledProtocol.Method.reportNotification.name).map { CallLog.strings($0)[1] }
            #expect(names.contains("UIApplicationDidFinishLaunchingNotification"))
            #expect(
                names.firstIndex(of: "UIApplicationWillResignActiveNotification")! < names.firstIndex(
                    of: Self.didEnterBackground)!)
            #expect(
                fake.log.calls(LifecycledProtocol.Method.reportNotification.name).allSatisfy {
                    $0.arguments[0] == .string(FakeLifecycled.counterID)
                })
        }
    }

    @MainActor @Test("a 'post' Command posts the named notification into the app's center, typed observers included")
    func postCommand() async throws {
        try await withFakeLifecycled { env in
            let bus = env.bus
            let fake = env.fake

            let hosted = Hosted(address: bus.address)
            defer { hosted.host.stop() }
            await hosted.host.prepare(hosted.app)
            hosted.app.launch()
            var levels: [MemoryWarning.Level] = []
            let token = hosted.app.notificationCenter.addObserver(for: Application.DidReceiveMemoryWarningMessage.self)
            { levels.append($0.warning.level) }
            defer { token.cancel() }
            try fake.object.emitSignal(
                LifecycledProtocol.Signal.command.name,
                arguments: [
                    .string(FakeLifecycled.counterID), .string(LifecycledCommand.postName),
                    UserInfoBusCodec.encode(
                        UserInfo([
                            "name": "UIApplicationDidReceiveMemoryWarningNotification",
                            "userInfo": [ApplicationUserInfoKey.memoryWarningLevel: "critical"],
                        ])),
                ])
            let recorder = hosted.recorder
            try await hosted.changes.wait(for: "posted notification") { @MainActor in
                recorder.notificationNames.contains("UIApplicationDidReceiveMemoryWarningNotification")
            }
            #expect(levels == [.critical])
        }
    }

    @MainActor @Test("background tasks begun and ended are reported as BackgroundTaskBegan/Ended")
    func backgroundTasks() async throws {
        try await withFakeLifecycled { env in
            let bus = env.bus
            let fake = env.fake

            let hosted = Hosted(address: bus.address)
            defer { hosted.host.stop() }
            hosted.delegate.takesBackgroundTask = true
            await hosted.host.prepare(hosted.app)
            hosted.app.launch()
            #expect(hosted.app.applicationState == .active)

            try fake.command(FakeLifecycled.counterID, .foreground(false))
            try await hosted.waitForDelegateCall("applicationDidEnterBackground(_:)")
            #expect(hosted.app.applicationState == .background)
            let task = hosted.delegate.task
            try await fake.log.wait(for: LifecycledProtocol.Method.backgroundTaskBegan.name)
            hosted.app.endBackgroundTask(task)
            #expect(hosted.app.applicationState == .suspended)
            try await fake.log.wait(for: LifecycledProtocol.Method.backgroundTaskEnded.name)
            try await fake.log.wait(for: LifecycledProtocol.Method.reportState.name, "suspended") {
                CallLog.strings($0).last == "suspended"
            }

            let began = try #require(fake.log.calls(LifecycledProtocol.Method.backgroundTaskBegan.name).first)
            #expect(
                began.arguments == [.string(FakeLifecycled.counterID), .uint32(UInt32(task.rawValue)), .string("save")])
            let ended = try #require(fake.log.calls(LifecycledProtocol.Method.backgroundTaskEnded.name).first)
            #expect(ended.arguments == [.string(FakeLifecycled.counterID), .uint32(UInt32(task.rawValue))])
            // The task ended before the app reported suspended.
            let order = fake.log.all.map(\.member)
            let lastState = order.lastIndex(of: LifecycledProtocol.Method.reportState.name)!
            #expect(order.firstIndex(of: LifecycledProtocol.Method.backgroundTaskEnded.name)! < lastState)
        }
    }

    @MainActor
    @Test("a lifecycled restart (name released, taken by a new connection) leads to re-registration and a state resync")
    func reregistersAfterRestart() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "fake-daemon")
        defer { loop.shutdown() }
        let first = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { first.connection.close() }

        let hosted = Hosted(address: bus.address)
        defer { hosted.host.stop() }
        await hosted.host.prepare(hosted.app)
        hosted.app.launch()
        #expect(hosted.host.status.snapshot.registrations == 1)

        await first.stop()
        let second = try await FakeLifecycled.start(
            address: bus.address, loop: loop,
            facts: ["sleeping": false, "locked": false, "session-active": true, "foreground": true])
        defer { second.connection.close() }
        try await second.log.wait(for: LifecycledProtocol.Method.registerApp.name)
        try await second.log.wait(for: LifecycledProtocol.Method.reportState.name, "resync") {
            CallLog.strings($0) == [FakeLifecycled.counterID, "active"]
        }
        #expect(
            second.log.calls(LifecycledProtocol.Method.registerApp.name).map(CallLog.strings) == [
                [FakeLifecycled.counterID]
            ]
        )
        #expect(hosted.host.status.snapshot.registrations == 2)
        #expect(hosted.host.status.snapshot.daemonOwner == second.connection.uniqueName)

        // The new owner's Commands are accepted; the old connection is no one now.
        try second.command(FakeLifecycled.counterID, .memoryWarning(MemoryWarning(level: .low, source: "test")))
        try await hosted.waitForDelegateCall("applicationDidReceiveMemoryWarning(_:)")
    }

    @MainActor @Test("when its session bus goes away for good, the app ends through applicationWillTerminate")
    func busGoneEndsTheApp() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "fake-daemon")
        defer { loop.shutdown() }
        let fake = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { fake.connection.close() }
        let hosted = Hosted(address: bus.address)
        defer { hosted.host.stop() }
        await hosted.host.prepare(hosted.app)
        hosted.app.launch()
        #expect(hosted.host.status.isHosted)

        bus.kill()  // lifecycled and the bus daemon gone at once, as when the session ends
        try await hosted.waitForDelegateCall("applicationWillTerminate(_:)")
        #expect(hosted.app.applicationState == .notRunning)
    }

    @MainActor @Test("without a daemon the app runs on its defaults and registers when lifecycled appears")
    func daemonAbsentAtStart() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "fake-daemon")
        defer { loop.shutdown() }

        let hosted = Hosted(address: bus.address)
        defer { hosted.host.stop() }
        await hosted.host.prepare(hosted.app)
        #expect(!hosted.host.status.isHosted)
        hosted.app.launch()
        #expect(hosted.app.applicationState == .active)

        let fake = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { fake.connection.close() }
        try await fake.log.wait(for: LifecycledProtocol.Method.reportState.name, "resync") {
            CallLog.strings($0).last == "active"
        }
        #expect(hosted.host.status.isHosted)
    }

    @Test("the environment tells a process it is hosted")
    func environmentAppID() {
        #expect(
            LifecycledHostStatus.environmentAppID(in: ["LIFECYCLE_APP_ID": "org.example.Counter"])
                == "org.example.Counter")
        #expect(LifecycledHostStatus.environmentAppID(in: ["LIFECYCLE_APP_ID": "not an id"]) == nil)
        #expect(LifecycledHostStatus.environmentAppID(in: [:]) == nil)
    }

    @MainActor
    @Test("a daemon that takes the name while a registration to the old one fails is registered with afterwards")
    func daemonAppearingDuringAFailedRegistration() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "daemons")
        defer { loop.shutdown() }
        // The first daemon holds RegisterApp until the test lets it fail.
        let first = try await BusConnection(
            .address(bus.address), loop: loop, description: "failing-daemon", timeout: .seconds(10))
        defer { first.close() }
        let (arrived, arrival) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let object = try await first.export(
            ExportedInterface(
                name: LifecycledProtocol.interface,
                methods: [
                    .init(LifecycledProtocol.Method.registerApp.name, inSignature: "s", outSignature: "a{sv}a{sv}") {
                        _ in
                        arrival.yield()
                        for await _ in released { break }
                        throw BusError(name: BusError.Name.failed, message: "going away")
                    }
                ]), at: LifecycledProtocol.objectPath)
        defer { object.unexport() }
        #expect(try await first.requestName(LifecycledProtocol.busName) == .primaryOwner)

        let hosted = Hosted(address: bus.address)
        defer { hosted.host.stop() }
        let preparing = Task { await hosted.host.prepare(hosted.app) }
        for await _ in arrived { break }
        // While the call is held: the first daemon leaves the name and another one takes it; the
        // app hears both owner changes before the failed reply.
        try await first.releaseName(LifecycledProtocol.busName)
        let second = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { second.connection.close() }
        release.yield()
        await preparing.value
        _ = try await second.log.wait(
            for: LifecycledProtocol.Method.registerApp.name, "from the app, after the failure")
        #expect(second.log.calls(LifecycledProtocol.Method.registerApp.name).count == 1)
        #expect(await eventually { hosted.host.status.isHosted })
        #expect(hosted.host.status.snapshot.daemonOwner == second.connection.uniqueName)
    }
}
