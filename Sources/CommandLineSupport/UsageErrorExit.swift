import ArgumentParser
import Glibc

/// A command whose usage errors exit with status 2 (as GNU tools and shells expect) instead of
/// ArgumentParser's `EX_USAGE` (64); everything else keeps ArgumentParser's status.
///
/// The project's executables (`lifecycled`, `lifecyclectl`) call ``runMain()`` from their `main`.
public protocol UsageErrorExit: ParsableCommand {}

extension UsageErrorExit {
    /// The exit status for a usage error.
    public static var usageExitStatus: Int32 { ExitStatus.usage }

    /// The exit status a failed parse or run ends the process with (``ExitStatus/of(_:command:)``).
    ///
    /// - Parameters:
    ///   - error: What parsing or running threw.
    public static func exitStatus(for error: any Error) -> Int32 {
        ExitStatus.of(error, command: Self.self)
    }

    /// Parses the command line, runs the (possibly async) command, and on error prints
    /// ArgumentParser's message (standard output for `--help`, standard error otherwise) and exits
    /// with ``exitStatus(for:)``.
    public static func runMain() async {
        await runMain(arguments: nil)
    }

    /// ``runMain()`` with other arguments than the process's (a configuration file's settings
    /// ahead of them, ``ConfigurationFileArguments``), and a usage error's message passed through
    /// `explain` (which says where in the file a bad setting is).
    ///
    /// - Parameters:
    ///   - arguments: The arguments after the program name; `nil`: the process's.
    ///   - explain: What a usage error's message becomes.
    public static func runMain(arguments: [String]?, explain: (String) -> String = { $0 }) async {
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let status = exitStatus(for: error)
            var message = fullMessage(for: error)
            if status == ExitStatus.usage { message = explain(message) }
            if !message.isEmpty {
                if status == 0 {
                    print(message)
                } else {
                    StandardError.write(line: message)
                }
            }
            Glibc.exit(status)
        }
    }
}
