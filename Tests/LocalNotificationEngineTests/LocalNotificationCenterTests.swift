import AppLifecycle
import DesktopIntegration
import Foundation
import LocalNotificationEngine
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// A host the tests control: where each app is, and what the center handed over or launched.
@MainActor
private final class FakeHost: LocalNotificationCenterHost {
    var presences: [String: LocalNotificationCenter.AppPresence] = [:]
    var deliveries: [(appID: String, delivery: LocalNotificationCenter.Delivery)] = []
    var launches: [(appID: String, options: LaunchOptions, activationToken: String?)] = []

    func presence(of appID: String) -> LocalNotificationCenter.AppPresence { presences[appID] ?? .unknown }
    func displayName(of appID: String) -> String { "Name of \(appID)" }
    func deliver(_ delivery: LocalNotificationCenter.Delivery, to appID: String) async {
        deliveries.append((appID, delivery))
    }
    func launch(_ appID: String, options: LaunchOptions, activationToken: String?) throws {
        launches.append((appID, options, activationToken))
        // Launched: what follows waits for the app to connect.
        presences[appID] = .starting
    }

    /// The notifications handed over as `didReceive`, by identifier.
    func received(_ appID: String) -> [String] {
        deliveries.compactMap {
            guard $0.appID == appID, case .notification(let notification) = $0.delivery else { return nil }
            return notification.identifier
        }
    }
}

private let app = "org.example.Engine"
/// The instant every test's clock reads: the notifications are due an hour before it.
private let now = 1_800_000_000.0

/// A notification of ``app`` that is due at ``now``.
private func due(_ identifier: String, buttons: [ScheduledLocalNotification.Button] = []) throws
    -> ScheduledLocalNotification
{
    try ScheduledLocalNotification(
        appID: app,
        payload: [
            "identifier": .string(identifier), "fireDate": .date(Date(timeIntervalSince1970: now - 3_600)),
            "alertTitle": .string("Title of \(identifier)"), "alertBody": .string("Body"),
        ],
        buttons: buttons, scheduledAt: Date(timeIntervalSince1970: now - 7_200))
}

@MainActor
private func makeCenter(_ host: FakeHost, scheduleURL: URL? = nil) -> LocalNotificationCenter {
    var configuration = LocalNotificationCenter.Configuration(scheduleURL: scheduleURL)
    configuration.now = { now }
    let center = LocalNotificationCenter(configuration: configuration, logger: Logger(label: "test.engine"))
    center.host = host
    return center
}

@Suite("LocalNotificationCenter through a fake host, no bus")
@MainActor
struct LocalNotificationCenterTests {
    @Test func aNotificationThatFiresWhileItsAppIsActiveIsDelivered() async throws {
        let host = FakeHost()
        host.presences[app] = .active
        let center = makeCenter(host)
        try await center.schedule(due("tea"))
        #expect(center.schedule.count == 1)
        center.fireDue()
        #expect(await eventually { host.received(app) == ["tea"] })
        #expect(center.schedule.count == 0)
        #expect(center.undelivered.isEmpty && center.delivering.isEmpty)
        // The app's view of its schedule: tea added, then gone.
        #expect(
            await eventually {
                host.deliveries.contains { $0.delivery == .scheduleChanged(removed: ["tea"], updated: []) }
            })
    }

    @Test func oneThatFiresWhileTheAppIsInactiveWithNoServerIsKeptInTheFileUntilTheAppIsActive() async throws {
        let directory = try TemporaryDirectory(prefix: "engine-kept")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path).appendingPathComponent(LocalNotificationScheduleFile.fileName)
        let host = FakeHost()
        host.presences[app] = .running
        let center = makeCenter(host, scheduleURL: url)
        await center.start(connection: nil, loop: nil)
        defer { center.stop() }
        try await center.schedule(due("tea"))
        center.fireDue()
        #expect(await eventually { center.undelivered[app]?.count == 1 })
        #expect(host.received(app).isEmpty, "handed to an app that is not active")
        // Kept on disk, so a restart keeps it too.
        #expect(
            await eventually { LocalNotificationScheduleFile.load(from: url).undelivered.map(\.identifier) == ["tea"] })
        let restarted = makeCenter(FakeHost(), scheduleURL: url)
        restarted.ensureLoaded()
        #expect(restarted.undelivered[app]?.map(\.notification.identifier) == ["tea"])

        host.presences[app] = .active
        center.appBecameActive(app)
        #expect(await eventually { host.received(app) == ["tea"] })
        #expect(center.undelivered.isEmpty)
        #expect(await eventually { LocalNotificationScheduleFile.load(from: url).undelivered.isEmpty })
    }

    @Test func oneItsFileCouldNotLoadAgainIsRefusedWhenScheduled() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        let center = makeCenter(host)
        var huge = try due("huge")
        huge.payload["alertBody"] = .string(String(repeating: "x", count: 100_000))
        await #expect {
            try await center.schedule(huge)
        } throws: { error in
            (error as? LocalNotificationCenter.Refusal)?.code == .invalid
        }
        #expect(center.schedule.count == 0)
    }

    @Test func aScopedCenterServesItsAppAndWritesOtherAppsEntriesBackAsRead() async throws {
        let directory = try TemporaryDirectory(prefix: "engine-scope")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path).appendingPathComponent(LocalNotificationScheduleFile.fileName)
        var other = try due("theirs")
        other.appID = "org.example.Other"
        try LocalNotificationScheduleFile.save(.init(notifications: [other], undelivered: [], rejected: []), to: url)
        let host = FakeHost()
        host.presences[app] = .active
        var configuration = LocalNotificationCenter.Configuration(scheduleURL: url, appScope: app)
        configuration.now = { now }
        let center = LocalNotificationCenter(configuration: configuration, logger: Logger(label: "test.engine"))
        center.host = host
        try await center.schedule(due("mine"))
        #expect(center.schedule.count == 1, "another app's notification was scheduled")
        #expect(
            Set(LocalNotificationScheduleFile.load(from: url).notifications.map(\.identifier)) == ["mine", "theirs"])
    }
}

/// A private session bus with python-dbusmock's `notification_daemon`, and a center started on it.
@MainActor
private func withNotificationServer(
    _ host: FakeHost, _ body: @MainActor (LocalNotificationCenter, DBusMock) async throws -> Void
) async throws {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let loop = try EventLoop(name: "engine-test")
    defer { loop.shutdown() }
    let connection = try await BusConnection(
        .address(bus.address), loop: loop, description: "engine-test", timeout: .seconds(5))
    defer { connection.close() }
    let server = try DBusMock(template: "notification_daemon", address: bus.address)
    defer { server.stop() }
    let center = makeCenter(host)
    await center.start(connection: connection, loop: loop)
    defer { center.stop() }
    #expect(await eventually { center.server?.serverOwner != nil }, "the center did not see the notification server")
    try await body(center, server)
}

/// Whether a `CloseNotification` call the mock recorded closes banner `id` (the mock's template
/// declares its argument `i`, so it records a plain number).
private func closes(_ call: String, _ id: UInt32) -> Bool {
    call.contains("<\(id)>") || call.contains("<uint32 \(id)>")
}

private func invoke(_ server: DBusMock, _ id: UInt32, _ key: String) throws {
    try server.emitSignal(
        interface: "org.freedesktop.Notifications", name: "ActionInvoked", signature: "us",
        arguments: ["uint32 \(id)", "'\(key)'"])
}

@Suite("LocalNotificationCenter with a notification server", .serialized, .timeLimit(.minutes(1)))
@MainActor
struct LocalNotificationCenterBannerTests {
    @Test func oneThatFiresForAnAppThatIsNotRunningIsABannerWhoseClickLaunchesIt() async throws {
        let host = FakeHost()
        host.presences[app] = .notRunning
        try await withNotificationServer(host) { center, server in
            try await center.schedule(due("tea"))
            center.fireDue()
            #expect(try await eventually { try server.methodCalls("Notify").contains("'Title of tea'") }, "no banner")
            #expect(try server.methodCalls("Notify").contains("'Name of \(app)'"), "not the host's name for the app")
            #expect(await eventually { center.banners[1] != nil })
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActivationToken", signature: "us",
                arguments: ["uint32 1", "'the-token'"])
            #expect(await eventually { center.activationTokens[1] == "the-token" })
            try invoke(server, 1, "default")
            #expect(await eventually { host.launches.count == 1 }, "the click did not launch the app")
            let launch = try #require(host.launches.first)
            #expect(launch.appID == app)
            #expect(launch.options.localNotification?.identifier == "tea")
            #expect(launch.activationToken == "the-token")
            #expect(host.received(app).isEmpty)
            // Acted on once: withdrawn and forgotten (a later ActionInvoked for it is ignored).
            #expect(center.banners.isEmpty && center.activationTokens.isEmpty)
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 1) } })
        }
    }

    @Test func aClickOnARunningAppsBannerOpensItWithoutALaunch() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        try await withNotificationServer(host) { center, server in
            try await center.schedule(due("tea"))
            center.fireDue()
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            try invoke(server, 1, "default")
            #expect(
                await eventually {
                    host.deliveries.contains {
                        guard case .opened(let notification, nil) = $0.delivery else { return false }
                        return notification.identifier == "tea"
                    }
                }, "the click was not delivered as opened")
            #expect(host.launches.isEmpty)
        }
    }

    @Test func anActionLaunchesTheAppInTheBackgroundThenHandsItTheAction() async throws {
        let host = FakeHost()
        host.presences[app] = .notRunning
        try await withNotificationServer(host) { center, server in
            try await center.schedule(due("mail", buttons: [.init(identifier: "archive", title: "Archive")]))
            center.fireDue()
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            try invoke(server, 1, "archive")
            #expect(await eventually { host.launches.count == 1 }, "the action did not launch the app")
            #expect(host.launches.first?.options.launchedInBackground == true)
            #expect(
                await eventually {
                    host.deliveries.contains {
                        guard case .action("archive", let notification) = $0.delivery else { return false }
                        return notification.identifier == "mail"
                    }
                }, "the action was not handed over after the launch")
        }
    }

    @Test func cancellingANotificationWithdrawsItsBanner() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        try await withNotificationServer(host) { center, server in
            try await center.schedule(due("tea"))
            center.fireDue()
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            try await center.cancel(app, identifier: "tea")
            #expect(center.banners.isEmpty && center.bannerIDs.isEmpty)
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 1) } })
        }
    }
}

/// A push's banner of ``app`` as `Application` presents it: its userInfo is the push's payload.
private func pushBanner(_ identifier: String, buttons: [ScheduledLocalNotification.Button] = []) throws
    -> ScheduledLocalNotification
{
    try ScheduledLocalNotification(
        appID: app,
        payload: [
            "identifier": .string("remote-\(identifier)"), "alertBody": .string("Push \(identifier)"),
            "userInfo": .dictionary(["id": .string(identifier), "aps": .dictionary(["alert": .string("Push")])]),
        ],
        buttons: buttons, scheduledAt: Date(timeIntervalSince1970: now), isRemote: true)
}

private let pushPayload: UserInfo = ["id": "p1", "aps": ["alert": "Push"]]

@Suite("LocalNotificationCenter: a push's banner remembers it is remote", .serialized, .timeLimit(.minutes(1)))
@MainActor
struct LocalNotificationCenterPushBannerTests {
    @Test func aClickOnARunningAppsPushBannerIsRemoteOpenedNotALocalNotification() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        try await withNotificationServer(host) { center, server in
            center.present(try pushBanner("p1"))
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            #expect(center.banners[1]?.remotePayload == pushPayload)
            try invoke(server, 1, "default")
            #expect(
                await eventually {
                    host.deliveries.contains {
                        guard case .remoteOpened(let payload, nil) = $0.delivery else { return false }
                        return payload == pushPayload
                    }
                }, "the click was not delivered as remoteOpened")
            #expect(!host.deliveries.contains { if case .opened = $0.delivery { true } else { false } })
            #expect(host.launches.isEmpty)
        }
    }

    @Test func cancellingAllLocalNotificationsWithdrawsTheirBannersNotAPushs() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        try await withNotificationServer(host) { center, server in
            center.present(try pushBanner("p1"))
            #expect(await eventually { center.banners[1] != nil }, "no push banner")
            try await center.schedule(due("tea"))
            center.fireDue()
            #expect(await eventually { center.banners[2] != nil }, "no local banner")
            try await center.cancel(app, identifier: nil)
            #expect(try await eventually { try server.calls("CloseNotification").contains { closes($0, 2) } })
            #expect(try !server.calls("CloseNotification").contains { closes($0, 1) })
            #expect(center.banners[1] != nil && center.banners[2] == nil)
        }
    }

    @Test func aClickOnANotRunningAppsPushBannerLaunchesItWithTheRemoteNotificationKeyAndTheToken() async throws {
        let host = FakeHost()
        host.presences[app] = .notRunning
        try await withNotificationServer(host) { center, server in
            center.present(try pushBanner("p1"))
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            try server.emitSignal(
                interface: "org.freedesktop.Notifications", name: "ActivationToken", signature: "us",
                arguments: ["uint32 1", "'push-token'"])
            #expect(await eventually { center.activationTokens[1] == "push-token" })
            try invoke(server, 1, "default")
            #expect(await eventually { host.launches.count == 1 }, "the click did not launch the app")
            let launch = try #require(host.launches.first)
            #expect(launch.options.remoteNotification == pushPayload)
            #expect(launch.options.localNotification == nil)
            #expect(launch.options.launchedInBackground == false)
            #expect(launch.options[.activationToken] == .string("push-token"))
            #expect(launch.activationToken == "push-token")
        }
    }

    @Test func anActionOnAPushBannerLaunchesInTheBackgroundThenHandsItTheRemoteAction() async throws {
        let host = FakeHost()
        host.presences[app] = .notRunning
        try await withNotificationServer(host) { center, server in
            center.present(try pushBanner("p1", buttons: [.init(identifier: "archive", title: "Archive")]))
            #expect(await eventually { center.banners[1] != nil }, "no banner")
            #expect(try server.methodCalls("Notify").contains("'archive'"), "the category's action is not a button")
            try invoke(server, 1, "archive")
            #expect(await eventually { host.launches.count == 1 }, "the action did not launch the app")
            #expect(host.launches.first?.options.launchedInBackground == true)
            #expect(host.launches.first?.options.remoteNotification == nil)
            #expect(
                await eventually {
                    host.deliveries.contains {
                        guard case .remoteAction("archive", let payload) = $0.delivery else { return false }
                        return payload == pushPayload
                    }
                }, "the action was not handed over as remoteAction")
        }
    }
}

@Suite("LocalNotificationCenter: a push's banner without a server")
@MainActor
struct LocalNotificationCenterKeptPushTests {
    @Test func aKeptPushBannerStaysRemoteInTheFileAndIsDroppedAtActivation() async throws {
        let directory = try TemporaryDirectory(prefix: "engine-kept-push")
        defer { directory.remove() }
        let url = URL(fileURLWithPath: directory.path).appendingPathComponent(LocalNotificationScheduleFile.fileName)
        let host = FakeHost()
        host.presences[app] = .running
        let center = makeCenter(host, scheduleURL: url)
        await center.start(connection: nil, loop: nil)
        defer { center.stop() }
        center.present(try pushBanner("p1"))
        #expect(await eventually { center.undelivered[app]?.count == 1 })
        #expect(
            await eventually { LocalNotificationScheduleFile.load(from: url).undelivered.map(\.isRemote) == [true] })
        let restarted = makeCenter(FakeHost(), scheduleURL: url)
        restarted.ensureLoaded()
        #expect(restarted.undelivered[app]?.map(\.notification.isRemote) == [true])

        // A local notification kept beside it, handed over at the same activation after it.
        center.present(try due("tea"))
        #expect(await eventually { center.undelivered[app]?.count == 2 })
        host.presences[app] = .active
        center.appBecameActive(app)
        // The app had the push when it arrived; no one chose the alert: no fake click (UIKit calls
        // didReceiveRemoteNotification again only when the user opens the app from the alert).
        #expect(await eventually { host.received(app) == ["tea"] })
        #expect(
            !host.deliveries.contains {
                if case .remoteOpened = $0.delivery { return true }
                return false
            })
        #expect(await eventually { LocalNotificationScheduleFile.load(from: url).undelivered.isEmpty })
    }

    @Test func cancellingAllLocalNotificationsLeavesAKeptPushBanner() async throws {
        let host = FakeHost()
        host.presences[app] = .running
        let center = makeCenter(host)
        await center.start(connection: nil, loop: nil)
        defer { center.stop() }
        center.present(try pushBanner("p1"))
        center.present(try due("tea"))
        #expect(await eventually { center.undelivered[app]?.count == 2 })
        try await center.cancel(app, identifier: nil)
        #expect(center.undelivered[app]?.map(\.notification.identifier) == ["remote-p1"])
    }

    @Test func aPushBannerIsNeverScheduled() async throws {
        let center = makeCenter(FakeHost())
        await #expect(throws: LocalNotificationCenter.Refusal.self) { try await center.schedule(pushBanner("p1")) }
        #expect(center.schedule.count == 0)
    }
}
