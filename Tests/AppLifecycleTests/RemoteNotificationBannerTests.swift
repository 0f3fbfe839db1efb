import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

/// A push's banner as the seeds describe it: a click reaches the remote path, its category's
/// actions are its buttons, an `aps` without `badge` clears the badge.
@MainActor
@Suite("Remote notifications: the push's banner, its click, its actions and the badge")
struct RemoteNotificationBannerTests {
    /// Implements only the plain `didReceiveRemoteNotification`, recording the state it ran in.
    @MainActor final class PlainReceiver: ApplicationDelegate {
        var received: [(payload: UserInfo, state: ApplicationState)] = []
        func application(_ application: Application, didReceiveRemoteNotification userInfo: UserInfo) {
            received.append((userInfo, application.applicationState))
        }
    }

    /// Implements the remote action and keeps its completion handler.
    @MainActor final class ActionHandler: ApplicationDelegate {
        var actions: [(identifier: String?, payload: UserInfo, state: ApplicationState)] = []
        var completion: (@Sendable () -> Void)?
        func application(
            _ application: Application, handleActionWithIdentifier identifier: String?,
            forRemoteNotification userInfo: UserInfo, completionHandler: @escaping @Sendable () -> Void
        ) {
            actions.append((identifier, userInfo, application.applicationState))
            completion = completionHandler
        }
    }

    static let payload: UserInfo = ["id": "m7", "aps": ["alert": "3 new messages", "badge": 3, "category": "mail"]]

    @Test("a click on a push's banner: willEnterForeground, the fetch variant while inactive, didBecomeActive")
    func clickWhileRunning() throws {
        let delegate = FullDelegate()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.recorder.clear()
        harness.host.send(.remoteNotificationOpened(Self.payload))
        try harness.recorder.verifyOrder([
            "applicationWillEnterForeground(_:)", "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
            "applicationDidBecomeActive(_:)",
        ])
        let call = try #require(
            harness.recorder.entries(named: "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)")
                .first)
        #expect(call.state == .inactive)
        #expect(harness.app.applicationState == .active)
        // Not a local notification.
        #expect(harness.recorder.count(of: "application(_:didReceive:)") == 0)
        // The click shows nothing again.
        #expect(harness.host.presentedNotifications.isEmpty)
    }

    @Test("without the fetch variant a click reaches the plain didReceiveRemoteNotification, also from suspended")
    func clickReachesThePlainVariant() throws {
        let delegate = PlainReceiver()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.clock.advance(by: .seconds(60))
        #expect(harness.app.applicationState == .suspended)
        harness.host.send(.remoteNotificationOpened(Self.payload))
        #expect(delegate.received.map(\.payload) == [Self.payload])
        #expect(delegate.received.map(\.state) == [.inactive])
        #expect(harness.app.applicationState == .active)
    }

    @Test("a push's banner offers the actions of the registered category aps.category names")
    func categoryActions() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        let reply = UserNotificationAction(identifier: "reply", title: "Reply", activationMode: .foreground)
        let archive = UserNotificationAction(identifier: "archive", title: "Archive")
        harness.app.registerUserNotificationSettings(
            UserNotificationSettings(
                types: [.alert, .badge],
                categories: [UserNotificationCategory(identifier: "mail", actions: [reply, archive])]))
        harness.host.send(.foreground(false))
        harness.host.send(.remoteNotification(Self.payload))
        let shown = try #require(harness.host.presentedRemoteNotifications.first)
        #expect(shown.payload == Self.payload)
        #expect(shown.actions.map(\.identifier) == ["reply", "archive"])
        #expect(harness.host.presentedNotifications.first?.category == "mail")
        #expect(harness.host.presentedNotifications.first?.userInfo == Self.payload)
        #expect(harness.host.presentedNotifications.first?.hasAction == true)

        // A category the app did not register: the banner, without buttons.
        harness.host.send(.remoteNotification(["aps": ["alert": "hi", "category": "unknown"]]))
        #expect(harness.host.presentedRemoteNotifications.count == 2)
        #expect(harness.host.presentedRemoteNotifications.last?.actions.isEmpty == true)
        #expect(harness.host.presentedNotifications.last?.category == nil)

        // show-view false: "the alert's View button is not shown" (no default action).
        harness.host.send(.remoteNotification(["aps": ["alert": ["body": "FYI", "show-view": false]]]))
        #expect(harness.host.presentedNotifications.last?.alertBody == "FYI")
        #expect(harness.host.presentedNotifications.last?.hasAction == false)
    }

    @Test("an action on a push's banner runs handleActionWithIdentifier:forRemoteNotification: in the background")
    func actionRunsInTheBackground() throws {
        let delegate = ActionHandler()
        let harness = Harness(delegate)
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.clock.advance(by: .seconds(60))
        #expect(harness.app.applicationState == .suspended)
        harness.host.send(.remoteNotificationAction(identifier: "archive", payload: Self.payload))
        #expect(delegate.actions.map(\.identifier) == ["archive"])
        #expect(delegate.actions.map(\.payload) == [Self.payload])
        #expect(delegate.actions.map(\.state) == [.background])
        // Held in the background until the handler completes (within its 30 s).
        harness.host.clock.advance(by: .seconds(20))
        #expect(harness.app.applicationState == .background)
        delegate.completion?()
        harness.host.clock.advance(by: .seconds(60))
        #expect(harness.app.applicationState == .suspended)
    }

    @Test("an aps without badge clears the badge (the seeds); one without aps, or a bad badge, leaves it")
    func absentBadgeClears() {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.remoteNotification(["aps": ["badge": 4]]))
        #expect(harness.app.applicationIconBadgeNumber == 4)
        harness.host.send(.remoteNotification(["data": "no aps"]))
        #expect(harness.app.applicationIconBadgeNumber == 4)
        harness.host.send(.remoteNotification(["aps": ["badge": "many"]]))
        #expect(harness.app.applicationIconBadgeNumber == 4)
        harness.host.send(.remoteNotification(["aps": ["alert": "read"]]))
        #expect(harness.app.applicationIconBadgeNumber == 0)
        #expect(harness.host.badgeNumbers == [4, 0])

        // Launched for a push without badge while the host shows one (lifecycled tells it at
        // registration, before the launch): cleared too.
        let relaunched = Harness(FullDelegate())
        relaunched.app.handle(.applicationIconBadgeNumber(4))
        var options = LaunchOptions()
        options.remoteNotification = ["aps": ["alert": "read"]]
        options.launchedInBackground = true
        relaunched.launch(options)
        #expect(relaunched.app.applicationIconBadgeNumber == 0)
        #expect(relaunched.host.badgeNumbers == [0])
    }

    @Test("a click that launches the app: the payload in the launch options, no second banner")
    func clickLaunch() throws {
        let delegate = FullDelegate()
        let harness = Harness(delegate)
        var options = LaunchOptions()
        options.remoteNotification = Self.payload
        harness.launch(options)
        #expect(harness.host.presentedNotifications.isEmpty)
        #expect(harness.host.badgeNumbers.isEmpty)
        try harness.recorder.verifyOrder([
            Application.names.didFinishLaunching, "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
            "applicationDidBecomeActive(_:)",
        ])

        // A launch into the background is the push arriving: its banner and badge.
        let background = Harness(FullDelegate())
        options.launchedInBackground = true
        background.launch(options)
        #expect(background.host.presentedRemoteNotifications.map(\.payload) == [Self.payload])
        #expect(background.host.badgeNumbers == [3])
    }

    @Test("isRegisteredForRemoteNotifications is true from launch when the host kept a registration")
    func restoredRegistration() {
        let harness = Harness(FullDelegate())
        harness.app.restoreRemoteNotificationRegistration()
        harness.launch()
        #expect(harness.app.isRegisteredForRemoteNotifications)
        harness.host.send(.unregisteredForRemoteNotifications)
        #expect(!harness.app.isRegisteredForRemoteNotifications)
    }

    @Test("the command line after the executable is ApplicationLaunchOptionsArgumentsKey")
    func argumentsKey() {
        let options = LaunchOptions.fromServiceManager(
            environment: [:], processID: 1, arguments: ["--inbox", "work", ""])
        #expect(options.arguments == ["--inbox", "work", ""])
        #expect(
            options.userInfo["ApplicationLaunchOptionsArgumentsKey"]
                == .array([.string("--inbox"), .string("work"), .string("")]))
        #expect(LaunchOptions.fromServiceManager(environment: [:], processID: 1, arguments: []).isEmpty)
    }
}
