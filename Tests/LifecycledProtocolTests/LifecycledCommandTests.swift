import AppLifecycle
import Foundation
import LifecycledProtocol
import Testing

@Suite("LifecycledCommand: the daemon→app codec")
struct LifecycledCommandTests {
    static let note = LocalNotification(identifier: "n1")

    static let commands: [LifecycledCommand] = [
        .hostEvent(.sleeping(true)), .hostEvent(.locked(false)), .hostEvent(.sessionActive(true)),
        .hostEvent(.foreground(true)), .hostEvent(.terminate(.hostRequest)),
        .hostEvent(
            .significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: "Europe/Paris"))),
        .hostEvent(.memoryWarning(MemoryWarning(level: .critical, source: "psi"))),
        .hostEvent(.openURL(URL(string: "counter://open?x=1")!, OpenURLOptions())),
        .hostEvent(.remoteNotification(["aps": .dictionary(["alert": .string("hi")])])),
        .hostEvent(.remoteNotificationOpened(["aps": .dictionary(["alert": .string("hi")]), "id": .string("p1")])),
        .hostEvent(.remoteNotificationAction(identifier: "archive", payload: ["aps": .dictionary([:])])),
        .hostEvent(.remoteNotificationAction(identifier: nil, payload: ["n": .int(1)])),
        .hostEvent(.localNotification(note)), .hostEvent(.localNotificationOpened(note)),
        .hostEvent(.localNotificationAction(identifier: "reply", notification: note)),
        .hostEvent(.scheduledLocalNotifications([note])), .hostEvent(.applicationIconBadgeNumber(3)),
        .hostEvent(.shortcutItem(ShortcutItem(type: "new", localizedTitle: "New"))), .hostEvent(.backgroundFetch),
        .post(name: "org.example.Refresh", userInfo: ["n": .int(1)]),
        .scheduleChanged(removed: ["old"], updated: [note]),
    ]

    @Test("every command the daemon sends decodes to itself", arguments: commands)
    func roundTrips(command: LifecycledCommand) throws {
        let (name, arguments) = try #require(command.encode())
        #expect(LifecycledCommand.decode(command: name, arguments: arguments) == command)
    }

    @Test("the app's own facts have no command; unknown names and bad arguments decode to nil")
    func refusals() {
        #expect(LifecycledCommand.hostEvent(.unregisteredForRemoteNotifications).encode() == nil)
        #expect(LifecycledCommand.hostEvent(.statusBarFrame(Rect(x: 0, y: 0, width: 1, height: 1))).encode() == nil)
        #expect(LifecycledCommand.decode(command: "no-such-command", arguments: [:]) == nil)
        #expect(LifecycledCommand.decode(command: "remote-notification-opened", arguments: [:]) == nil)
        #expect(
            LifecycledCommand.decode(
                command: "remote-notification-action", arguments: ["payload": .dictionary([:]), "identifier": .int(1)])
                == nil)
        // A click or an action on a push's banner wakes a suspended app to handle it.
        #expect(LifecycledCommand.hostEvent(.remoteNotificationOpened([:])).resumesSuspendedApp)
        #expect(
            LifecycledCommand.hostEvent(.remoteNotificationAction(identifier: "a", payload: [:])).resumesSuspendedApp)
        #expect(LifecycledCommand.decode(command: LifecycledCommand.postName, arguments: ["name": .string("")]) == nil)
        #expect(
            LifecycledCommand.decode(
                command: LifecycledCommand.postName, arguments: ["name": .string("n"), "userInfo": .int(1)]) == nil)
        #expect(
            LifecycledCommand.decode(
                command: LifecycledCommand.scheduleChangedName,
                arguments: ["removed": .array([.int(1)]), "updated": .array([])]) == nil)
    }
}
