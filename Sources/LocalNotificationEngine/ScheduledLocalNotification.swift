import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials

/// One local notification in a host's schedule: what the app asked for, the banner's buttons,
/// and how far its repeats have come.
///
/// The notification is kept as the property list the app sent (``payload``), so what the app
/// gets back (in `didReceive`, in its launch options) is exactly what it scheduled, and a
/// reader without the zone database (lifecycled has no ICU) still knows when it fires:
/// ``wallClock`` for a floating notification, ``fireDate`` for an absolute one.
package struct ScheduledLocalNotification: Sendable, Hashable {
    /// A button of the banner.
    package struct Button: Sendable, Hashable {
        /// The action's identifier (the `Notify` action key).
        package var identifier: String
        /// Its label.
        package var title: String
        /// Whether choosing it brings the app to the foreground.
        package var foreground: Bool

        /// Creates a button.
        package init(identifier: String, title: String, foreground: Bool = false) {
            self.identifier = identifier
            self.title = title
            self.foreground = foreground
        }

        /// The button as the bus and the schedule file carry it: `identifier`, `title`, `foreground`.
        package var propertyList: UserInfoValue {
            .dictionary(["identifier": .string(identifier), "title": .string(title), "foreground": .bool(foreground)])
        }

        /// Reads a button; `nil` without an identifier and a title (`foreground` defaults to `false`).
        package init?(propertyList: UserInfoValue) {
            guard let fields = propertyList.dictionaryValue, let identifier = fields["identifier"]?.stringValue,
                let title = fields["title"]?.stringValue
            else { return nil }
            self.init(identifier: identifier, title: title, foreground: fields["foreground"]?.boolValue ?? false)
        }
    }

    /// The app it belongs to.
    package var appID: String
    /// The notification's identifier (unique per app).
    package var identifier: String
    /// Its identity in a ``LocalNotificationSchedule``: its app and its identifier.
    package var key: LocalNotificationSchedule.Key { .init(appID: appID, identifier: identifier) }
    /// The notification's property list (`LocalNotification/propertyList`).
    package var payload: [String: UserInfoValue]
    /// The banner's buttons beyond the default action.
    package var buttons: [Button]
    /// When it was scheduled: the fire date of a notification scheduled without one.
    package var scheduledAt: Date
    /// How many of its occurrences have fired (0 until the first).
    package var occurrence: Int
    /// Whether it is a push's banner (`Application`'s `presentRemoteNotification`), not a local
    /// notification: its ``notification``'s userInfo is the push's payload, and a click or an
    /// action on it reaches the app through the remote path (``remotePayload``).
    package var isRemote: Bool
    /// The push's payload when ``isRemote``: what a click hands back as
    /// `UIApplicationLaunchOptionsRemoteNotificationKey` or to `didReceiveRemoteNotification`.
    package var remotePayload: UserInfo? { isRemote ? notification.userInfo : nil }

    /// Reads the schedule-relevant fields of a notification's property list.
    ///
    /// - Parameters:
    ///   - appID: The app.
    ///   - payload: The notification's property list.
    ///   - buttons: The category's actions.
    ///   - scheduledAt: Now.
    ///   - occurrence: How many occurrences already fired (from the schedule file).
    ///   - isRemote: Whether it is a push's banner (``isRemote``).
    /// - Throws: `ApplicationError` (`invalidInput`) for a payload that is not a valid notification:
    ///   no identifier, a field over `LocalNotification/Limits`, a fire date that is
    ///   not a finite instant, a malformed `wallClock`, an unknown `repeatInterval`, bad buttons.
    package init(
        appID: String, payload: [String: UserInfoValue], buttons: [Button], scheduledAt: Date, occurrence: Int = 0,
        isRemote: Bool = false
    ) throws(ApplicationError) {
        for (key, value) in payload {
            guard let expected = Self.fieldTypes[key] else { continue }
            guard expected(value) else {
                throw ApplicationError(.invalidInput, "'\(key)' has the wrong type: \(value)")
            }
        }
        guard let notification = LocalNotification(propertyList: .dictionary(payload)) else {
            throw ApplicationError(.invalidInput, "the notification has no identifier")
        }
        try notification.validate()
        if let text = payload["wallClock"] {
            guard let text = text.stringValue, WallClockDateTime(text) != nil else {
                throw ApplicationError(.invalidInput, "wallClock \(text) is not YYYY-MM-DDTHH:MM:SS")
            }
        }
        if let unit = payload["repeatInterval"], unit.stringValue.flatMap(CalendarUnit.init(rawValue:)) == nil {
            throw ApplicationError(
                .invalidInput,
                "repeatInterval \(unit) is not one of \(CalendarUnit.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard buttons.count <= LocalNotification.Limits.actions else {
            throw ApplicationError(
                .invalidInput, "\(buttons.count) actions, more than \(LocalNotification.Limits.actions)")
        }
        for button in buttons {
            guard !button.identifier.isEmpty, button.identifier != "default",
                button.identifier.utf8.count <= LocalNotification.Limits.nameLength,
                button.title.utf8.count <= LocalNotification.Limits.nameLength
            else {
                throw ApplicationError(
                    .invalidInput,
                    "action '\(button.identifier.prefix(64))' needs a non-empty identifier other than 'default' and a title, each at most \(LocalNotification.Limits.nameLength) bytes"
                )
            }
        }
        guard occurrence >= 0 else { throw ApplicationError(.invalidInput, "occurrence \(occurrence) is negative") }
        self.appID = appID
        self.identifier = notification.identifier
        self.payload = payload
        self.buttons = buttons
        self.scheduledAt = scheduledAt
        self.occurrence = occurrence
        self.isRemote = isRemote
    }

    /// The property-list type each known field must have (a `fireDate` sent as a number would
    /// otherwise read as no date and fire at once).
    static let fieldTypes: [String: @Sendable (UserInfoValue) -> Bool] = {
        let string: @Sendable (UserInfoValue) -> Bool = { $0.stringValue != nil }
        return [
            "identifier": string, "fireDate": { $0.dateValue != nil }, "timeZone": string,
            "timeZoneOffset": { $0.intValue != nil }, "wallClock": string, "repeatInterval": string,
            "alertTitle": string, "alertBody": string, "alertAction": string, "hasAction": { $0.boolValue != nil },
            "applicationIconBadgeNumber": { $0.intValue != nil }, "soundName": string, "category": string,
            "userInfo": { $0.dictionaryValue != nil },
        ]
    }()

    /// The notification as the app gets it back.
    package var notification: LocalNotification {
        LocalNotification(propertyList: .dictionary(payload)) ?? LocalNotification(identifier: identifier)
    }

    /// The absolute fire date, or `nil` for a floating notification or one without a date.
    package var fireDate: Date? { payload["fireDate"]?.dateValue }
    /// The wall-clock time a floating notification fires at.
    package var wallClock: WallClockDateTime? { payload["wallClock"]?.stringValue.flatMap(WallClockDateTime.init) }
    /// The calendar unit it repeats by.
    package var repeatInterval: CalendarUnit? {
        payload["repeatInterval"]?.stringValue.flatMap(CalendarUnit.init(rawValue:))
    }
    /// The banner's summary: the title, else the body's first line, else the identifier.
    package var summary: String { notification.alertTitle ?? notification.alertBody ?? identifier }

    /// The highest occurrence index accepted: a repeat every minute from year 1 reaches year 9999 at
    /// about 5.3 × 10⁹, so every index up to this keeps the fire-time arithmetic in range.
    package static let maximumOccurrence = 6_000_000_000

    /// The instant (seconds since the epoch, with the fire date's fraction) of occurrence `index`,
    /// with `zone` the local zone now.
    ///
    /// - A floating notification fires when the local clock shows its wall-clock time; each repeat
    ///   adds the unit on the wall clock (hours and minutes: on the real clock).
    /// - An absolute one fires at its instant; its repeats add the unit to the local reading of
    ///   that instant, so a daily one keeps its local time across daylight-saving changes.
    /// - A local time that does not exist (in a spring-forward gap) fires at the same distance
    ///   after the jump; one that exists twice fires at the first.
    ///
    /// - Parameters:
    ///   - index: The occurrence, from 0.
    ///   - zone: The local time zone.
    package func fireInstant(occurrence index: Int, in zone: any UTCOffsetRules) -> Double {
        let base: Int
        var fraction = 0.0
        let wall: WallClockDateTime
        if let wallClock {
            wall = wallClock
            base = Self.instant(of: wallClock, in: zone)
        } else {
            let seconds = (fireDate ?? scheduledAt).timeIntervalSince1970
            base = Int(seconds.rounded(.down))
            fraction = seconds - seconds.rounded(.down)
            wall = WallClockDateTime(instant: base, utcOffset: zone.utcOffset(at: base))
        }
        guard index > 0, let unit = repeatInterval else { return Double(base) + fraction }
        let instant: Int
        switch unit {
        case .minute: instant = base + index * 60
        case .hour: instant = base + index * 3_600
        default: instant = Self.instant(of: wall.adding(index, unit), in: zone)
        }
        return Double(instant) + fraction
    }

    /// The first occurrence at or after ``occurrence`` that is not before `now`, and its instant;
    /// the one at ``occurrence`` itself when it does not repeat (it may be past: it fires at once).
    ///
    /// - Parameters:
    ///   - now: Seconds since the epoch.
    ///   - zone: The local time zone.
    package func nextOccurrence(notBefore now: Double, in zone: any UTCOffsetRules) -> (
        occurrence: Int, instant: Double
    ) {
        var index = occurrence
        var instant = fireInstant(occurrence: index, in: zone)
        guard let unit = repeatInterval, instant < now else { return (index, instant) }
        // Jump close with the unit's longest length (so the jump never passes the answer: the loop
        // below only steps forward), then step; a few steps at most.
        let nominal: Double
        switch unit {
        case .minute: nominal = 60
        case .hour: nominal = 3_600
        case .day: nominal = 25 * 3_600
        case .weekOfYear: nominal = 7 * 25 * 3_600
        case .month: nominal = 31 * 86_400 + 3_600
        case .year: nominal = 366 * 86_400 + 3_600
        }
        index += max(0, Int(((now - instant) / nominal).rounded(.down)) - 1)
        instant = fireInstant(occurrence: index, in: zone)
        while instant < now {
            index += 1
            instant = fireInstant(occurrence: index, in: zone)
        }
        return (index, instant)
    }

    /// The instant a local wall-clock reading names in `zone` (see ``fireInstant(occurrence:in:)``
    /// for gaps and repeats).
    package static func instant(of wall: WallClockDateTime, in zone: any UTCOffsetRules) -> Int {
        let local = wall.secondsAsUTC
        // The offsets in force a day before and after bracket any single transition near the reading.
        let before = zone.utcOffset(at: local - 86_400)
        let after = zone.utcOffset(at: local + 86_400)
        var candidates = [local - before]
        if after != before { candidates.append(local - after) }
        let matching = candidates.filter { WallClockDateTime(instant: $0, utcOffset: zone.utcOffset(at: $0)) == wall }
        if let first = matching.min() { return first }
        // A gap: the reading does not exist; the offset before the jump puts it as far past the jump.
        return local - before
    }
}
