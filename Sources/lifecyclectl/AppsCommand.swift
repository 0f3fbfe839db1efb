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
            "Print a JSON array of {id, state, name, pid, windowState, windows, reason, frozen, exempt, adoptsLifecycle, nextFetch, fetching, fetchDeferred, backgroundRefresh}."
    )
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let entries = try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            return try await client.describeApps()
        }
        if json {
            output.out(jsonLine(entries))
            return
        }
        let rows =
            [["ID", "STATE", "PID", "WINDOWS", "NEXT FETCH", "WHY"]]
            + entries.map { entry in
                [
                    entry.id, entry.state, entry.pid == 0 ? "-" : String(entry.pid),
                    entry.windows.isEmpty ? "-" : entry.windows.joined(separator: ", "), entry.fetch, entry.why,
                ]
            }
        let widths = (0..<6).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            output.out(cells.joined(separator: "  "))
        }
    }
}
