import ArgumentParser
import LifecycledProtocol

/// `lifecyclectl background-refresh APP on|off`: the user's background-refresh switch for one app
/// (Settings ▸ General ▸ Background App Refresh on iOS). Off, lifecycled runs none of the app's
/// background fetches (they wait, `background-refresh-denied`) until it is on again; the choice is
/// kept in lifecycled's state directory across restarts.
struct BackgroundRefreshCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "background-refresh",
        abstract: "Turn an app's background refresh (its background fetches) on or off.")

    /// The switch's two positions.
    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case on, off
    }

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The app id.", valueName: "app-id"))
    var app: String

    @Argument(help: ArgumentHelp("on or off.", valueName: "on|off"))
    var setting: Switch

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let id = try validatedAppID(app)
        try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            try await client.call(
                LifecycledProtocol.Method.setBackgroundRefresh.name, [.string(id), .bool(setting == .on)])
        }
        output.out(
            setting == .on
                ? "\(id): background refresh on"
                : "\(id): background refresh off: its background fetches wait until it is on")
    }
}
