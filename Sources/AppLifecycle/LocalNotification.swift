import FoundationEssentials

/// A notification the app scheduled for itself, delivered by the host at its fire date.
///
/// The Linux counterpart of `UILocalNotification`. On a desktop the host shows it through
/// `org.freedesktop.Notifications` when the app is not active, and calls
/// ``ApplicationDelegate/application(_:didReceive:)-(_,LocalNotification)`` when it is.
public struct LocalNotification: Sendable, Hashable, Codable {
    /// A stable identifier for the notification.
    public var identifier: String
    /// When it fires, or `nil` to fire at once.
    public var fireDate: Date?
    /// The alert's title.
    public var alertTitle: String?
    /// The alert's body.
    public var alertBody: String?
    /// The title of the alert's default action.
    public var alertAction: String?
    /// The badge number the app's icon shows when it fires.
    public var applicationIconBadgeNumber: Int
    /// The sound to play, by name.
    public var soundName: String?
    /// Custom data for the app.
    public var userInfo: UserInfo

    /// Creates a local notification.
    ///
    /// - Parameters:
    ///   - identifier: A stable identifier.
    ///   - fireDate: When it fires, or `nil` for now.
    ///   - alertTitle: The alert's title.
    ///   - alertBody: The alert's body.
    ///   - alertAction: The title of the default action.
    ///   - applicationIconBadgeNumber: The badge number.
    ///   - soundName: The sound to play.
    ///   - userInfo: Custom data for the app.
    public init(
        identifier: String, fireDate: Date? = nil, alertTitle: String? = nil, alertBody: String? = nil,
        alertAction: String? = nil, applicationIconBadgeNumber: Int = 0, soundName: String? = nil,
        userInfo: UserInfo = [:]
    ) {
        self.identifier = identifier
        self.fireDate = fireDate
        self.alertTitle = alertTitle
        self.alertBody = alertBody
        self.alertAction = alertAction
        self.applicationIconBadgeNumber = applicationIconBadgeNumber
        self.soundName = soundName
        self.userInfo = userInfo
    }

    /// The notification as a property-list dictionary (the form launch options and the bus carry).
    public var propertyList: UserInfoValue {
        var entries: [String: UserInfoValue] = [
            "identifier": .string(identifier), "userInfo": .dictionary(userInfo.values),
        ]
        if let fireDate { entries["fireDate"] = .date(fireDate) }
        if let alertTitle { entries["alertTitle"] = .string(alertTitle) }
        if let alertBody { entries["alertBody"] = .string(alertBody) }
        if let alertAction { entries["alertAction"] = .string(alertAction) }
        if applicationIconBadgeNumber != 0 {
            entries["applicationIconBadgeNumber"] = .int(Int64(applicationIconBadgeNumber))
        }
        if let soundName { entries["soundName"] = .string(soundName) }
        return .dictionary(entries)
    }

    /// Reads a notification from its property-list form, or returns `nil` when it has no identifier.
    ///
    /// - Parameters:
    ///   - propertyList: A dictionary as produced by ``propertyList``.
    public init?(propertyList: UserInfoValue) {
        guard let entries = propertyList.dictionaryValue, let identifier = entries["identifier"]?.stringValue else {
            return nil
        }
        self.init(
            identifier: identifier, fireDate: entries["fireDate"]?.dateValue,
            alertTitle: entries["alertTitle"]?.stringValue, alertBody: entries["alertBody"]?.stringValue,
            alertAction: entries["alertAction"]?.stringValue,
            applicationIconBadgeNumber: Int(entries["applicationIconBadgeNumber"]?.intValue ?? 0),
            soundName: entries["soundName"]?.stringValue,
            userInfo: UserInfo(entries["userInfo"]?.dictionaryValue ?? [:]))
    }
}
