import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl status`: lifecycled's host state and a summary of its apps.
///
/// Reads the daemon's properties (`HostState`, `Apps`, `SimulationEnabled`, `Version`) in one
/// `GetAll` call, its apps (`DescribeApps`) and its push and local-notification counters
/// (`GetCounters`). Exit status 1 when lifecycled is not running.
struct StatusCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show lifecycled's host state and a summary of its apps.")

    @OptionGroup var daemon: DaemonOptions

    @Flag(help: "Print one JSON object.")
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    /// The status as JSON.
    struct Report: Encodable {
        var daemon: String
        var version: UInt32?
        var host: UserInfo
        var simulationEnabled: Bool?
        var apps: [LifecycledApp]
        /// The apps frozen now.
        var frozen: [String]
        /// The apps never frozen in the background, and why (a background mode, the user's exemption).
        var exempt: [String: String]
        /// What lifecycled counted of pushes and local notifications (`push-received`, …).
        var counters: [String: Int]
    }

    func execute(output: CtlOutput) async throws {
        let report = try await DaemonClient.with(daemon.busAddress) { client in
            let owner = try await client.requireDaemon()
            let properties = try await client.properties()
            let host =
                try properties[LifecycledProtocol.Property.hostState.name].map(UserInfoBusCodec.decodeUserInfo)
                ?? UserInfo()
            let described = try await client.describeApps()
            let frozen = described.filter(\.frozen).map(\.id)
            var exempt: [String: String] = [:]
            for app in described { exempt[app.id] = app.exempt }
            let counters = try await client.counters()
            return Report(
                daemon: owner, version: properties[LifecycledProtocol.Property.version.name]?.uint32Value, host: host,
                simulationEnabled: properties[LifecycledProtocol.Property.simulationEnabled.name]?.boolValue,
                apps: LifecycledApp.list(from: properties[LifecycledProtocol.Property.apps.name]), frozen: frozen,
                exempt: exempt, counters: counters)
        }
        if json {
            output.out(jsonLine(report))
            return
        }
        func fact(_ key: String) -> String {
            switch report.host[key]?.boolValue {
            case true?: "yes"
            case false?: "no"
            case nil: "unknown"
            }
        }
        output.out("lifecycled: running as \(report.daemon), protocol \(report.version.map(String.init) ?? "unknown")")
        output.out(
            "host: sleeping \(fact("sleeping")), locked \(fact("locked")), session active \(fact("session-active"))")
        let running = report.apps.filter { $0.pid != 0 }.count
        var byState: [String: Int] = [:]
        for app in report.apps { byState[app.state, default: 0] += 1 }
        let states = byState.keys.sorted().map { "\(byState[$0]!) \($0)" }.joined(separator: ", ")
        output.out("apps: \(report.apps.count) known, \(running) running\(states.isEmpty ? "" : " (\(states))")")
        output.out("frozen: \(report.frozen.isEmpty ? "none" : report.frozen.joined(separator: ", "))")
        output.out(
            "never frozen: "
                + (report.exempt.isEmpty
                    ? "none (lifecyclectl exempt APP keeps an app running in the background)"
                    : report.exempt.keys.sorted().map { "\($0) (\(report.exempt[$0]!))" }.joined(separator: ", ")))
        if let reclaim = report.host["memory-reclaim"]?.stringValue {
            let bytes = report.host["memory-reclaimed"]?.intValue ?? 0
            output.out("memory reclaim from frozen apps: \(reclaim), \(bytes) bytes reclaimed since start")
        }
        if !report.counters.isEmpty {
            func count(_ name: String) -> Int { report.counters[name] ?? 0 }
            output.out(
                "pushes: \(count("push-received")) received, \(count("push-delivered")) delivered, "
                    + "\(count("push-queued")) queued, \(count("push-failed-deliveries")) failed deliveries, "
                    + "\(count("push-expired")) expired, \(count("push-dropped")) dropped; "
                    + "\(count("push-registrations")) registrations")
            output.out(
                "local notifications: \(count("notifications-scheduled")) scheduled, "
                    + "\(count("notifications-fired")) fired, \(count("notifications-shown")) shown as banners, "
                    + "\(count("notifications-delivered-to-app")) handed to the active app")
        }
        output.out("simulation: \(report.simulationEnabled == true ? "enabled" : "disabled")")
    }
}

/// One JSON object on one line, keys sorted.
///
/// - Parameters:
///   - value: The value to encode.
func jsonLine(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "{}" }
    return String(decoding: data, as: UTF8.self)
}
