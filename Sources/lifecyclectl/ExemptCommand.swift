import ArgumentParser
import LifecycledProtocol

/// `lifecyclectl exempt APP` (and `unexempt APP`): the user's
/// lifecycle exception. An exempt app still goes to the background with its windows but is never
/// frozen, like an app playing audio; lifecycled keeps the choice across restarts.
struct ExemptCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "exempt",
        abstract: "Keep an app running in the background: it is never frozen (until unexempt).")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The app id.", valueName: "app-id"))
    var app: String

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        try await setExempt(app: app, exempt: true, daemon: daemon, output: output)
    }
}

/// `lifecyclectl unexempt APP`: the app is frozen again when it is in the background.
struct UnexemptCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "unexempt", abstract: "Let an exempted app be frozen in the background again.")

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: ArgumentHelp("The app id.", valueName: "app-id"))
    var app: String

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        try await setExempt(app: app, exempt: false, daemon: daemon, output: output)
    }
}

/// `SetFreezeExempt`, then a line saying what it means.
private func setExempt(app: String, exempt: Bool, daemon: DaemonOptions, output: CtlOutput) async throws {
    let id = try validatedAppID(app)
    try await DaemonClient.with(daemon.busAddress) { client in
        _ = try await client.requireDaemon()
        try await client.call(LifecycledProtocol.Method.setFreezeExempt.name, [.string(id), .bool(exempt)])
    }
    output.out(
        exempt
            ? "\(id) is exempt: it goes to the background but is never frozen (lifecyclectl unexempt \(id) to undo)"
            : "\(id) is no longer exempt: it is frozen when it is suspended in the background")
}
