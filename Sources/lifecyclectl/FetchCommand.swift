import ArgumentParser
import LifecycledProtocol

/// `lifecyclectl fetch APP`: one background fetch of the app now, as Xcode's "simulate background
/// fetch" (`PerformFetch`): lifecycled thaws the app, or launches it in the background, and calls
/// its `application(_:performFetchWithCompletionHandler:)`, whatever its schedule and the
/// device's conditions. Its manifest must declare the `fetch` background mode.
struct FetchCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch", abstract: "Run one background fetch of an app now (its manifest must declare fetch).")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The app id.", valueName: "app-id"))
    var app: String

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let id = try validatedAppID(app)
        try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            try await client.call(LifecycledProtocol.Method.performFetch.name, [.string(id)])
        }
        output.out("\(id): background fetch started (lifecyclectl apps shows the next one)")
    }
}
