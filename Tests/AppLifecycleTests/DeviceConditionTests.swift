import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

/// Low Power Mode, the thermal state and background refresh: the property, its notification, and
/// when a suspended app is told.
@MainActor
@Suite("The device's conditions in the app")
struct DeviceConditionTests {
    /// One condition: how the host reports it, the property, the notification, and two distinct values.
    struct Condition: Sendable, CustomStringConvertible {
        let notification: String
        let first: HostEvent
        let second: HostEvent
        let read: @MainActor @Sendable (Application) -> String
        let firstValue: String
        let defaultValue: String
        var description: String { notification }
    }

    nonisolated static let conditions = [
        Condition(
            notification: "NSProcessInfoPowerStateDidChangeNotification", first: .lowPowerMode(true),
            second: .lowPowerMode(false), read: { "\($0.isLowPowerModeEnabled)" }, firstValue: "true",
            defaultValue: "false"),
        Condition(
            notification: "NSProcessInfoThermalStateDidChangeNotification", first: .thermalState(.serious),
            second: .thermalState(.critical), read: { "\($0.thermalState)" }, firstValue: "serious",
            defaultValue: "nominal"),
        Condition(
            notification: "UIApplicationBackgroundRefreshStatusDidChangeNotification",
            first: .backgroundRefreshStatus(.denied), second: .backgroundRefreshStatus(.restricted),
            read: { "\($0.backgroundRefreshStatus)" }, firstValue: "denied", defaultValue: "available"),
    ]

    func launched() -> Harness {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.recorder.clear()
        return harness
    }

    func suspended() -> Harness {
        let harness = launched()
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .suspended)
        harness.recorder.clear()
        return harness
    }

    @Test("the defaults: Low Power Mode off, nominal, available")
    func defaults() {
        let harness = launched()
        #expect(!harness.app.isLowPowerModeEnabled)
        #expect(harness.app.thermalState == .nominal)
        #expect(harness.app.backgroundRefreshStatus == .available)
    }

    @Test("a change sets the property and posts its notification once, with no userInfo", arguments: conditions)
    func change(_ condition: Condition) throws {
        let harness = launched()
        var seen: [String] = []
        let observation = harness.center.addObserver(forName: LifecycleNotification.Name(condition.notification)) {
            _ in seen.append(condition.read(harness.app))
        }
        defer { observation.cancel() }
        harness.host.send(condition.first)
        #expect(condition.read(harness.app) == condition.firstValue)
        #expect(harness.recorder.names == [condition.notification])
        #expect(harness.recorder.entries.first?.userInfo.isEmpty == true)
        // An observer reads the new value inside the notification.
        #expect(seen == [condition.firstValue])
        harness.host.send(condition.second)
        #expect(harness.recorder.count(of: condition.notification) == 2)
    }

    @Test("a value the app already has posts nothing", arguments: conditions)
    func unchanged(_ condition: Condition) {
        let harness = launched()
        harness.host.send(condition.first)
        harness.host.send(condition.first)
        #expect(harness.recorder.count(of: condition.notification) == 1)
    }

    @Test("reported before launch: the app starts with the value and is not told of a change", arguments: conditions)
    func beforeLaunch(_ condition: Condition) {
        let harness = Harness(FullDelegate())
        harness.app.handle(condition.first)
        harness.launch()
        #expect(condition.read(harness.app) == condition.firstValue)
        #expect(harness.recorder.count(of: condition.notification) == 0)
        harness.host.send(condition.first)
        #expect(harness.recorder.count(of: condition.notification) == 0)
    }

    @Test("a running background app is told at once", arguments: conditions)
    func runningBackground(_ condition: Condition) {
        let delegate = FullDelegate()
        delegate.onDidEnterBackground = { app in _ = app.beginBackgroundTask(withName: "upload") }
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        #expect(harness.app.applicationState == .background)
        harness.host.send(condition.first)
        #expect(harness.recorder.count(of: condition.notification) == 1)
    }

    @Test("a suspended app: the property follows at once, the notification waits for the foreground")
    func suspendedThenReturns() throws {
        for condition in Self.conditions {
            let harness = suspended()
            harness.host.send(condition.first)
            harness.host.send(condition.second)
            harness.host.send(condition.first)
            #expect(condition.read(harness.app) == condition.firstValue, "\(condition)")
            #expect(harness.recorder.entries.isEmpty, "\(condition)")
            harness.host.send(.foreground(true))
            #expect(harness.recorder.count(of: condition.notification) == 1, "\(condition)")
            try harness.recorder.verifyOrder(["applicationDidBecomeActive(_:)", condition.notification])
        }
    }

    @Test("a suspended app woken into the background reads the latest value but is told only in the foreground")
    func wokenForFetch() throws {
        let delegate = FullDelegate()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.lowPowerMode(true))
        harness.host.send(.backgroundFetch)
        #expect(harness.app.applicationState == .background)
        #expect(harness.app.isLowPowerModeEnabled)
        try harness.recorder.verifyAbsent("NSProcessInfoPowerStateDidChangeNotification")
        delegate.fetchCompletion?(.noData)
        harness.host.send(.foreground(true))
        #expect(harness.recorder.count(of: "NSProcessInfoPowerStateDidChangeNotification") == 1)
    }

    @Test("changed and changed back while suspended: nothing to tell", arguments: conditions)
    func netNoChange(_ condition: Condition) {
        let harness = suspended()
        harness.host.send(condition.first)
        harness.host.send(condition.second)
        // Back to the value the app was last told of (the default) before it returns.
        harness.host.send(Self.defaultEvent(of: condition))
        harness.host.send(.foreground(true))
        #expect(condition.read(harness.app) == condition.defaultValue)
        #expect(harness.recorder.count(of: condition.notification) == 0)
    }

    static func defaultEvent(of condition: Condition) -> HostEvent {
        switch condition.first {
        case .lowPowerMode: .lowPowerMode(false)
        case .thermalState: .thermalState(.nominal)
        default: .backgroundRefreshStatus(.available)
        }
    }

    @Test("on the return: foreground, time change, power, thermal, refresh, then orientation")
    func orderOnReturn() throws {
        let harness = suspended()
        harness.host.send(.statusBarOrientation(.landscapeLeft, duration: 0.3))
        harness.host.send(.backgroundRefreshStatus(.restricted))
        harness.host.send(.thermalState(.fair))
        harness.host.send(.lowPowerMode(true))
        harness.host.send(.significantTimeChange(SignificantTimeChange(reason: .midnight)))
        #expect(harness.recorder.entries.isEmpty)
        harness.host.send(.foreground(true))
        try harness.recorder.verifyOrder([
            Application.names.willEnterForeground, "applicationWillEnterForeground(_:)",
            "applicationDidBecomeActive(_:)", Application.names.timeChange,
            "NSProcessInfoPowerStateDidChangeNotification", "NSProcessInfoThermalStateDidChangeNotification",
            "UIApplicationBackgroundRefreshStatusDidChangeNotification",
            "application(_:willChangeStatusBarOrientation:duration:)",
            "application(_:didChangeStatusBarOrientation:)",
        ])
    }

    @Test("the notifications' names are the raw strings and their typed forms decode")
    func names() throws {
        #expect(Application.powerStateDidChangeNotification.rawValue == "NSProcessInfoPowerStateDidChangeNotification")
        #expect(
            Application.thermalStateDidChangeNotification.rawValue == "NSProcessInfoThermalStateDidChangeNotification")
        #expect(
            Application.backgroundRefreshStatusDidChangeNotification.rawValue
                == "UIApplicationBackgroundRefreshStatusDidChangeNotification")
        let harness = launched()
        var typed: [String] = []
        let tokens = [
            harness.center.addObserver(for: Application.PowerStateDidChangeMessage.self) { _ in typed.append("power") },
            harness.center.addObserver(for: Application.ThermalStateDidChangeMessage.self) { _ in
                typed.append("thermal")
            },
            harness.center.addObserver(for: Application.BackgroundRefreshStatusDidChangeMessage.self) { _ in
                typed.append("refresh")
            },
        ]
        defer { tokens.forEach { $0.cancel() } }
        harness.host.send(.thermalState(.critical))
        harness.host.send(.lowPowerMode(true))
        harness.host.send(.backgroundRefreshStatus(.denied))
        #expect(typed == ["thermal", "power", "refresh"])
    }
}
