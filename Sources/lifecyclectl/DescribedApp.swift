import AppLifecycle
import Foundation

/// One app as `DescribeApps` gives it (`lifecyclectl apps`, `status`).
struct DescribedApp: Encodable {
    var id: String
    var state: String
    var name: String
    var pid: Int64
    var windowState: String
    var windows: [String]
    var reason: String
    var frozen: Bool
    var exempt: String?
    var adoptsLifecycle: Bool
    var cgroup: String?
    /// When its next background fetch is due (Unix seconds on lifecycled's fetch clock).
    var nextFetch: Double?
    /// Whether a background fetch of it runs now.
    var fetching: Bool
    /// Why its due fetch waits (`metered-network`, `low-power-mode`, …).
    var fetchDeferred: String?
    /// `denied` when the user turned its background refresh off.
    var backgroundRefresh: String?

    init(_ info: UserInfo) {
        id = info["id"]?.stringValue ?? "?"
        state = info["state"]?.stringValue ?? "?"
        name = info["name"]?.stringValue ?? ""
        pid = info["pid"]?.intValue ?? 0
        windowState = info["window-state"]?.stringValue ?? "no-window"
        windows = info["windows"]?.arrayValue?.compactMap(\.stringValue) ?? []
        reason = info["reason"]?.stringValue ?? ""
        frozen = info["frozen"]?.boolValue ?? false
        exempt = info["exempt"]?.stringValue
        adoptsLifecycle = info["adopts-lifecycle"]?.boolValue ?? true
        cgroup = info["cgroup"]?.stringValue
        nextFetch = info["next-fetch"]?.doubleValue
        fetching = info["fetching"]?.boolValue ?? false
        fetchDeferred = info["fetch-deferred"]?.stringValue
        backgroundRefresh = info["background-refresh"]?.stringValue
    }

    /// Its background fetch in a few words: `fetching`, the next due time in UTC, why it waits.
    var fetch: String {
        var parts: [String] = []
        if fetching { parts.append("fetching") }
        if let nextFetch {
            parts.append(Date(timeIntervalSince1970: nextFetch.rounded()).ISO8601Format())
        }
        if let fetchDeferred { parts.append("deferred: \(fetchDeferred)") }
        if backgroundRefresh == "denied" { parts.append("refresh off") }
        return parts.isEmpty ? "-" : parts.joined(separator: "; ")
    }

    /// Why the app is where it is, in a few words: its window fact and what followed.
    var why: String {
        var parts: [String] = []
        if !reason.isEmpty { parts.append(reason) } else if windowState != "no-window" { parts.append(windowState) }
        if frozen, !parts.contains(where: { $0.contains("frozen") }) { parts.append("frozen") }
        if let exempt { parts.append("never frozen: \(exempt)") }
        if !adoptsLifecycle { parts.append("plain program") }
        return parts.isEmpty ? "-" : parts.joined(separator: "; ")
    }
}
