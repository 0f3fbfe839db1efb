import ArgumentParser
import LifecycledClient
import SystemdBus

/// `lifecyclectl cancel-notification APP ID`: cancels a scheduled local notification (`CancelNotification`).
struct CancelNotificationCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-notification", abstract: "Cancel an app's scheduled local notification.")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "The app id.")
    var app: String

    @Argument(help: "The notification's identifier, or --all.")
    var id: String?

    @Flag(help: "Cancel every notification of the app.")
    var all = false

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let app = try validatedAppID(self.app)
        guard (id == nil) == all, id?.isEmpty != true else {
            throw ValidationError("give a notification identifier or --all, not both")
        }
        _ = try await DaemonClient.with(daemon.busAddress) { client in
            try await client.call(LifecycledProtocol.Method.cancelNotification, [.string(app), .string(id ?? "")])
        }
        output.out(all ? "cancelled every notification of \(app)" : "cancelled \(id ?? "") of \(app)")
    }
}
