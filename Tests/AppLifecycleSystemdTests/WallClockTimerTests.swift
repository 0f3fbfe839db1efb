import AppLifecycle
import AppLifecycleTesting
import Foundation
import Synchronization
import Testing

@testable import AppLifecycleSystemd

#if canImport(Glibc)
    import Glibc
#endif

private func utc(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    return formatter.date(from: text)!
}

@Suite("WallClockTimer: next significant instant")
struct WallClockTimerDeadlineTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    let saoPaulo = TimeZone(identifier: "America/Sao_Paulo")!
    let havana = TimeZone(identifier: "America/Havana")!

    @Test func berlinMidnightBeforeSpringForward() {
        // 2024-03-30 13:00 CET; midnight (23:00 UTC) comes before the 02:00 → 03:00 jump (01:00 UTC).
        let deadline = WallClockTimer.nextDeadline(after: utc("2024-03-30T12:00:00Z"), in: berlin)
        #expect(deadline == .init(date: utc("2024-03-30T23:00:00Z"), reason: .midnight))
    }

    @Test func berlinSpringForwardAfterMidnight() {
        let now = utc("2024-03-30T23:30:00Z")  // 00:30 CET on the DST day
        #expect(
            WallClockTimer.nextDeadline(after: now, in: berlin)
                == .init(date: utc("2024-03-31T01:00:00Z"), reason: .daylightSavingTime))
        // The day after the change is 23 hours long: the next midnight is at 22:00 UTC (00:00 CEST).
        #expect(
            WallClockTimer.nextLocalMidnight(after: utc("2024-03-31T01:00:00Z"), in: berlin)
                == utc("2024-03-31T22:00:00Z"))
    }

    @Test func berlinFallBack() {
        let now = utc("2024-10-26T22:30:00Z")  // 00:30 CEST on the fall-back day
        #expect(
            WallClockTimer.nextDeadline(after: now, in: berlin)
                == .init(date: utc("2024-10-27T01:00:00Z"), reason: .daylightSavingTime))
        // That day is 25 hours long: the next midnight is 23:00 UTC (00:00 CET).
        #expect(WallClockTimer.nextLocalMidnight(after: now, in: berlin) == utc("2024-10-27T23:00:00Z"))
    }

    @Test func saoPauloMidnightDoesNotExistOnDSTDay() {
        // 2018-11-04: 00:00 BRT (-03) jumps to 01:00 BRST (-02), at 03:00 UTC. The day starts at 01:00,
        // which is the same instant as the transition: documented to report midnight.
        let now = utc("2018-11-03T13:00:00Z")
        #expect(WallClockTimer.nextLocalMidnight(after: now, in: saoPaulo) == utc("2018-11-04T03:00:00Z"))
        #expect(WallClockTimer.nextOffsetTransition(after: now, in: saoPaulo) == utc("2018-11-04T03:00:00Z"))
        #expect(
            WallClockTimer.nextDeadline(after: now, in: saoPaulo)
                == .init(date: utc("2018-11-04T03:00:00Z"), reason: .midnight))
        // The following (23-hour) day starts at 00:00 BRST = 02:00 UTC.
        #expect(
            WallClockTimer.nextDeadline(after: utc("2018-11-04T03:00:00Z"), in: saoPaulo)
                == .init(date: utc("2018-11-05T02:00:00Z"), reason: .midnight))
    }

    @Test func havanaDSTAtMidnightCoincides() {
        let deadline = WallClockTimer.nextDeadline(after: utc("2024-03-09T12:00:00Z"), in: havana)
        #expect(deadline == .init(date: utc("2024-03-10T05:00:00Z"), reason: .midnight))
    }

    @Test func utcHasNoTransitionsAndExactMidnightMovesOn() {
        let utcZone = TimeZone(identifier: "UTC")!
        #expect(WallClockTimer.nextOffsetTransition(after: utc("2024-06-01T00:00:00Z"), in: utcZone) == nil)
        // Exactly at midnight, the next deadline is the following midnight, never the same instant.
        #expect(
            WallClockTimer.nextDeadline(after: utc("2024-06-01T00:00:00Z"), in: utcZone)
                == .init(date: utc("2024-06-02T00:00:00Z"), reason: .midnight))
    }
}

/// A fixed-offset zone in which it is about noon now, so no real midnight or DST change fires during a test.
private func zoneAtNoon() -> TimeZone {
    let secondsOfDay = Int(Date().timeIntervalSince1970) % 86_400
    var offset = 12 * 3_600 - secondsOfDay
    if offset <= -12 * 3_600 { offset += 86_400 }
    return TimeZone(secondsFromGMT: offset)!
}

/// Real timerfds on CLOCK_REALTIME; serialized because setting the clock cancels every such timer.
@Suite("WallClockTimer: real timerfd", .serialized)
struct WallClockTimerRealTests {
    @Test func expiryReportsTheArmedReasonAndRearms() async throws {
        // Holds the realtime-clock lock: a clock set elsewhere in the process would cancel this timer.
        try await TestResourceLock.realtimeClock.withLock {
            // "now" is in 2020: the deadline (2020-01-02 00:00 UTC) is already past, so the kernel fires at once.
            let clock = Mutex(utc("2020-01-01T12:00:00Z"))
            let timer = try WallClockTimer(timeZone: TimeZone(identifier: "UTC")!, now: { clock.withLock { $0 } })
            defer { timer.close() }
            #expect(timer.armedDeadline == .init(date: utc("2020-01-02T00:00:00Z"), reason: .midnight))
            clock.withLock { $0 = utc("2020-01-02T00:00:00Z") }
            guard let revents = waitForReadiness(timer.fileDescriptor, events: timer.pollEvents) else { return }
            let events = try timer.handleReadiness(revents)
            // Foundation names the UTC zone "GMT"; the event carries whatever identifier the zone has.
            let identifier = TimeZone(identifier: "UTC")!.identifier
            #expect(events == [.significantTimeChange(.init(reason: .midnight, timeZoneIdentifier: identifier))])
            #expect(timer.armedDeadline == .init(date: utc("2020-01-03T00:00:00Z"), reason: .midnight))
        }
    }

    @Test(.enabled(if: canSetRealtimeClock, "needs CAP_SYS_TIME to call clock_settime(CLOCK_REALTIME)"))
    func settingTheClockReportsClockSetAndRearms() async throws {
        // Holds the realtime-clock lock: a clock set elsewhere in the process would cancel this timer.
        try await TestResourceLock.realtimeClock.withLock {
            let zone = zoneAtNoon()
            let timer = try WallClockTimer(timeZone: zone)
            defer { timer.close() }
            let armedBefore = try #require(timer.armedDeadline)
            #expect(armedBefore.date > Date())
            #expect(pendingEvents(timer.fileDescriptor, events: timer.pollEvents) == 0)

            // Setting the clock to its own current value is a discontinuous change: CANCEL_ON_SET fires.
            var current = timespec()
            clock_gettime(CLOCK_REALTIME, &current)
            guard clock_settime(CLOCK_REALTIME, &current) == 0 else {
                Issue.record("clock_settime failed: errno \(errno)")
                return
            }
            guard let revents = waitForReadiness(timer.fileDescriptor, events: timer.pollEvents) else { return }
            let events = try timer.handleReadiness(revents)
            #expect(events == [.significantTimeChange(.init(reason: .clockSet, timeZoneIdentifier: zone.identifier))])
            // Re-armed for the same future midnight, and the cancellation is consumed.
            #expect(timer.armedDeadline == armedBefore)
            #expect(pendingEvents(timer.fileDescriptor, events: timer.pollEvents) == 0)
        }
    }

    @Test func updatingTheTimeZoneRearms() throws {
        let clock = Mutex(utc("2024-03-30T23:30:00Z"))
        let timer = try WallClockTimer(timeZone: TimeZone(identifier: "UTC")!, now: { clock.withLock { $0 } })
        defer { timer.close() }
        #expect(timer.armedDeadline?.reason == .midnight)
        try timer.updateTimeZone(TimeZone(identifier: "Europe/Berlin")!)
        #expect(timer.armedDeadline == .init(date: utc("2024-03-31T01:00:00Z"), reason: .daylightSavingTime))
        #expect(timer.timeZone.identifier == "Europe/Berlin")
    }

    @Test func closeIsIdempotentAndDisarms() throws {
        let timer = try WallClockTimer(timeZone: zoneAtNoon())
        timer.close()
        timer.close()
        #expect(timer.fileDescriptor == -1)
        #expect(try timer.handleReadiness(Int16(POLLIN)) == [])
    }
}

@Suite("SystemLocalTime: the process's zone through glibc, as lifecycled computes it without ICU")
struct SystemLocalTimeTests {
    @Test(
        "glibc's localtime_r and ICU give the same deadlines, every 5 days over two years, in zones with odd rules",
        arguments: [
            "Europe/Berlin", "America/Sao_Paulo", "America/Havana", "Australia/Lord_Howe", "Asia/Kathmandu",
            "America/New_York", "UTC",
        ])
    func glibcMatchesICU(zone: String) async {
        // $TZ is process-wide: the comparison runs in a child process of its own.
        await #expect(processExitsWith: .success) { [zone] in
            setenv("TZ", zone, 1)
            let glibc = SystemLocalTime()
            let icu = TimeZone(identifier: zone)!
            guard glibc.identifier == zone else { exit(2) }
            for day in stride(from: 0, to: 730, by: 5) {
                for hour in [0, 7, 13, 22] {
                    let now = Date(timeIntervalSince1970: 1_704_067_200 + Double(day * 86_400 + hour * 3_600) + 0.25)
                    let ours = WallClockTimer.nextDeadline(after: now, in: glibc)
                    let reference = WallClockTimer.nextDeadline(after: now, in: icu)
                    guard ours == reference, ours.date > now else {
                        print("\(zone) at \(now): glibc \(ours), ICU \(reference)")
                        exit(1)
                    }
                }
            }
        }
    }

    @Test func reloadReadsTheZoneAgain() async {
        await #expect(processExitsWith: .success) {
            setenv("TZ", "Asia/Tokyo", 1)
            guard SystemLocalTime().utcOffset(at: 0) == 9 * 3_600 else { exit(1) }
            setenv("TZ", "America/New_York", 1)
            let reloaded = SystemLocalTime.reload()
            guard reloaded.utcOffset(at: 0) == -5 * 3_600, reloaded.identifier == "America/New_York" else { exit(1) }
            // An empty $TZ is UTC to glibc, and named so.
            setenv("TZ", "", 1)
            let utc = SystemLocalTime.reload()
            guard utc.utcOffset(at: 0) == 0, utc.identifier == "UTC" else { exit(1) }
        }
    }
}
