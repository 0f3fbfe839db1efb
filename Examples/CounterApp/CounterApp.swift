import AppLifecycle
import AppLifecycleMain
import AppLifecycleSystemd
import ArgumentParser
import Foundation
import LifecycledClient
import LifecycledProtocol
import Logging
import SystemdBus

/// `counter-app`: a tiny app that counts its foreground entries, for lifecycled or on its own.
@main
struct CounterApp: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "counter-app",
        abstract: "Counts how often it comes to the foreground; saves the count when it leaves.")

    @Option(help: "Who drives the app: automatic (lifecycled when it runs, else systemd), systemd or lifecycled.")
    var host: HostSelection = .automatic

    @Option(help: "The app id (default: $LIFECYCLE_APP_ID, else org.example.Counter).")
    var appID: String?

    @Option(help: "Where to keep the count (default: $STATE_DIRECTORY, else $XDG_STATE_HOME/counter-app).")
    var stateDirectory: String?

    @Option(help: "Ask for background fetches at most this often, in seconds (0: as often as allowed).")
    var fetchInterval: Double?

    @Option(help: "What a background fetch answers: newData, noData, failed, or overrun (never calls the handler).")
    var fetchResult = "newData"

    @Option(help: "Seconds a completion handler has (default 30, as on iOS).")
    var completionDeadline: Double = 30

    @MainActor
    func run() async throws {
        guard completionDeadline.isFinite, completionDeadline > 0 else {
            throw ValidationError("--completion-deadline must be a number of seconds above 0")
        }
        let result = BackgroundFetchResult(rawValue: fetchResult)
        guard result != nil || fetchResult == "overrun" else {
            throw ValidationError("--fetch-result must be newData, noData, failed or overrun, not '\(fetchResult)'")
        }
        let environment = ProcessInfo.processInfo.environment
        let id = appID ?? LifecycledHostStatus.environmentAppID(in: environment) ?? "org.example.Counter"
        guard LifecycledProtocol.isValidAppID(id) else {
            throw ValidationError("'\(id)' is not a valid app id (reverse-DNS, like org.example.Counter)")
        }
        // Under systemd its entries carry APP_ID=<id>, like lifecycled's lines about it.
        JournalLogHandler.bootstrap(
            identifier: "counter-app", logLevel: .notice, metadata: ["app_id": "\(id)"], environment: environment)
        let store = CounterStore(directory: CounterStore.directory(option: stateDirectory, environment: environment))
        print("counter-app: \(id) keeps its count in \(store.path)")
        await Application.main(
            delegate: CounterAppDelegate(store: store, fetchInterval: fetchInterval, fetchResult: result),
            hostSelection: host, appID: id,
            configuration: Application.Configuration(
                applicationIdentifier: id, completionHandlerDeadline: .milliseconds(Int64(completionDeadline * 1000)),
                isStateRestorationEnabled: false))
    }
}

extension HostSelection: ExpressibleByArgument {}
