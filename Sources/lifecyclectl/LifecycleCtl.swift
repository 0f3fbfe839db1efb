import ArgumentParser
import Foundation

/// The `lifecyclectl` command: the command-line client of `lifecycled`.
///
/// Each verb is its own `ParsableCommand` type in its own file, listed in
/// ``configuration``'s `subcommands`; adding `status`, `monitor`, `open`, `post`,
/// `simulate` or `apps` means adding a type and one entry there. Options shared by the
/// verbs (such as `--json`) belong in an `OptionGroup` the subcommands include.
@main
struct LifecycleCtl: AsyncParsableCommand {
    /// The command's name, help and verbs.
    static let configuration = CommandConfiguration(
        commandName: "lifecyclectl",
        abstract: "Inspect and drive the app lifecycle hosted by lifecycled.",
        subcommands: [
            StatusCommand.self, AppsCommand.self, MonitorCommand.self, OpenCommand.self, PostCommand.self,
            SimulateCommand.self, Graph.self,
        ])

    /// The exit status for a usage error (unknown option, bad value): 2, as GNU tools and
    /// shells use, instead of ArgumentParser's default `EX_USAGE` (64).
    static let usageExitStatus: Int32 = 2

    /// The exit status a failed parse or run ends the process with.
    ///
    /// - Parameters:
    ///   - error: What parsing or running threw.
    static func exitStatus(for error: any Error) -> Int32 {
        let code = exitCode(for: error)
        return code == .validationFailure ? usageExitStatus : code.rawValue
    }

    /// Parses the command line, runs the verb, and exits with ``exitStatus(for:)`` on error.
    ///
    /// ArgumentParser's own message (`Error: Unknown option '--x'` and the usage) goes to
    /// standard error for usage errors and to standard output for `--help`, as usual.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitStatus(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if status == 0 {
                    print(message)
                } else {
                    FileHandle.standardError.write(Data((message + "\n").utf8))
                }
            }
            Foundation.exit(status)
        }
    }
}
