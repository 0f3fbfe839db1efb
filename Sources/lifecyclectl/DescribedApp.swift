import AppLifecycle

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
