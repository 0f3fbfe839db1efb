import AppLifecycle
import AppLifecycleTesting
import Foundation
import Testing

@Suite("Application's outgoing notification API")
@MainActor
struct LocalNotificationAPITests {
    private let snooze = UserNotificationAction(identifier: "snooze", title: "Snooze")

    @Test func schedulingResolvesTheCategoryAndRefusesUnknownCategoriesAndInvalidNotifications() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        let settings = UserNotificationSettings(
            types: [.alert, .badge], categories: [UserNotificationCategory(identifier: "reminder", actions: [snooze])])
        harness.app.registerUserNotificationSettings(settings)
        #expect(harness.app.currentUserNotificationSettings == settings)
        #expect(harness.recorder.count(of: "ApplicationDidRegisterUserNotificationSettingsNotification") == 1)

        let tea = LocalNotification(
            identifier: "tea", fireDate: Date(timeIntervalSinceNow: 60), alertBody: "Tea", category: "reminder")
        harness.app.scheduleLocalNotification(tea)
        #expect(harness.host.scheduledNotifications.map(\.notification) == [tea])
        #expect(harness.host.scheduledNotifications.first?.actions == [snooze])
        #expect(harness.app.scheduledLocalNotifications == [tea])

        // Unknown category, huge body, a fire date that is no instant: logged, not scheduled, nothing lost.
        harness.app.scheduleLocalNotification(LocalNotification(identifier: "x", category: "nope"))
        harness.app.scheduleLocalNotification(
            LocalNotification(identifier: "big", alertBody: String(repeating: "b", count: 10_000)))
        harness.app.scheduleLocalNotification(
            LocalNotification(identifier: "nan", fireDate: Date(timeIntervalSince1970: .nan)))
        #expect(harness.host.scheduledNotifications.count == 1)
        #expect(harness.app.scheduledLocalNotifications == [tea])

        // Replacing by identifier, then the host's report of what is left after a firing.
        var later = tea
        later.alertBody = "Tea, later"
        harness.app.scheduleLocalNotification(later)
        #expect(harness.app.scheduledLocalNotifications == [later])
        harness.host.send(.scheduledLocalNotifications([]))
        #expect(harness.app.scheduledLocalNotifications == [])
        harness.app.cancelLocalNotification(tea)
        harness.app.cancelAllLocalNotifications()
        #expect(harness.host.cancelledNotifications == [["tea"], nil])
    }

    @Test func presentNowGoesToTheDelegateWhenActiveAndToTheHostOtherwise() {
        let harness = Harness(FullDelegate())
        harness.launch()
        let note = LocalNotification(identifier: "now", alertBody: "Now")
        harness.app.presentLocalNotificationNow(note)
        #expect(harness.recorder.count(of: "application(_:didReceive:)") == 1)
        harness.host.send(.foreground(false))
        harness.app.presentLocalNotificationNow(note)
        #expect(harness.recorder.count(of: "application(_:didReceive:)") == 1)
        #expect(harness.host.presentedNotifications == [note])
    }

    @Test func aClickedBannerBringsTheAppBackAndDeliversBeforeDidBecomeActive() throws {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.host.send(.foreground(false))
        harness.host.send(.localNotificationOpened(LocalNotification(identifier: "tea")))
        try harness.recorder.verifyOrder([
            "applicationWillEnterForeground(_:)", "application(_:didReceive:)", "applicationDidBecomeActive(_:)",
        ])
        #expect(harness.app.applicationState == .active)
    }

    @Test func badgeIdleTimerShortcutsAndURLsGoToTheHostOnlyWhenTheyChange() {
        let harness = Harness(FullDelegate())
        harness.launch()
        harness.app.applicationIconBadgeNumber = 3
        harness.app.applicationIconBadgeNumber = 3
        harness.host.send(.applicationIconBadgeNumber(5))
        #expect(harness.app.applicationIconBadgeNumber == 5)
        harness.app.applicationIconBadgeNumber = 0
        #expect(harness.host.badgeNumbers == [3, 0])
        harness.app.isIdleTimerDisabled = true
        harness.app.isIdleTimerDisabled = true
        harness.app.isIdleTimerDisabled = false
        #expect(harness.host.idleTimerChanges == [true, false])
        let item = ShortcutItem(type: "compose", localizedTitle: "New note")
        harness.app.shortcutItems = [item]
        harness.app.shortcutItems = [item]
        #expect(harness.host.publishedShortcutItems == [[item]])

        harness.host.openableSchemes = ["https"]
        #expect(harness.app.canOpenURL(URL(string: "https://example.org")!))
        #expect(!harness.app.canOpenURL(URL(string: "gopher://example.org")!))
        var results: [Bool] = []
        harness.app.open(URL(string: "https://example.org")!) { results.append($0) }
        harness.app.open(URL(string: "gopher://example.org")!) { results.append($0) }
        #expect(results == [true, false])
    }
}
