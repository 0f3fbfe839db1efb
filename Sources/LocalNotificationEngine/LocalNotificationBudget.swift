/// The bytes the local notifications of each app take, against a per-app and a total limit, so
/// no message that carries them (`ListNotifications`' reply, the registration's schedule
/// `Command`) can outgrow the bus (``LifecycledProtocol/Limits/busMessageBytes``).
///
/// A notification's bytes are those of the D-Bus form of its `ListNotifications` entry
/// (``LifecycleDaemon/listEntry(_:instant:)``), the largest form it is sent in.
package struct LocalNotificationBudget {
    /// The most bytes one app may hold.
    package let perAppLimit: Int
    /// The most bytes all apps together may hold.
    package let totalLimit: Int
    private var bytes: [LocalNotificationSchedule.Key: Int] = [:]
    /// The bytes each app holds.
    package private(set) var perApp: [String: Int] = [:]
    /// The bytes all apps hold.
    package private(set) var total = 0

    package init(perAppLimit: Int, totalLimit: Int) {
        self.perAppLimit = perAppLimit
        self.totalLimit = totalLimit
    }

    /// Why holding `size` bytes under `key` (in place of what it holds now) would pass a limit, or `nil`.
    package func excess(_ size: Int, for key: LocalNotificationSchedule.Key) -> String? {
        let old = bytes[key] ?? 0
        let app = perApp[key.appID, default: 0] - old + size
        if app > perAppLimit {
            return
                "\(key.appID) would have \(app) bytes of local notifications, more than the \(perAppLimit) one app may have; cancel some or make them smaller"
        }
        let all = total - old + size
        if all > totalLimit {
            return
                "all apps would have \(all) bytes of local notifications, more than the \(totalLimit) lifecycled keeps; cancel some first"
        }
        return nil
    }

    /// Records what `key` holds now: `size` bytes, or nothing (`nil`).
    package mutating func set(_ key: LocalNotificationSchedule.Key, _ size: Int?) {
        let old = bytes[key] ?? 0
        if let size { bytes[key] = size } else { bytes[key] = nil }
        let new = size ?? 0
        perApp[key.appID, default: 0] += new - old
        if perApp[key.appID] == 0 { perApp[key.appID] = nil }
        total += new - old
    }
}
