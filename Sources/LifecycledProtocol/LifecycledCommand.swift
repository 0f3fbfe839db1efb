import AppLifecycle
import FoundationEssentials

/// Everything lifecycled tells a hosted app, as the `Command(ssa{sv})` signal carries it: the one
/// codec of the daemon→app direction, used by the daemon to send and by `LifecycledHost` to receive.
///
/// | command | command name | arguments |
/// | --- | --- | --- |
/// | ``hostEvent(_:)`` | as ``HostEventBusCodec`` | as ``HostEventBusCodec`` |
/// | ``post(name:userInfo:)`` | `post` | `name: s`, `userInfo: a{sv}` |
/// | ``scheduleChanged(removed:updated:)`` | `scheduled-local-notifications-changed` | `removed: as`, `updated: av` of `a{sv}` |
///
/// ``encode()`` and ``decode(command:arguments:)`` are exhaustive switches: a new case does not
/// compile until it is on the wire both ways.
public enum LifecycledCommand: Sendable, Hashable {
    /// A host fact (``HostEventBusCodec``): sleep, lock, foreground, a URL, a notification, …
    case hostEvent(HostEvent)
    /// `lifecyclectl post`: a named notification the app posts into its own center, from the app object.
    case post(name: String, userInfo: UserInfo)
    /// A change to the app's schedule of local notifications: the identifiers that left it and the
    /// notifications added or replaced. The whole schedule is the host event
    /// `.scheduledLocalNotifications` (at registration); this is what changed since.
    case scheduleChanged(removed: [String], updated: [LocalNotification])

    /// The `post` command's name.
    public static let postName = "post"
    /// The schedule change's command name.
    public static let scheduleChangedName = "scheduled-local-notifications-changed"

    /// The command name and arguments, or `nil` for a host event no daemon forwards.
    public func encode() -> (command: String, arguments: UserInfo)? {
        switch self {
        case .hostEvent(let event):
            return HostEventBusCodec.encode(event)
        case .post(let name, let userInfo):
            return (Self.postName, ["name": .string(name), "userInfo": .dictionary(userInfo.values)])
        case .scheduleChanged(let removed, let updated):
            return (
                Self.scheduleChangedName,
                ["removed": .array(removed.map(UserInfoValue.string)), "updated": .array(updated.map(\.propertyList))]
            )
        }
    }

    /// The command for a name and arguments, or `nil` when the name is unknown or an argument is
    /// invalid (a `post` without a valid notification name, a schedule change with a malformed entry).
    ///
    /// - Parameters:
    ///   - command: The command name.
    ///   - arguments: Its arguments.
    public static func decode(command: String, arguments: UserInfo) -> LifecycledCommand? {
        switch command {
        case postName:
            guard let name = arguments["name"]?.stringValue, !name.isEmpty,
                name.utf8.count <= LifecycledProtocol.Limits.notificationNameLength
            else { return nil }
            let userInfo: UserInfo
            switch arguments["userInfo"] {
            case nil: userInfo = [:]
            case .dictionary(let values)?: userInfo = UserInfo(values)
            default: return nil
            }
            return .post(name: name, userInfo: userInfo)
        case scheduleChangedName:
            guard let removedValues = arguments["removed"]?.arrayValue,
                let updatedValues = arguments["updated"]?.arrayValue
            else { return nil }
            let removed = removedValues.compactMap(\.stringValue)
            let updated = updatedValues.compactMap(LocalNotification.init(propertyList:))
            guard removed.count == removedValues.count, updated.count == updatedValues.count else { return nil }
            return .scheduleChanged(removed: removed, updated: updated)
        default:
            return HostEventBusCodec.decode(command: command, arguments: arguments).map(LifecycledCommand.hostEvent)
        }
    }

    /// Whether the command may change a suspended app's state, so lifecycled resumes a stopped app
    /// to deliver it (and the app, still suspended afterwards, says so again).
    ///
    /// A suspended app runs no code. A fact that cannot move it out of `suspended` (the machine
    /// sleeps, the session locks or goes inactive, the clock, a device condition or the orientation
    /// changes, its schedule or badge changes) stays queued in its bus socket and is read, in order,
    /// when the app is next resumed; everything else (wake, foreground, a URL, a notification, a
    /// post, terminate…) resumes it first.
    public var resumesSuspendedApp: Bool {
        switch self {
        case .post: return true
        case .scheduleChanged: return false
        case .hostEvent(let event):
            switch event {
            case .sleeping(let sleeping): return !sleeping
            case .foreground(let foreground): return foreground
            case .sessionActive(let active): return active
            case .openURL, .remoteNotification, .remoteNotificationOpened, .remoteNotificationAction,
                .localNotification,
                .localNotificationOpened, .localNotificationAction, .shortcutItem, .backgroundFetch, .terminate:
                return true
            case .locked, .focused, .significantTimeChange, .memoryWarning, .scheduledLocalNotifications,
                .applicationIconBadgeNumber, .lowPowerMode, .thermalState, .backgroundRefreshStatus,
                .statusBarOrientation:
                // The device's conditions and orientation too: a suspended app is told of the latest
                // of each only when it comes back to the foreground.
                return false
            case .registeredForRemoteNotifications, .failedToRegisterForRemoteNotifications,
                .unregisteredForRemoteNotifications, .backgroundURLSessionEvents, .willContinueUserActivity,
                .continueUserActivity, .failedToContinueUserActivity, .userActivityUpdated, .statusBarFrame:
                return false  // never sent (``HostEventBusCodec/encode(_:)``)
            }
        }
    }
}
