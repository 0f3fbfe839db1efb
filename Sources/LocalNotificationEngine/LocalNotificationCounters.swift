import Logging

/// What a ``LocalNotificationCenter`` did since it started: notifications scheduled, fired,
/// shown as banners and handed to an active app. `lifecyclectl status` shows them (lifecycled's
/// `GetCounters`) and each log line of one of those events carries them as journal fields
/// (`NOTIFICATIONS_SCHEDULED=…`).
package struct LocalNotificationCounters: Sendable, Equatable {
    /// Notifications taken into the schedule (a replacement counts again).
    package var scheduled = 0
    /// Scheduled notifications that came due (each repeat counts).
    package var fired = 0
    /// Banners the notification server showed.
    package var shown = 0
    /// Notifications handed to their app while it was active, instead of a banner.
    package var deliveredToApp = 0

    /// No events yet.
    package init() {}

    /// The counters by the names `GetCounters` and the journal use (`notifications-scheduled`, …).
    package var values: [String: Int] {
        [
            "notifications-scheduled": scheduled, "notifications-fired": fired, "notifications-shown": shown,
            "notifications-delivered-to-app": deliveredToApp,
        ]
    }

    /// The counters as log metadata (journal fields `NOTIFICATIONS_SCHEDULED`, …).
    package var metadata: Logger.Metadata { values.mapValues { "\($0)" } }
}
