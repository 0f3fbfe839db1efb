import AppLifecycle
import ArgumentParser
import Dispatch
import Foundation
import LifecycledClient
import SystemdBus

#if canImport(Glibc)
import Glibc
#endif

/// `lifecyclectl monitor`: a live timeline of every app's notifications and state changes, like
/// `journalctl -f`, until SIGINT or SIGTERM.
///
/// One line per `Notification` or `StateChanged` signal: local time, app id, notification name
/// (or `previous → state`) and userInfo. Coloured when standard output is a terminal, plain
/// otherwise; `--json` prints one object per line instead. A daemon restart shows as two lines
/// and the monitor keeps following the new daemon.
struct MonitorCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor", abstract: "Follow every app's lifecycle notifications and state changes live.")

    @OptionGroup var daemon: DaemonOptions

    @Option(help: ArgumentHelp("Only this app.", valueName: "id"))
    var app: String?

    @Flag(help: "One JSON object per line: {time, kind, app, name, userInfo} or {time, kind, app, previous, state}.")
    var json = false

    func run() async throws { try await runOnStandardStreams() }

    /// One line of `--json` output.
    struct Line: Encodable {
        var time: String
        var kind: String
        var app: String?
        var name: String?
        var userInfo: UserInfo?
        var previous: String?
        var state: String?
        var owner: String?
        var apps: [LifecycledApp]?
    }

    private enum Input: Sendable {
        case event(LifecycleSubscriber.Event)
        case stop
    }

    func execute(output: CtlOutput) async throws {
        let filter = try app.map(validatedAppID)
        try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            let subscriber = try await LifecycleSubscriber(connection: client.connection, appID: filter)
            defer { subscriber.close() }
            let (inputs, continuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .bufferingNewest(4096))
            let registration = subscriber.addHandler { continuation.yield(.event($0)) }
            defer { registration.cancel() }
            var signalSources: [any DispatchSourceSignal] = []
            if output === CtlOutput.standard {
                for number in [SIGINT, SIGTERM] {
                    signal(number, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: number)
                    source.setEventHandler { continuation.yield(.stop) }
                    source.resume()
                    signalSources.append(source)
                }
            }
            defer { signalSources.forEach { $0.cancel() } }
            output.ready()
            for await input in inputs {
                guard case .event(let event) = input else { break }
                output.out(format(event, colour: output.isTerminal && !json))
            }
        }
    }

    /// The line for one event.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - colour: Whether to use ANSI colours.
    func format(_ event: LifecycleSubscriber.Event, colour: Bool) -> String {
        let now = Date()
        if json {
            var line = Line(time: now.formatted(.iso8601), kind: "")
            switch event {
            case .notification(let app, let name, let userInfo):
                line.kind = "notification"; line.app = app; line.name = name; line.userInfo = userInfo
            case .stateChanged(let app, let previous, let state):
                line.kind = "state"; line.app = app; line.previous = previous; line.state = state
            case .daemonVanished:
                line.kind = "daemon-vanished"
            case .daemonAppeared(let owner):
                line.kind = "daemon-appeared"; line.owner = owner
            case .resynced(let apps):
                line.kind = "resync"; line.apps = apps
            }
            return jsonLine(line)
        }
        func paint(_ text: String, _ code: String) -> String { colour ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
        let time = paint(Self.clock(now), "2")
        switch event {
        case .notification(let app, let name, let userInfo):
            let info = userInfo.isEmpty ? "" : "  " + userInfo.json
            return "\(time)  \(paint(app, "36"))  \(paint(name, "1"))\(info)"
        case .stateChanged(let app, let previous, let state):
            return "\(time)  \(paint(app, "36"))  \(paint("\(previous) → \(state)", "33"))"
        case .daemonVanished:
            return "\(time)  \(paint("-- lifecycled went away; waiting for it to return", "31"))"
        case .daemonAppeared(let owner):
            return "\(time)  \(paint("-- lifecycled is back as \(owner)", "32"))"
        case .resynced(let apps):
            let states = apps.map { "\($0.id)=\($0.state)" }.joined(separator: " ")
            return "\(time)  \(paint("-- apps: \(states.isEmpty ? "none" : states)", "32"))"
        }
    }

    /// `HH:MM:SS.mmm` in local time.
    static func clock(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        let millis = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        return String(format: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, millis)
    }
}
