import ArgumentParser
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl cancel-notification APP ID`: cancels a local notification (`CancelNotification`);
/// an identifier the app never had is a D-Bus error, so exit status 1.
struct CancelNotificationCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel-notification", abstract: "Cancel an app's scheduled local notification.",
        discussion: """
            The notification leaves the schedule, its banner is withdrawn and a copy kept for the app's next \
            activation is dropped. Exits 1 when the app has no notification of that identifier \
            (org.applifecycle.Lifecycled1.Error.UnknownNotification), and when lifecycled could not save the \
            change (NotSaved: it says what to do, such as freeing space).
            """)

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
            try await client.call(LifecycledProtocol.Method.cancelNotification.name, [.string(app), .string(id ?? "")])
        }
        output.out(all ? "cancelled every notification of \(app)" : "cancelled \(id ?? "") of \(app)")
    }
}
