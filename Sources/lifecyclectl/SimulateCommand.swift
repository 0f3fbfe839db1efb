import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledClient
import SystemdBus

/// `lifecyclectl simulate EVENT [LEVEL] [--app ID]`: injects a host event into lifecycled
/// (`Simulate`); host facts reach every app, `terminate --app ID` ends one.
///
/// The events are `sleep`, `wake`, `lock`, `unlock`, `memory-warning LEVEL` (`low`, `medium`,
/// `critical`), `time-change` and `terminate`. The call is `Simulate(event, {app?: s, level?: s})`;
/// lifecycled refuses it unless simulation is enabled.
struct SimulateCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Inject a host event: sleep, wake, lock, unlock, memory-warning LEVEL, time-change, terminate.")

    /// The events lifecycled's `Simulate` accepts.
    static let events = ["sleep", "wake", "lock", "unlock", "memory-warning", "time-change", "terminate"]

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The event: \(SimulateCommand.events.joined(separator: ", ")).", valueName: "event"))
    var event: String

    @Argument(help: ArgumentHelp("For memory-warning: low, medium or critical.", valueName: "level"))
    var level: String?

    @Option(help: ArgumentHelp("With terminate only: end this app (default: every app).", valueName: "id"))
    var app: String?

    func run() async throws { try await runOnStandardStreams() }

    /// The `Simulate` arguments, checked.
    ///
    /// - Throws: ``CtlUsageError`` for an unknown event, a missing or bad level, or a bad app id.
    func simulateArguments() throws -> (event: String, arguments: UserInfo) {
        guard Self.events.contains(event) else {
            throw CtlUsageError("unknown event '\(event)'; expected one of: \(Self.events.joined(separator: ", "))")
        }
        var arguments = UserInfo()
        if let app {
            // Host facts concern the whole session; only termination targets one app.
            guard event == "terminate" else { throw CtlUsageError("--app only applies to terminate, not '\(event)'") }
            arguments["app"] = .string(try validatedAppID(app))
        }
        if event == "memory-warning" {
            guard let level else { throw CtlUsageError("memory-warning needs a level: low, medium or critical") }
            guard MemoryWarning.Level(rawValue: level) != nil else {
                throw CtlUsageError("unknown memory-warning level '\(level)'; expected low, medium or critical")
            }
            arguments["level"] = .string(level)
        } else if let level {
            throw CtlUsageError("'\(event)' takes no level (got '\(level)')")
        }
        return (event, arguments)
    }

    func execute(output: CtlOutput) async throws {
        let (event, arguments) = try simulateArguments()
        _ = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(LifecycledProtocol.Method.simulate, [.string(event), UserInfoBusCodec.encode(arguments)])
        }
        output.out("simulated \(event)\(level.map { " \($0)" } ?? "")\(app.map { " for \($0)" } ?? "")")
    }
}
