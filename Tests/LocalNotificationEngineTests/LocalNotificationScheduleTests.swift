import AppLifecycle
import Foundation
import LocalNotificationEngine
import Testing

private func instant(_ text: String) -> Double {
    ISO8601DateFormatter().date(from: text)!.timeIntervalSince1970
}

private func iso(_ seconds: Double, _ zone: TimeZone) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = zone
    return formatter.string(from: Date(timeIntervalSince1970: Double(seconds)))
}

private let berlin = TimeZone(identifier: "Europe/Berlin")!
private let newYork = TimeZone(identifier: "America/New_York")!

private func scheduled(
    _ id: String, app: String = "org.example.Notes", _ fields: [String: UserInfoValue], occurrence: Int = 0
) throws -> ScheduledLocalNotification {
    var payload = fields
    payload["identifier"] = .string(id)
    return try ScheduledLocalNotification(
        appID: app, payload: payload, buttons: [], scheduledAt: Date(timeIntervalSince1970: 0), occurrence: occurrence)
}

/// Saves a schedule of one valid notification (`good`, due at 2_000_000_000) to `url`, then puts
/// hand-edited entries (JSON objects) in front of it, as a person editing the file would; returns `good`.
private func writeSchedule(at url: URL, withHandEditedEntries entries: [String]) throws -> ScheduledLocalNotification {
    let good = try scheduled(
        "good", ["alertBody": .string("hi"), "fireDate": .date(Date(timeIntervalSince1970: 2_000_000_000))])
    try LocalNotificationScheduleFile.save(.init(notifications: [good]), to: url)
    let text = try String(contentsOf: url, encoding: .utf8).replacingOccurrences(
        of: "\"notifications\":[", with: "\"notifications\":[" + entries.joined(separator: ",") + ",")
    try text.write(to: url, atomically: true, encoding: .utf8)
    return good
}

@Suite("local notification schedule")
struct LocalNotificationScheduleTests {
    @Test func wallClockArithmeticKeepsTheTimeOfDayAndClampsMonthEnds() throws {
        let start = try #require(WallClockDateTime("2024-01-31T08:00"))
        #expect(start.adding(1, .month).description == "2024-02-29T08:00:00")
        #expect(start.adding(13, .month).description == "2025-02-28T08:00:00")
        #expect(start.adding(1, .day).description == "2024-02-01T08:00:00")
        #expect(start.adding(-1, .weekOfYear).description == "2024-01-24T08:00:00")
        #expect(
            try #require(WallClockDateTime("2024-02-29T23:59:59")).adding(1, .year).description == "2025-02-28T23:59:59"
        )
        #expect(start.adding(17, .hour).description == "2024-02-01T01:00:00")
        for bad in ["2024-02-30T08:00", "2024-01-01T24:00", "2024-01-01", "x-01-01T00:00", "2024-01-01T8:00"] {
            #expect(WallClockDateTime(bad) == nil, "\(bad)")
        }
        // The civil calendar agrees with Foundation's across eras and leap rules.
        for seconds in stride(from: -4_000_000_000, through: 4_000_000_000, by: 97_654_321) {
            let reading = WallClockDateTime(instant: seconds, utcOffset: 0)
            #expect(reading.secondsAsUTC == seconds)
            #expect(iso(Double(seconds), TimeZone(identifier: "UTC")!).hasPrefix(reading.description))
        }
    }

    @Test func aDailyRepeatStaysAtItsLocalTimeAcrossDaylightSavingChanges() throws {
        // 08:00 Berlin on 29 March 2025 (CET); DST starts the next night.
        let first = instant("2025-03-29T07:00:00Z")
        let daily = try scheduled(
            "daily", ["fireDate": .date(Date(timeIntervalSince1970: first)), "repeatInterval": .string("day")])
        let occurrences = (0..<3).map { daily.fireInstant(occurrence: $0, in: berlin) }
        #expect(
            occurrences.map { iso($0, berlin) } == [
                "2025-03-29T08:00:00+01:00", "2025-03-30T08:00:00+02:00", "2025-03-31T08:00:00+02:00",
            ])
        #expect(occurrences[1] - occurrences[0] == 23 * 3_600)
        // Hourly repeats count real hours instead.
        let hourly = try scheduled(
            "hourly",
            ["fireDate": .date(Date(timeIntervalSince1970: first)), "repeatInterval": .string("hour")])
        #expect(hourly.fireInstant(occurrence: 24, in: berlin) - first == 24 * 3_600)
    }

    @Test func aFloatingNotificationMovesWithTheTimeZoneAndAnAbsoluteOneDoesNot() throws {
        var schedule = LocalNotificationSchedule(timeZone: berlin)
        let now = instant("2030-06-01T00:00:00Z")
        schedule.insert(try scheduled("alarm", ["wallClock": .string("2030-06-02T07:30:00")]), now: now)
        let absolute = instant("2030-06-02T05:30:00Z")
        schedule.insert(
            try scheduled("meeting", ["fireDate": .date(Date(timeIntervalSince1970: absolute))]), now: now)
        let key = LocalNotificationSchedule.Key(appID: "org.example.Notes", identifier: "alarm")
        #expect(schedule.entry(key).map { iso($0.instant, berlin) } == "2030-06-02T07:30:00+02:00")
        schedule.setTimeZone(newYork, now: now)
        #expect(schedule.entry(key).map { iso($0.instant, newYork) } == "2030-06-02T07:30:00-04:00")
        #expect(schedule.entry(.init(appID: "org.example.Notes", identifier: "meeting"))?.instant == absolute)
        #expect(schedule.earliestInstant() == absolute)
    }

    @Test func localTimesInAGapFireAfterTheJumpAndTwiceExistingOnesAtTheFirst() throws {
        // 02:30 on 30 March 2025 does not exist in Berlin; on 26 October it exists twice.
        let gap = ScheduledLocalNotification.instant(of: WallClockDateTime("2025-03-30T02:30")!, in: berlin)
        #expect(iso(Double(gap), berlin) == "2025-03-30T03:30:00+02:00")
        let twice = ScheduledLocalNotification.instant(of: WallClockDateTime("2025-10-26T02:30")!, in: berlin)
        #expect(iso(Double(twice), berlin) == "2025-10-26T02:30:00+02:00")
    }

    @Test func dueNotificationsFireOnceSoonestFirstAndARepeatSkipsWhatItMissed() throws {
        var schedule = LocalNotificationSchedule(timeZone: berlin)
        let start = instant("2030-01-01T12:00:00Z")
        let date = { (offset: Double) in UserInfoValue.date(Date(timeIntervalSince1970: start + offset)) }
        schedule.insert(try scheduled("b", ["fireDate": date(20)]), now: start)
        schedule.insert(try scheduled("a", ["fireDate": date(10)]), now: start)
        schedule.insert(
            try scheduled("minutely", ["fireDate": date(30), "repeatInterval": .string("minute")]), now: start)
        schedule.insert(try scheduled("later", ["fireDate": date(3_600)]), now: start)
        // Replacing keeps one entry with the new time.
        schedule.insert(try scheduled("b", ["fireDate": date(15)]), now: start)
        #expect(schedule.count == 4)
        #expect(schedule.takeDue(now: start + 5).isEmpty)
        // Sub-second fire dates keep their fraction: a notification is never early.
        schedule.insert(try scheduled("exact", ["fireDate": date(7.25)]), now: start)
        #expect(schedule.earliestInstant() == start + 7.25)
        #expect(schedule.takeDue(now: start + 7).isEmpty)
        #expect(schedule.takeDue(now: start + 7.25).map { $0.notification.identifier } == ["exact"])
        // The machine slept ten minutes past them all but "later".
        let fired = schedule.takeDue(now: start + 630)
        #expect(fired.map { $0.notification.identifier } == ["a", "b", "minutely"])
        #expect(fired.map { $0.repeats } == [false, false, true])
        #expect(schedule.count == 2)
        let next = try #require(schedule.entry(.init(appID: "org.example.Notes", identifier: "minutely")))
        #expect(next.instant == start + 30 + 11 * 60)
        #expect(next.notification.occurrence == 11)
        #expect(schedule.earliestInstant() == start + 690)
        schedule.removeAll(appID: "org.example.Notes")
        #expect(schedule.earliestInstant() == nil)
    }

    @Test func invalidNotificationsAreRefusedWithTheReason() throws {
        let cases: [([String: UserInfoValue], String)] = [
            (["alertBody": .string(String(repeating: "x", count: 9_000))], "alertBody is 9000 bytes"),
            (["fireDate": .date(Date(timeIntervalSince1970: .infinity))], "not a valid instant"),
            (["wallClock": .string("2030-02-30T08:00")], "wallClock"),
            (["repeatInterval": .string("fortnight")], "repeatInterval"),
        ]
        for (fields, message) in cases {
            #expect {
                try scheduled("x", fields)
            } throws: { error in
                (error as? ApplicationError)?.message.contains(message) == true
            }
        }
    }

    @Test func theFileKeepsWhatItCannotReadAndAFileFromANewerVersionIsLeftAlone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "schedule-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(LocalNotificationScheduleFile.fileName)
        let good = try writeSchedule(
            at: url, withHandEditedEntries: [#"{"app":"org.example.Notes","notification":{}}"#])

        let loaded = LocalNotificationScheduleFile.load(from: url)
        #expect(loaded.writable && loaded.problem == nil)
        #expect(loaded.notifications == [good])
        #expect(loaded.rejected.count == 1 && loaded.rejected[0].reason.contains("scheduledAt"))
        // Saved again: the rejected entry is still there, verbatim.
        try LocalNotificationScheduleFile.save(
            .init(notifications: loaded.notifications, undelivered: [good], rejected: loaded.rejected), to: url)
        let again = LocalNotificationScheduleFile.load(from: url)
        #expect(again.notifications == [good] && again.rejected.count == 1)
        // Notifications kept for the next activation are read back as such.
        #expect(again.undelivered == [good])

        try #"{"version": 2, "notifications": []}"#.write(to: url, atomically: true, encoding: .utf8)
        let newer = LocalNotificationScheduleFile.load(from: url)
        #expect(!newer.writable && newer.problem?.contains("version 2, newer") == true)
        #expect(!newer.isCorrupt)
        try "{not json".write(to: url, atomically: true, encoding: .utf8)
        #expect(!LocalNotificationScheduleFile.load(from: url).writable)
        #expect(LocalNotificationScheduleFile.load(from: url).isCorrupt)
        #expect(LocalNotificationScheduleFile.load(from: directory.appendingPathComponent("missing.json")).writable)
    }

    /// Hand-edited numbers that the fire-time arithmetic cannot carry (an instant of 1e300, a
    /// 9e18th repeat of a per-minute notification) trapped at start, every start. They are
    /// refused at load like any bad entry; the rest loads and fires; an oversized file is corrupt.
    @Test func entriesWhoseTimesOverflowAreRefusedAtLoadAndTheRestFires() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "schedule-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(LocalNotificationScheduleFile.fileName)
        let bad = [
            #"{"app":"org.example.Notes","scheduledAt":1e300,"occurrence":0,"notification":{"identifier":"far"}}"#,
            #"{"app":"org.example.Notes","scheduledAt":1790000000,"occurrence":9000000000000000000,"notification":{"identifier":"often","repeatInterval":"minute"}}"#,
            #"{"app":"org.example.Notes","scheduledAt":1790000000,"occurrence":-1,"notification":{"identifier":"before"}}"#,
        ]
        let good = try writeSchedule(at: url, withHandEditedEntries: bad)
        let loaded = LocalNotificationScheduleFile.load(from: url)
        #expect(loaded.notifications == [good])
        #expect(loaded.rejected.count == 3, "\(loaded.rejected.map(\.reason))")
        var schedule = LocalNotificationSchedule(timeZone: berlin)
        for notification in loaded.notifications { schedule.insert(notification, now: 1_900_000_000) }
        #expect(schedule.takeDue(now: 2_000_000_001).map(\.notification.identifier) == ["good"])

        let big = open(url.path, O_WRONLY | O_TRUNC)
        #expect(ftruncate(big, off_t(LocalNotificationScheduleFile.maximumFileSize + 1)) == 0)
        close(big)
        let oversized = LocalNotificationScheduleFile.load(from: url)
        #expect(
            oversized.isCorrupt && oversized.problem?.contains("larger than") == true,
            "\(String(describing: oversized.problem))")
    }
}

@Suite("local notification schedule, edge cases")
struct LocalNotificationScheduleEdgeTests {
    @Test func aMonthlyRepeatLongOverdueResumesAtTheNextMonthNotLater() throws {
        let first = ISO8601DateFormatter().date(from: "2000-01-01T09:00:00Z")!
        let notification = try ScheduledLocalNotification(
            appID: "org.example.Notes",
            payload: ["identifier": .string("rent"), "fireDate": .date(first), "repeatInterval": .string("month")],
            buttons: [], scheduledAt: first)
        let utc = TimeZone(identifier: "UTC")!
        let now = ISO8601DateFormatter().date(from: "2026-01-15T00:00:00Z")!.timeIntervalSince1970
        let next = notification.nextOccurrence(notBefore: now, in: utc)
        #expect(Date(timeIntervalSince1970: next.instant) == ISO8601DateFormatter().date(from: "2026-02-01T09:00:00Z"))
        #expect(next.occurrence == 26 * 12 + 1)
    }

    @Test func aRepeatMissedWhileNothingRanFiresOnceWhenLoadedUnadvanced() throws {
        let start = Date(timeIntervalSince1970: 2_000_000_000)
        let notification = try ScheduledLocalNotification(
            appID: "org.example.Notes",
            payload: ["identifier": .string("daily"), "fireDate": .date(start), "repeatInterval": .string("day")],
            buttons: [], scheduledAt: start, occurrence: 3)
        var schedule = LocalNotificationSchedule(timeZone: TimeZone(identifier: "UTC")!)
        // Loaded ten days after its stored occurrence: kept as it was, so it is due once.
        schedule.insert(notification, now: -.infinity)
        let now = start.timeIntervalSince1970 + 13 * 86_400 + 60
        let fired = schedule.takeDue(now: now)
        #expect(fired.map { $0.notification.occurrence } == [3])
        let next = try #require(schedule.entry(.init(appID: "org.example.Notes", identifier: "daily")))
        #expect(next.notification.occurrence == 14 && next.instant > now)
        #expect(schedule.takeDue(now: now).isEmpty)
    }

    @Test func aKnownFieldOfTheWrongTypeIsRefusedNotIgnored() {
        for (key, value) in [
            ("fireDate", UserInfoValue.int(2_000_000_000)), ("alertBody", .int(3)), ("hasAction", .string("no")),
            ("userInfo", .array([])),
        ] {
            #expect {
                try ScheduledLocalNotification(
                    appID: "org.example.Notes", payload: ["identifier": .string("x"), key: value], buttons: [],
                    scheduledAt: Date())
            } throws: { error in
                (error as? ApplicationError)?.message.contains("'\(key)' has the wrong type") == true
            }
        }
    }
}
