import AppLifecycle
import FoundationEssentials
import SystemdBus

/// Encodes host events as `lifecycled` `Command` signals (`command`, `a{sv}` arguments) and back.
///
/// | HostEvent | command | arguments |
/// | --- | --- | --- |
/// | `.sleeping(b)` | `sleeping` | `value: b` |
/// | `.locked(b)` | `locked` | `value: b` |
/// | `.sessionActive(b)` | `session-active` | `value: b` |
/// | `.foreground(b)` | `foreground` | `value: b` |
/// | `.focused(b)` | `focused` | `value: b` |
/// | `.terminate(r)` | `terminate` | `reason: s` |
/// | `.significantTimeChange(c)` | `time-change` | `reason: s`, `timezone: s`? |
/// | `.memoryWarning(w)` | `memory-warning` | `level: s`, `source: s` |
/// | `.openURL(u, o)` | `open-url` | `url: s`, the `UIApplicationOpenURLOptions…Key` entries |
/// | `.remoteNotification(p)` | `remote-notification` | `payload: a{sv}` |
/// | `.remoteNotificationOpened(p)` | `remote-notification-opened` | `payload: a{sv}` |
/// | `.remoteNotificationAction(i, p)` | `remote-notification-action` | `identifier: s`?, `payload: a{sv}` |
/// | `.localNotification(n)` | `local-notification` | `notification: a{sv}` |
/// | `.localNotificationOpened(n)` | `local-notification-opened` | `notification: a{sv}`, `activation-token: s`? |
/// | `.localNotificationAction(i, n)` | `local-notification-action` | `identifier: s`, `notification: a{sv}` |
/// | `.scheduledLocalNotifications(l)` | `scheduled-local-notifications` | `notifications: av` of `a{sv}` |
/// | `.applicationIconBadgeNumber(c)` | `badge` | `value: x` |
/// | `.shortcutItem(i)` | `shortcut-item` | `item: a{sv}` (`type`, `localizedTitle`, …) |
/// | `.backgroundFetch` | `background-fetch` | — |
/// | `.lowPowerMode(b)` | `low-power-mode` | `value: b` |
/// | `.thermalState(t)` | `thermal-state` | `value: x` (`ThermalState`'s raw value, 0 nominal … 3 critical) |
/// | `.backgroundRefreshStatus(s)` | `background-refresh-status` | `value: x` (0 restricted, 1 denied, 2 available) |
/// | `.statusBarOrientation(o, d)` | `status-bar-orientation` | `orientation: x` (`InterfaceOrientation`'s raw value), `duration: d` (seconds, finite, ≥ 0) |
///
/// The other events are not host facts a daemon forwards (the app's own push registration, user
/// activities, the status bar's frame): each is listed in ``encode(_:)``'s exhaustive switch and
/// encodes to `nil`, so a new `HostEvent` case does not compile until it is given a command or
/// declared local.
/// Decoding validates every argument and returns `nil` for an unknown command or a bad argument.
/// The daemon's other commands are ``LifecycledCommand``'s.
public enum HostEventBusCodec {
    /// The command and arguments for an event, or `nil` when it is not forwarded.
    public static func encode(_ event: HostEvent) -> (command: String, arguments: UserInfo)? {
        switch event {
        case .sleeping(let value): return ("sleeping", ["value": .bool(value)])
        case .locked(let value): return ("locked", ["value": .bool(value)])
        case .sessionActive(let value): return ("session-active", ["value": .bool(value)])
        case .foreground(let value): return ("foreground", ["value": .bool(value)])
        case .focused(let value): return ("focused", ["value": .bool(value)])
        case .terminate(let reason): return ("terminate", ["reason": .string(reason.rawValue)])
        case .significantTimeChange(let change):
            var arguments: UserInfo = ["reason": .string(change.reason.rawValue)]
            if let zone = change.timeZoneIdentifier { arguments["timezone"] = .string(zone) }
            return ("time-change", arguments)
        case .memoryWarning(let warning):
            return ("memory-warning", ["level": .string(warning.level.rawValue), "source": .string(warning.source)])
        case .openURL(let url, let options):
            return ("open-url", options.userInfo.merging(["url": .string(url.absoluteString)]))
        case .remoteNotification(let payload):
            return ("remote-notification", ["payload": .dictionary(payload.values)])
        case .remoteNotificationOpened(let payload):
            return ("remote-notification-opened", ["payload": .dictionary(payload.values)])
        case .remoteNotificationAction(let identifier, let payload):
            var arguments: UserInfo = ["payload": .dictionary(payload.values)]
            if let identifier { arguments["identifier"] = .string(identifier) }
            return ("remote-notification-action", arguments)
        case .localNotification(let notification):
            return ("local-notification", ["notification": notification.propertyList])
        case .localNotificationOpened(let notification):
            return ("local-notification-opened", ["notification": notification.propertyList])
        case .localNotificationAction(let identifier, let notification):
            var arguments: UserInfo = ["notification": notification.propertyList]
            if let identifier { arguments["identifier"] = .string(identifier) }
            return ("local-notification-action", arguments)
        case .scheduledLocalNotifications(let notifications):
            return ("scheduled-local-notifications", ["notifications": .array(notifications.map(\.propertyList))])
        case .applicationIconBadgeNumber(let count):
            return ("badge", ["value": .int(Int64(count))])
        case .shortcutItem(let item):
            return ("shortcut-item", ["item": item.propertyList])
        case .backgroundFetch:
            return ("background-fetch", [:])
        case .lowPowerMode(let enabled):
            return ("low-power-mode", ["value": .bool(enabled)])
        case .thermalState(let state):
            return ("thermal-state", ["value": .int(Int64(state.rawValue))])
        case .backgroundRefreshStatus(let status):
            return ("background-refresh-status", ["value": .int(Int64(status.rawValue))])
        case .statusBarOrientation(let orientation, let duration):
            return (
                "status-bar-orientation",
                ["orientation": .int(Int64(orientation.rawValue)), "duration": .double(duration)]
            )
        case .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications,
            .unregisteredForRemoteNotifications, .backgroundURLSessionEvents, .willContinueUserActivity,
            .continueUserActivity, .failedToContinueUserActivity, .userActivityUpdated, .statusBarFrame:
            // The app's own facts (its connector, its activities, its window): no daemon sends them.
            return nil
        }
    }

    /// The event for a command, or `nil` when the command is unknown or an argument is invalid.
    public static func decode(command: String, arguments: UserInfo) -> HostEvent? {
        let value = arguments["value"]?.boolValue
        switch command {
        case "sleeping": return value.map(HostEvent.sleeping)
        case "locked": return value.map(HostEvent.locked)
        case "session-active": return value.map(HostEvent.sessionActive)
        case "foreground": return value.map(HostEvent.foreground)
        case "focused": return value.map(HostEvent.focused)
        case "terminate":
            return arguments["reason"]?.stringValue.flatMap(TerminationReason.init(rawValue:)).map(HostEvent.terminate)
        case "time-change":
            guard let reason = arguments["reason"]?.stringValue.flatMap(SignificantTimeChange.Reason.init(rawValue:))
            else { return nil }
            return .significantTimeChange(
                SignificantTimeChange(reason: reason, timeZoneIdentifier: arguments["timezone"]?.stringValue))
        case "memory-warning":
            guard let level = arguments["level"]?.stringValue.flatMap(MemoryWarning.Level.init(rawValue:)) else {
                return nil
            }
            return .memoryWarning(MemoryWarning(level: level, source: arguments["source"]?.stringValue ?? "lifecycled"))
        case "open-url":
            guard let text = arguments["url"]?.stringValue, text.utf8.count <= LifecycledProtocol.Limits.urlLength,
                let url = URL(string: text), url.scheme != nil
            else { return nil }
            return .openURL(url, OpenURLOptions(userInfo: arguments))
        case "remote-notification":
            return arguments["payload"]?.dictionaryValue.map { .remoteNotification(UserInfo($0)) }
        case "remote-notification-opened":
            return arguments["payload"]?.dictionaryValue.map { .remoteNotificationOpened(UserInfo($0)) }
        case "remote-notification-action":
            guard let payload = arguments["payload"]?.dictionaryValue else { return nil }
            let identifier = arguments["identifier"]
            guard identifier == nil || identifier?.stringValue != nil else { return nil }
            return .remoteNotificationAction(identifier: identifier?.stringValue, payload: UserInfo(payload))
        case "local-notification":
            return arguments["notification"].flatMap(LocalNotification.init(propertyList:)).map(
                HostEvent.localNotification)
        case "local-notification-opened":
            return arguments["notification"].flatMap(LocalNotification.init(propertyList:)).map(
                HostEvent.localNotificationOpened)
        case "local-notification-action":
            guard let notification = arguments["notification"].flatMap(LocalNotification.init(propertyList:)) else {
                return nil
            }
            return .localNotificationAction(
                identifier: arguments["identifier"]?.stringValue, notification: notification)
        case "scheduled-local-notifications":
            guard let list = arguments["notifications"]?.arrayValue else { return nil }
            let notifications = list.compactMap(LocalNotification.init(propertyList:))
            guard notifications.count == list.count else { return nil }
            return .scheduledLocalNotifications(notifications)
        case "badge":
            return arguments["value"]?.intValue.flatMap { Int(exactly: $0) }.map(HostEvent.applicationIconBadgeNumber)
        case "shortcut-item":
            return arguments["item"].flatMap(ShortcutItem.init(propertyList:)).map(HostEvent.shortcutItem)
        case "background-fetch":
            return .backgroundFetch
        case "low-power-mode":
            return value.map(HostEvent.lowPowerMode)
        case "thermal-state":
            return rawInt(arguments["value"]).flatMap(ThermalState.init(rawValue:)).map(HostEvent.thermalState)
        case "background-refresh-status":
            return rawInt(arguments["value"]).flatMap(BackgroundRefreshStatus.init(rawValue:)).map(
                HostEvent.backgroundRefreshStatus)
        case "status-bar-orientation":
            guard let orientation = rawInt(arguments["orientation"]).flatMap(InterfaceOrientation.init(rawValue:)),
                case .double(let duration)? = arguments["duration"], duration.isFinite, duration >= 0
            else { return nil }
            return .statusBarOrientation(orientation, duration: duration)
        default:
            return nil
        }
    }

    /// An integer argument as `Int`, or `nil` when it is missing, not an integer, or out of `Int`'s range.
    private static func rawInt(_ value: UserInfoValue?) -> Int? {
        value?.intValue.flatMap { Int(exactly: $0) }
    }
}
