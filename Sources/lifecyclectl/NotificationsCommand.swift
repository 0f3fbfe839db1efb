import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl notifications [APP] [--json]`: the schedule of local notifications (`ListNotifications`).
struct NotificationsCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "notifications", abstract: "List the scheduled local notifications, soonest first.")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "Only this app's (default: every app's).")
    var app: String?

    @Flag(help: "Print one JSON object per notification (its property list, app and nextFireDate).")
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let app = try self.app.map(validatedAppID) ?? ""
        let reply = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(LifecycledProtocol.Method.listNotifications.name, [.string(app)])
        }
        guard reply.count == 1, case .array(_, let entries) = reply[0] else {
            throw BusError(
                name: BusError.Name.failed,
                message: "ListNotifications returned \(BusValue.signature(of: reply)), not aa{sv}")
        }
        let notifications = try entries.map { try UserInfoBusCodec.decodeUserInfo($0) }
        if json {
            for notification in notifications { output.out(notification.json) }
            return
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = .current
        func row(_ info: UserInfo) -> [String] {
            let next = info["nextFireDate"]?.dateValue.map { formatter.string(from: $0) } ?? "?"
            let text = info["alertTitle"]?.stringValue ?? info["alertBody"]?.stringValue ?? ""
            return [
                info["app"]?.stringValue ?? "?", info["identifier"]?.stringValue ?? "?", next,
                info["repeatInterval"]?.stringValue ?? "-", text,
            ]
        }
        let rows: [[String]] = [["APP", "ID", "NEXT", "REPEAT", "TEXT"]] + notifications.map(row)
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            output.out(
                row.enumerated().map { index, cell in
                    index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                }.joined(separator: "  "))
        }
    }
}
