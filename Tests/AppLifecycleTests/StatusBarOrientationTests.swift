import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

/// A delegate that supports only the orientations it is given.
@MainActor
final class OrientationDelegate: ApplicationDelegate {
    var supported: InterfaceOrientationMask
    init(supported: InterfaceOrientationMask) { self.supported = supported }
    func application(_ application: Application, supportedInterfaceOrientationsFor window: Window?)
        -> InterfaceOrientationMask
    { supported }
    func application(
        _ application: Application, willChangeStatusBarOrientation newStatusBarOrientation: InterfaceOrientation,
        duration: TimeInterval
    ) {}
    func application(
        _ application: Application, didChangeStatusBarOrientation oldStatusBarOrientation: InterfaceOrientation
    ) {}
}

/// `.statusBarOrientation` against the orientations the app supports, and while it is suspended.
@MainActor
@Suite("Status-bar orientation")
struct StatusBarOrientationTests {
    static let will = "application(_:willChangeStatusBarOrientation:duration:)"
    static let did = "application(_:didChangeStatusBarOrientation:)"
    static let willNotification = "UIApplicationWillChangeStatusBarOrientationNotification"
    static let didNotification = "UIApplicationDidChangeStatusBarOrientationNotification"

    func launched(_ delegate: any ApplicationDelegate, configuration: Application.Configuration? = nil) -> Harness {
        let harness = configuration.map { Harness(delegate, configuration: $0) } ?? Harness(delegate)
        harness.launch()
        harness.recorder.clear()
        return harness
    }

    @Test("an orientation outside the delegate's mask is not applied: the status bar stays")
    func outsideDelegateMask() throws {
        let delegate = OrientationDelegate(supported: .allButUpsideDown)
        let harness = launched(delegate)
        harness.host.send(.statusBarOrientation(.portraitUpsideDown, duration: 0.3))
        #expect(harness.app.statusBarOrientation == .portrait)
        try harness.recorder.verifyAbsent(Self.will)
        try harness.recorder.verifyAbsent(Self.willNotification)
        // The app was asked, and said so.
        #expect(harness.recorder.count(of: "ApplicationSupportedInterfaceOrientationsNotification") == 1)
        // Supported from now on: applied.
        delegate.supported = .all
        harness.host.send(.statusBarOrientation(.portraitUpsideDown, duration: 0.3))
        #expect(harness.app.statusBarOrientation == .portraitUpsideDown)
        try harness.recorder.verifyConsecutive([Self.will, Self.willNotification, Self.did, Self.didNotification])
    }

    @Test("without the delegate method, the configuration's mask decides")
    func configurationMask() {
        let harness = launched(
            EmptyDelegate(),
            configuration: .init(supportedInterfaceOrientations: .landscape, isStateRestorationEnabled: false))
        harness.host.send(.statusBarOrientation(.portraitUpsideDown, duration: 0))
        #expect(harness.app.statusBarOrientation == .portrait)
        harness.host.send(.statusBarOrientation(.landscapeRight, duration: 0))
        #expect(harness.app.statusBarOrientation == .landscapeRight)
        #expect(harness.recorder.count(of: Self.willNotification) == 1)
    }

    @Test("the same orientation twice is no change; unknown is never applied")
    func sameOrientation() {
        let harness = launched(FullDelegate())
        harness.host.send(.statusBarOrientation(.portrait, duration: 0.3))
        #expect(harness.recorder.count(of: Self.willNotification) == 0)
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        #expect(harness.recorder.count(of: Self.willNotification) == 1)
        #expect(harness.recorder.count(of: Self.didNotification) == 1)
        harness.host.send(.statusBarOrientation(.unknown, duration: 0.3))
        #expect(harness.app.statusBarOrientation == .landscapeLeft)
        #expect(harness.recorder.count(of: Self.willNotification) == 1)
    }

    @Test("will and did carry the new and the old orientation; the property changes between them")
    func userInfoAndProperty() throws {
        let harness = launched(FullDelegate())
        var seen: [InterfaceOrientation] = []
        let tokens = [
            harness.center.addObserver(for: Application.WillChangeStatusBarOrientationMessage.self) { _ in
                seen.append(harness.app.statusBarOrientation)
            },
            harness.center.addObserver(for: Application.DidChangeStatusBarOrientationMessage.self) { _ in
                seen.append(harness.app.statusBarOrientation)
            },
        ]
        defer { tokens.forEach { $0.cancel() } }
        harness.host.send(.statusBarOrientation(.landscapeRight, duration: 0.3))
        let will = try #require(harness.recorder.entries(named: Self.willNotification).first)
        let did = try #require(harness.recorder.entries(named: Self.didNotification).first)
        #expect(will.userInfo[ApplicationUserInfoKey.statusBarOrientation] == .int(3))
        #expect(did.userInfo[ApplicationUserInfoKey.statusBarOrientation] == .int(1))
        #expect(ApplicationUserInfoKey.statusBarOrientation == "UIApplicationStatusBarOrientationUserInfoKey")
        #expect(seen == [.portrait, .landscapeRight])
    }

    @Test("a suspended app gets only the latest orientation, on its return, with no pairs for the ones between")
    func suspendedGetsLatest() throws {
        let harness = launched(FullDelegate())
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .suspended)
        harness.recorder.clear()
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        harness.host.send(.statusBarOrientation(.portraitUpsideDown, duration: 0.3))
        harness.host.send(.statusBarOrientation(.landscapeRight, duration: 0.5))
        #expect(harness.recorder.entries.isEmpty)
        #expect(harness.app.statusBarOrientation == .portrait)
        harness.host.send(.foreground(true))
        #expect(harness.recorder.count(of: Self.will) == 1)
        #expect(harness.recorder.count(of: Self.did) == 1)
        let will = try #require(harness.recorder.entries(named: Self.willNotification).first)
        #expect(will.userInfo[ApplicationUserInfoKey.statusBarOrientation] == .int(3))
        #expect(harness.app.statusBarOrientation == .landscapeRight)
        try harness.recorder.verifyOrder(["applicationDidBecomeActive(_:)", Self.will, Self.did])
    }

    @Test("back to where it was while suspended, or to an unsupported one: nothing on the return")
    func suspendedNoNetChange() throws {
        let delegate = OrientationDelegate(supported: .allButUpsideDown)
        let harness = launched(delegate)
        harness.host.send(.foreground(false))
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        harness.host.send(.statusBarOrientation(.portrait, duration: 0.3))
        harness.host.send(.foreground(true))
        try harness.recorder.verifyAbsent(Self.will)
        harness.host.send(.foreground(false))
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        harness.host.send(.statusBarOrientation(.portraitUpsideDown, duration: 0.3))
        harness.host.send(.foreground(true))
        try harness.recorder.verifyAbsent(Self.will)
        #expect(harness.app.statusBarOrientation == .portrait)
    }
}

@Suite("iio-sensor-proxy's AccelerometerOrientation as an interface orientation")
struct SensorOrientationTests {
    @Test(
        "each reading maps to UIKit's interface orientation",
        arguments: [
            ("normal", InterfaceOrientation.portrait), ("bottom-up", .portraitUpsideDown),
            ("left-up", .landscapeLeft), ("right-up", .landscapeRight),
        ])
    func mapping(_ reading: String, _ orientation: InterfaceOrientation) {
        #expect(InterfaceOrientation(sensorOrientation: reading) == orientation)
    }

    @Test("undefined and anything else: no orientation")
    func undefined() {
        for reading in ["undefined", "", "Left-Up", "left_up", "up", "normal "] {
            #expect(InterfaceOrientation(sensorOrientation: reading) == nil, "\(reading)")
        }
    }
}
