import ArgumentParser
import Foundation

/// `lifecyclectl apps`: the apps lifecycled knows, as a table or JSON (`ListApps`).
struct AppsCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "List the apps lifecycled knows, with their state and pid.")

    @OptionGroup var daemon: DaemonOptions

    @Flag(help: "Print a JSON array of {id, state, name, pid}.")
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let apps = try await DaemonClient.with(daemon.busAddress) { try await $0.listApps() }
        if json {
            output.out(jsonLine(apps))
            return
        }
        let rows =
            [["ID", "STATE", "NAME", "PID"]]
            + apps.map { [$0.id, $0.state, $0.name, $0.pid == 0 ? "-" : String($0.pid)] }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            output.out(cells.joined(separator: "  "))
        }
    }
}
