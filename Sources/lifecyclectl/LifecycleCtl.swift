import ArgumentParser
import CommandLineSupport
import Foundation

/// The `lifecyclectl` command: the command-line client of `lifecycled`.
///
/// Each verb is its own `ParsableCommand` type in its own file, listed in
/// ``configuration``'s `subcommands`; adding `status`, `monitor`, `open`, `post`,
/// `simulate` or `apps` means adding a type and one entry there. Options shared by the
/// verbs (such as `--json`) belong in an `OptionGroup` the subcommands include.
@main
struct LifecycleCtl: AsyncParsableCommand, UsageErrorExit {
    /// The command's name, help and verbs.
    static let configuration = CommandConfiguration(
        commandName: "lifecyclectl",
        abstract: "Inspect and drive the app lifecycle hosted by lifecycled.",
        version: PackageVersion.current,
        subcommands: [
            StatusCommand.self, AppsCommand.self, MonitorCommand.self, OpenCommand.self, PostCommand.self,
            SimulateCommand.self, NotifyCommand.self, NotificationsCommand.self, CancelNotificationCommand.self,
            ActivateCommand.self, InstallDesktopFilesCommand.self, PushCommand.self, FleetCommand.self,
            Graph.self, ExemptCommand.self, UnexemptCommand.self, FetchCommand.self, BackgroundRefreshCommand.self,
        ])

    /// Parses the command line and runs; usage errors exit 2 (``UsageErrorExit``).
    static func main() async {
        await runMain(arguments: movingLeadingAddress(Array(CommandLine.arguments.dropFirst())))
    }

    /// `--address` is each verb's option; given before the verb (`lifecyclectl --address A status`,
    /// as with `busctl`), it is moved after it instead of being refused as an unknown option.
    ///
    /// - Parameters:
    ///   - arguments: The command line without the program's name.
    static func movingLeadingAddress(_ arguments: [String]) -> [String] {
        var rest = arguments[...]
        var moved: [String] = []
        while let first = rest.first {
            if first == "--address", rest.count >= 2 {
                moved += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if first.hasPrefix("--address=") {
                moved.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !moved.isEmpty, let verb = rest.first, !verb.hasPrefix("-") else { return arguments }
        return [verb] + moved + rest.dropFirst()
    }
}
