import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import ArgumentParser
import Foundation
import InProcessHost
import Logging
import SystemdBus

/// `lifecycle-example`: the notes app, run through a day of lifecycle events.
@main
struct LifecycleExample: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lifecycle-example",
        abstract: "Runs the example notes app and prints every delegate callback and notification.")

    enum HostKind: String, ExpressibleByArgument, CaseIterable {
        case virtual
        case sandbox
        case systemd
    }

    @Option(
        help: """
            Where lifecycle events come from: 'virtual' plays a scripted day on a virtual clock;         'sandbox' plays it on real D-Bus signals from python-dbusmock on private buses;         'systemd' runs on the real host (the buses the environment names) until SIGTERM.
            """)
    var host: HostKind = .virtual

    @Flag(help: "Print one JSON object per line: {\"kind\", \"name\", \"state\", \"userInfo\"}.")
    var traceJSON = false

    @MainActor
    func run() async throws {
        JournalLogHandler.bootstrap(
            identifier: "lifecycle-example", logLevel: .warning, metadata: ["app_id": "org.example.Notes"],
            environment: ProcessInfo.processInfo.environment)
        switch host {
        case .virtual:
            await runVirtualDay()
        case .sandbox:
            let start = ContinuousClock.now
            let printer = TimelinePrinter(format: traceJSON ? .json : .text, clock: { ContinuousClock.now - start })
            try await SandboxDay(printer: printer).run()
        case .systemd:
            await runOnSystemd()
        }
    }

    /// Runs the notes app on the real host until SIGTERM (or SIGINT), printing the timeline.
    @MainActor
    func runOnSystemd() async {
        let start = ContinuousClock.now
        let printer = TimelinePrinter(format: traceJSON ? .json : .text, clock: { ContinuousClock.now - start })
        let host = SystemdHost(configuration: .init(inhibitorWho: "lifecycle-example"))
        let app = Application(
            delegate: NotesAppDelegate(), host: host,
            configuration: .init(applicationIdentifier: "org.example.Notes", isStateRestorationEnabled: false))
        let recorder = LifecycleRecorder(application: app)
        recorder.onEntry = { printer.print($0) }
        printer.note("waiting for host events; stop with SIGTERM or Ctrl-C")
        await app.run(launchOptions: .fromServiceManager())
        for (source, status) in host.sourceStatus.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            printer.note("source \(source): \(status)")
        }
    }

    @MainActor
    func runVirtualDay() async {
        let host = VirtualHost()
        let printer = TimelinePrinter(format: traceJSON ? .json : .text, clock: { host.clock.now })
        let app = Application(
            delegate: NotesAppDelegate(), host: host,
            configuration: .init(applicationIdentifier: "org.example.Notes", isStateRestorationEnabled: false))
        let recorder = LifecycleRecorder(application: app)
        recorder.onEntry = { printer.print($0) }
        host.noteHandler = { printer.note($0) }

        printer.note("08:00 the user opens the app with notes://today")
        var options = LaunchOptions()
        options.url = URL(string: "notes://today")
        options.sourceApplication = "org.gnome.Nautilus"
        app.launch(options: options)
        for _ in 0..<16 { await Task.yield() }
        await host.play(VirtualHost.scriptedDay)
        printer.summary("\(recorder.entries.count) events; final state: \(app.applicationState)")
    }
}
