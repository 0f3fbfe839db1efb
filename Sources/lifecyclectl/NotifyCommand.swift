import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledClient
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl notify APP --in SECONDS|--at TIME …`: schedules a local notification for an app
/// exactly as the app's `scheduleLocalNotification(_:)` would (`ScheduleNotification`).
struct NotifyCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "notify",
        abstract: "Schedule a local notification for an app, as the app itself would.",
        discussion: """
            --at takes an ISO 8601 instant (2026-12-24T08:00:00Z, 2026-12-24T09:00:00+01:00) or a \
            local time without offset (2026-12-24T08:00), read in --time-zone or else in the local zone. \
            With --time-zone the notification floats: it fires when the local clock shows that time, \
            even after the machine's zone changed.
            """)

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "The app id (for example org.example.Counter).")
    var app: String

    @Option(name: .customLong("in"), help: ArgumentHelp("Fire this many seconds from now.", valueName: "seconds"))
    var delay: Double?

    @Option(help: ArgumentHelp("Fire at this time (see below).", valueName: "time"))
    var at: String?

    @Option(
        name: .customLong("time-zone"),
        help: ArgumentHelp("A zone name (Europe/Berlin): the time is a wall-clock time there.", valueName: "zone"))
    var timeZone: String?

    @Option(
        name: .customLong("repeat"),
        help: ArgumentHelp(
            "Repeat by \(CalendarUnit.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "unit"))
    var repeatInterval: String?

    @Option(help: "The banner's body.")
    var body: String

    @Option(help: "The banner's title.")
    var title: String?

    @Option(help: "The notification's identifier (default: a new UUID).")
    var id: String?

    @Option(help: "The badge number it sets when it fires.")
    var badge: Int?

    @Option(help: "A freedesktop sound name.")
    var sound: String?

    @Option(
        name: .customLong("action"),
        help: ArgumentHelp(
            "A banner button, ID:LABEL (repeatable; prefix + for a foreground action).", valueName: "id:label"))
    var actions: [String] = []

    @Option(name: .customLong("user-info"), help: ArgumentHelp("The userInfo as a JSON object.", valueName: "json"))
    var userInfo: String?

    func run() async throws { try await runOnStandardStreams() }

    /// The notification and its buttons, checked as the daemon will check them.
    ///
    /// - Throws: ``ValidationError`` for every malformed option.
    func notification(now: Date = Date()) throws -> (LocalNotification, [UserNotificationAction]) {
        var zone: TimeZone?
        if let timeZone {
            guard let named = TimeZone(identifier: timeZone) else {
                throw ValidationError("--time-zone '\(timeZone)' is not a time zone name (like Europe/Berlin)")
            }
            zone = named
        }
        let fireDate: Date
        switch (delay, at) {
        case (let seconds?, nil):
            guard seconds.isFinite, seconds >= 0, seconds < 100 * 366 * 86_400 else {
                throw ValidationError("--in must be a number of seconds from 0 to 100 years")
            }
            fireDate = now.addingTimeInterval(seconds)
        case (nil, let text?):
            fireDate = try Self.parseTime(text, zone: zone ?? .current)
        default:
            throw ValidationError("give exactly one of --in and --at")
        }
        var unit: CalendarUnit?
        if let repeatInterval {
            guard let parsed = CalendarUnit(rawValue: repeatInterval) else {
                throw ValidationError(
                    "--repeat must be one of \(CalendarUnit.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            unit = parsed
        }
        var buttons: [UserNotificationAction] = []
        for action in actions {
            var text = Substring(action)
            let foreground = text.hasPrefix("+")
            if foreground { text = text.dropFirst() }
            guard let colon = text.firstIndex(of: ":"), colon != text.startIndex,
                text.index(after: colon) != text.endIndex
            else { throw ValidationError("--action must be ID:LABEL, got '\(action)'") }
            buttons.append(
                UserNotificationAction(
                    identifier: String(text[..<colon]), title: String(text[text.index(after: colon)...]),
                    activationMode: foreground ? .foreground : .background))
        }
        var info = UserInfo()
        if let userInfo {
            do {
                info = try UserInfo(json: userInfo)
                try LifecycledProtocol.validate(info)
            } catch {
                throw ValidationError("--user-info is not a valid JSON object of userInfo values: \(error)")
            }
        }
        let notification = LocalNotification(
            identifier: id ?? UUID().uuidString, fireDate: fireDate, timeZone: zone, repeatInterval: unit,
            alertTitle: title, alertBody: body, applicationIconBadgeNumber: badge ?? 0, soundName: sound,
            userInfo: info)
        do {
            try notification.validate()
        } catch {
            throw ValidationError(error.message)
        }
        return (notification, buttons)
    }

    /// Reads `--at`: an ISO 8601 instant with `Z` or an offset, or a local time in `zone`.
    static func parseTime(_ text: String, zone: TimeZone) throws -> Date {
        let instant = ISO8601DateFormatter()
        instant.formatOptions = [.withInternetDateTime]
        if let date = instant.date(from: text) { return date }
        instant.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = instant.date(from: text) { return date }
        guard let wall = WallClockDateTime(text) else {
            throw ValidationError(
                "--at '\(text)' is neither an ISO 8601 instant nor a local time like 2026-12-24T08:00")
        }
        // The offset in force at that local time: read it at the UTC-as-local guess, then again.
        let guess = Date(timeIntervalSince1970: Double(wall.secondsAsUTC))
        let first = zone.secondsFromGMT(for: guess)
        let offset = zone.secondsFromGMT(for: guess.addingTimeInterval(-Double(first)))
        return Date(timeIntervalSince1970: Double(wall.secondsAsUTC - offset))
    }

    func execute(output: CtlOutput) async throws {
        let app = try validatedAppID(self.app)
        let (notification, buttons) = try notification()
        let identifier = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(
                LifecycledProtocol.Method.scheduleNotification.name,
                [.string(app), LifecycledHost.payload(notification, buttons)])
        }
        output.out("scheduled \(identifier.first?.stringValue ?? notification.identifier) for \(app)")
    }
}
