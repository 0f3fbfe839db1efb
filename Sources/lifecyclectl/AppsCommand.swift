import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl apps`: the apps lifecycled knows, with their state, pid, windows and why they are
/// where they are (`DescribeApps`), as a table or JSON.
struct AppsCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the apps lifecycled knows: state, pid, windows, and why they are in that state.")

    @OptionGroup var daemon: DaemonOptions

    @Flag(
        help:
            "Print a JSON array of {id, state, name, pid, windowState, windows, reason, frozen, exempt, adoptsLifecycle}."
    )
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    /// One app as `DescribeApps` gives it.
    struct Entry: Encodable {
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

    func execute(output: CtlOutput) async throws {
        let entries = try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            let reply = try await client.call(LifecycledProtocol.Method.describeApps.name)
            return try (reply.first?.arrayValue ?? []).map { Entry(try UserInfoBusCodec.decodeUserInfo($0)) }
        }
        if json {
            output.out(jsonLine(entries))
            return
        }
        let rows =
            [["ID", "STATE", "PID", "WINDOWS", "WHY"]]
            + entries.map { entry in
                [
                    entry.id, entry.state, entry.pid == 0 ? "-" : String(entry.pid),
                    entry.windows.isEmpty ? "-" : entry.windows.joined(separator: ", "), entry.why,
                ]
            }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            output.out(cells.joined(separator: "  "))
        }
    }
}
