import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
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

    /// The events lifecycled's `Simulate` accepts; ArgumentParser checks the argument against
    /// them and lists them in `--help`.
    enum Event: String, CaseIterable, ExpressibleByArgument {
        case sleep, wake, lock, unlock
        case memoryWarning = "memory-warning"
        case timeChange = "time-change"
        case terminate
    }

    /// The levels of `memory-warning`.
    enum Level: String, CaseIterable, ExpressibleByArgument {
        case low, medium, critical
    }

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The event.", valueName: "event"))
    var event: Event

    @Argument(help: ArgumentHelp("For memory-warning: the level.", valueName: "level"))
    var level: Level?

    @Option(help: ArgumentHelp("With terminate only: end this app (default: every app).", valueName: "id"))
    var app: String?

    func run() async throws { try await runOnStandardStreams() }

    /// The `Simulate` arguments, checked.
    ///
    /// - Throws: `ValidationError` for a level the event does not take or lacks, or a bad app id.
    func simulateArguments() throws -> (event: String, arguments: UserInfo) {
        var arguments = UserInfo()
        if let app {
            // Host facts concern the whole session; only termination targets one app.
            guard event == .terminate else {
                throw ValidationError("--app only applies to terminate, not '\(event.rawValue)'")
            }
            arguments["app"] = .string(try validatedAppID(app))
        }
        if event == .memoryWarning {
            guard let level else { throw ValidationError("memory-warning needs a level: low, medium or critical") }
            arguments["level"] = .string(level.rawValue)
        } else if let level {
            throw ValidationError("'\(event.rawValue)' takes no level (got '\(level.rawValue)')")
        }
        return (event.rawValue, arguments)
    }

    func execute(output: CtlOutput) async throws {
        let (event, arguments) = try simulateArguments()
        _ = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(
                LifecycledProtocol.Method.simulate.name, [.string(event), UserInfoBusCodec.encode(arguments)])
        }
        output.out("simulated \(event)\(level.map { " \($0.rawValue)" } ?? "")\(app.map { " for \($0)" } ?? "")")
    }
}
