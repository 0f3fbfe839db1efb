import AppLifecycle
import ArgumentParser
import Dispatch
import Foundation
import LifecycledClient
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// `lifecyclectl monitor`: a live timeline of every app's notifications and state changes, like
/// `journalctl -f`, until SIGINT or SIGTERM.
///
/// One line per `Notification`, `StateChanged` or `WindowsChanged` signal: local time, app id,
/// notification name (or `previous → state`, or the app's window state and windows) and userInfo. Coloured when standard output is a terminal, plain
/// otherwise; `--json` prints one object per line instead. A daemon restart shows as two lines
/// and the monitor keeps following the new daemon.
struct MonitorCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor", abstract: "Follow every app's lifecycle notifications and state changes live.")

    @OptionGroup var daemon: DaemonOptions

    @Option(help: ArgumentHelp("Only this app.", valueName: "id"))
    var app: String?

    @Flag(
        help:
            "One JSON object per line: {time, kind, app, name, userInfo}, {time, kind, app, previous, state} or {time, kind: windows, app, state, windows}."
    )
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
        /// For `kind` `windows`: the app's windows as the display server shows them.
        var windows: [String]?
        /// For `kind` `dropped`: how many events were dropped since the last such line.
        var count: Int?
    }

    /// How many events wait for the output at most; when the output stalls beyond that, the oldest
    /// are dropped and counted (events arrive on the bus loop's thread, which must not wait).
    @Option(help: .hidden) var buffer = 4096

    private enum Input: Sendable {
        case event(LifecycleSubscriber.Event)
        case stop
    }

    func execute(output: CtlOutput) async throws {
        let filter = try app.map(validatedAppID)
        try await DaemonClient.with(daemon.busAddress) { client in
            _ = try await client.requireDaemon()
            let subscriber = try await LifecycleSubscriber(
                connection: client.connection, appID: filter, logger: Logger(label: "lifecyclectl"))
            defer { subscriber.close() }
            let (inputs, continuation) = AsyncStream<Input>.makeStream(
                bufferingPolicy: .bufferingNewest(max(1, buffer)))
            // The stream drops the oldest event when full; each drop is counted and reported.
            let dropped = Atomic<Int>(0)
            let registration = subscriber.addHandler { event in
                if case .dropped = continuation.yield(.event(event)) { dropped.add(1, ordering: .relaxed) }
            }
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
            var reported = 0
            /// Says how many events were dropped since the last report, on standard error (and as a
            /// JSON line with --json), before the next line printed.
            func reportDrops() {
                let total = dropped.load(ordering: .relaxed)
                guard total > reported else { return }
                let count = total - reported
                reported = total
                output.err("lifecyclectl monitor: \(count) event(s) dropped: the output did not keep up")
                if json {
                    var line = Line(time: Date().formatted(.iso8601), kind: "dropped")
                    line.count = count
                    output.out(jsonLine(line))
                }
            }
            for await input in inputs {
                reportDrops()
                guard case .event(let event) = input else { break }
                output.out(format(event, colour: output.isTerminal && !json))
            }
            reportDrops()
        }
    }

    /// The line for one event.
    ///
    /// - Parameters:
    ///   - colour: Whether to use ANSI colours.
    func format(_ event: LifecycleSubscriber.Event, colour: Bool) -> String {
        let now = Date()
        if json {
            var line = Line(time: now.formatted(.iso8601), kind: "")
            switch event {
            case .notification(let app, let name, let userInfo):
                line.kind = "notification"
                line.app = app
                line.name = name
                line.userInfo = userInfo
            case .stateChanged(let app, let previous, let state):
                line.kind = "state"
                line.app = app
                line.previous = previous
                line.state = state
            case .windowsChanged(let app, let windowState, let windows):
                line.kind = "windows"
                line.app = app
                line.state = windowState
                line.windows = windows
            case .daemonVanished:
                line.kind = "daemon-vanished"
            case .daemonAppeared(let owner):
                line.kind = "daemon-appeared"
                line.owner = owner
            case .resynced(let apps):
                line.kind = "resync"
                line.apps = apps
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
        case .windowsChanged(let app, let windowState, let windows):
            let list = windows.isEmpty ? "" : "  " + windows.joined(separator: ", ")
            return "\(time)  \(paint(app, "36"))  \(paint("windows \(windowState)", "35"))\(list)"
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
