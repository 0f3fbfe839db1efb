import AppLifecycle
import AppLifecycleTesting
import LifecycledClient
import LifecycledProtocol
import LifecycledTestSupport
import SystemdBus
import Testing

extension LifecycledHostTests {
    static let thermalStateDidChange = "NSProcessInfoThermalStateDidChangeNotification"
    static let didChangeStatusBarOrientation = "UIApplicationDidChangeStatusBarOrientationNotification"

    @MainActor @Test("RegisterApp's condition facts are the app's starting values, with no did-change notification")
    func conditionFactsAtRegistration() async throws {
        try await withFakeLifecycled(
            facts: [
                "sleeping": false, "locked": false, "session-active": true, "foreground": true,
                "low-power-mode": true, "thermal-state": 2, "background-refresh-status": 9,
            ]
        ) { env in
            let hosted = Hosted(address: env.bus.address)
            defer { hosted.host.stop() }
            await hosted.host.prepare(hosted.app)
            hosted.app.launch(options: hosted.host.launchOptions)
            #expect(hosted.app.applicationState == .active)
            #expect(hosted.app.isLowPowerModeEnabled)
            #expect(hosted.app.thermalState == .serious)
            // Out of range: ignored, the default kept.
            #expect(hosted.app.backgroundRefreshStatus == .available)
            try hosted.recorder.verifyAbsent("NSProcessInfoPowerStateDidChangeNotification")
            try hosted.recorder.verifyAbsent(Self.thermalStateDidChange)
        }
    }

    @MainActor @Test("conditions and the orientation arrive as Commands, in order; a bad value is dropped, not applied")
    func conditionCommands() async throws {
        try await withFakeLifecycled { env in
            let fake = env.fake
            let hosted = Hosted(address: env.bus.address)
            defer { hosted.host.stop() }
            await hosted.host.prepare(hosted.app)
            hosted.app.launch(options: hosted.host.launchOptions)
            try fake.command(FakeLifecycled.counterID, .lowPowerMode(true))
            try fake.command(FakeLifecycled.counterID, .thermalState(.critical))
            try fake.command(FakeLifecycled.counterID, .backgroundRefreshStatus(.restricted))
            try fake.object.emitSignal(
                LifecycledProtocol.Signal.command.name,
                arguments: [
                    .string(FakeLifecycled.counterID), .string("thermal-state"),
                    UserInfoBusCodec.encode(UserInfo(["value": .int(9)])),
                ])
            try fake.command(FakeLifecycled.counterID, .statusBarOrientation(.landscapeRight, duration: 0.3))
            let recorder = hosted.recorder
            try await hosted.changes.wait(for: Self.didChangeStatusBarOrientation) { @MainActor in
                recorder.notificationNames.contains(Self.didChangeStatusBarOrientation)
            }
            #expect(hosted.app.isLowPowerModeEnabled)
            #expect(hosted.app.thermalState == .critical)
            #expect(hosted.app.backgroundRefreshStatus == .restricted)
            #expect(hosted.app.statusBarOrientation == .landscapeRight)
            #expect(recorder.count(of: Self.thermalStateDidChange) == 1)
            try recorder.verifyOrder([
                "NSProcessInfoPowerStateDidChangeNotification", Self.thermalStateDidChange,
                "UIApplicationBackgroundRefreshStatusDidChangeNotification",
                "UIApplicationWillChangeStatusBarOrientationNotification", Self.didChangeStatusBarOrientation,
            ])
        }
    }
}
