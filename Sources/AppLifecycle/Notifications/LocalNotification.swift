import FoundationEssentials

/// A notification the app scheduled for itself, delivered by the host at its fire date.
///
/// The Linux counterpart of `UILocalNotification`. The host keeps the schedule (lifecycled, so it
/// fires when the app is not running, after a restart or a reboot); at the fire date it calls
/// ``ApplicationDelegate/application(_:didReceive:)-(_,LocalNotification)`` when the app is active,
/// and otherwise shows a banner through `org.freedesktop.Notifications` whose click brings the app
/// back (or launches it with ``LaunchOptions/Key/localNotification``).
///
/// Unlike `UILocalNotification` it has an ``identifier``: scheduling a notification with the
/// identifier of one already scheduled replaces it, and cancelling goes by identifier.
public struct LocalNotification: Sendable, Hashable, Codable {
    /// Upper bounds a notification must keep (in UTF-8 bytes where it is text); a notification
    /// over one is rejected with a logged error when scheduled, and refused by lifecycled.
    public enum Limits {
        /// The longest identifier.
        public static let identifierLength = 255
        /// The longest title.
        public static let titleLength = 1024
        /// The longest body.
        public static let bodyLength = 8192
        /// The longest sound name, category, alert action or action identifier and title.
        public static let nameLength = 255
        /// The most actions a banner carries.
        public static let actions = 8
    }

    /// A stable identifier for the notification.
    public var identifier: String
    /// When it fires, or `nil` to fire at once.
    public var fireDate: Date?
    /// `nil`: ``fireDate`` is an absolute instant. Set: ``fireDate`` is read as a wall-clock time
    /// in this zone, and the notification fires when the local clock shows that time, following
    /// later time-zone changes (an alarm clock).
    public var timeZone: TimeZone?
    /// The calendar unit the notification repeats by, or `nil` to fire once.
    public var repeatInterval: CalendarUnit?
    /// The alert's title.
    public var alertTitle: String?
    /// The alert's body.
    public var alertBody: String?
    /// The title of the alert's default action (the banner's click).
    public var alertAction: String?
    /// Whether the banner offers its default action (clicking it opens the app); `true` by default.
    public var hasAction: Bool
    /// The badge number the app's icon shows when it fires (0 leaves the badge alone).
    public var applicationIconBadgeNumber: Int
    /// The sound to play, by name (the `sound-name` hint: a freedesktop sound-theme name).
    public var soundName: String?
    /// The identifier of a category registered with ``Application/registerUserNotificationSettings(_:)``,
    /// whose actions become the banner's buttons.
    public var category: String?
    /// Custom data for the app.
    public var userInfo: UserInfo

    /// Creates a local notification.
    ///
    /// - Parameters:
    ///   - identifier: A stable identifier; scheduling another with the same one replaces it.
    ///   - fireDate: When it fires, or `nil` for now.
    ///   - timeZone: `nil` for an absolute fire date, or the zone it is a wall-clock time in.
    ///   - repeatInterval: The calendar unit it repeats by.
    ///   - alertTitle: The banner's summary.
    ///   - alertBody: The banner's body.
    ///   - alertAction: The label of the banner's default action.
    ///   - hasAction: Whether the banner can be clicked to open the app.
    ///   - applicationIconBadgeNumber: The badge number it sets when it fires.
    ///   - soundName: The sound to play.
    ///   - category: The registered category whose actions the banner offers.
    ///   - userInfo: Custom data for the app.
    public init(
        identifier: String, fireDate: Date? = nil, timeZone: TimeZone? = nil, repeatInterval: CalendarUnit? = nil,
        alertTitle: String? = nil, alertBody: String? = nil, alertAction: String? = nil, hasAction: Bool = true,
        applicationIconBadgeNumber: Int = 0, soundName: String? = nil, category: String? = nil,
        userInfo: UserInfo = [:]
    ) {
        self.identifier = identifier
        self.fireDate = fireDate
        self.timeZone = timeZone
        self.repeatInterval = repeatInterval
        self.alertTitle = alertTitle
        self.alertBody = alertBody
        self.alertAction = alertAction
        self.hasAction = hasAction
        self.applicationIconBadgeNumber = applicationIconBadgeNumber
        self.soundName = soundName
        self.category = category
        self.userInfo = userInfo
    }

    /// What the wall clock shows at ``fireDate`` in ``timeZone``: the time a floating notification
    /// fires at in whatever zone is in force then. `nil` for an absolute notification.
    public var wallClockFireDate: WallClockDateTime? {
        guard let fireDate, let timeZone, fireDate.timeIntervalSince1970.isFinite else { return nil }
        let instant = Int(fireDate.timeIntervalSince1970.rounded(.down))
        return WallClockDateTime(instant: instant, utcOffset: timeZone.secondsFromGMT(for: fireDate))
    }

    /// Checks the notification against ``Limits`` and for a fire date that is not a finite instant.
    ///
    /// - Throws: `ApplicationError` with code `invalidInput` saying which field is wrong.
    public func validate() throws(ApplicationError) {
        func check(_ value: String?, _ limit: Int, _ field: String) throws(ApplicationError) {
            guard let value, value.utf8.count > limit else { return }
            throw ApplicationError(.invalidInput, "\(field) is \(value.utf8.count) bytes, more than \(limit)")
        }
        guard !identifier.isEmpty else { throw ApplicationError(.invalidInput, "the identifier is empty") }
        try check(identifier, Limits.identifierLength, "the identifier")
        try check(alertTitle, Limits.titleLength, "alertTitle")
        try check(alertBody, Limits.bodyLength, "alertBody")
        try check(alertAction, Limits.nameLength, "alertAction")
        try check(soundName, Limits.nameLength, "soundName")
        try check(category, Limits.nameLength, "category")
        if let fireDate {
            let seconds = fireDate.timeIntervalSince1970
            // Year 1 to year 9999, the range every clock and schedule here can carry.
            guard UserInfoValue.representableDateSeconds.contains(seconds) else {
                throw ApplicationError(.invalidInput, "fireDate \(seconds) is not a valid instant")
            }
        }
        guard (Int(Int32.min)...Int(Int32.max)).contains(applicationIconBadgeNumber) else {
            throw ApplicationError(
                .invalidInput, "applicationIconBadgeNumber \(applicationIconBadgeNumber) is out of range")
        }
    }

    /// The notification as a property-list dictionary (the form launch options, the bus and the
    /// schedule file carry). A floating notification also carries `wallClock` (its
    /// ``wallClockFireDate``) and `timeZoneOffset`, so a reader without the zone database still
    /// knows what it fires at.
    public var propertyList: UserInfoValue {
        var entries: [String: UserInfoValue] = [
            "identifier": .string(identifier), "userInfo": .dictionary(userInfo.values),
        ]
        if let fireDate { entries["fireDate"] = .date(fireDate) }
        if let timeZone {
            entries["timeZone"] = .string(timeZone.identifier)
            if let fireDate { entries["timeZoneOffset"] = .int(Int64(timeZone.secondsFromGMT(for: fireDate))) }
        }
        if let wallClockFireDate { entries["wallClock"] = .string(wallClockFireDate.description) }
        if let repeatInterval { entries["repeatInterval"] = .string(repeatInterval.rawValue) }
        if let alertTitle { entries["alertTitle"] = .string(alertTitle) }
        if let alertBody { entries["alertBody"] = .string(alertBody) }
        if let alertAction { entries["alertAction"] = .string(alertAction) }
        if !hasAction { entries["hasAction"] = .bool(false) }
        if applicationIconBadgeNumber != 0 {
            entries["applicationIconBadgeNumber"] = .int(Int64(applicationIconBadgeNumber))
        }
        if let soundName { entries["soundName"] = .string(soundName) }
        if let category { entries["category"] = .string(category) }
        return .dictionary(entries)
    }

    /// Reads a notification from its property-list form, or returns `nil` when it has no identifier.
    ///
    /// A `timeZone` that this process cannot look up by name (FoundationEssentials has no zone
    /// database) becomes a fixed-offset zone with the `timeZoneOffset` it had at the fire date.
    ///
    /// - Parameters:
    ///   - propertyList: A dictionary as produced by ``propertyList``.
    public init?(propertyList: UserInfoValue) {
        guard let entries = propertyList.dictionaryValue, let identifier = entries["identifier"]?.stringValue else {
            return nil
        }
        var timeZone: TimeZone?
        if let name = entries["timeZone"]?.stringValue {
            timeZone =
                TimeZone(identifier: name)
                ?? entries["timeZoneOffset"]?.intValue.flatMap { TimeZone(secondsFromGMT: Int($0)) }
        }
        self.init(
            identifier: identifier, fireDate: entries["fireDate"]?.dateValue, timeZone: timeZone,
            repeatInterval: entries["repeatInterval"]?.stringValue.flatMap(CalendarUnit.init(rawValue:)),
            alertTitle: entries["alertTitle"]?.stringValue, alertBody: entries["alertBody"]?.stringValue,
            alertAction: entries["alertAction"]?.stringValue, hasAction: entries["hasAction"]?.boolValue ?? true,
            applicationIconBadgeNumber: Int(clamping: entries["applicationIconBadgeNumber"]?.intValue ?? 0),
            soundName: entries["soundName"]?.stringValue, category: entries["category"]?.stringValue,
            userInfo: UserInfo(entries["userInfo"]?.dictionaryValue ?? [:]))
    }
}
