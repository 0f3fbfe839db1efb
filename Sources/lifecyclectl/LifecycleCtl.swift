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
        await runMain()
    }
}
