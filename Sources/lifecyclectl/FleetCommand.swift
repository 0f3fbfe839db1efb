import AppLifecycle
import ArgumentParser
import BrokerLink
import FleetProtocol
import Foundation
import Logging
import Synchronization
import SystemdBus

/// `lifecyclectl fleet devices|apps|monitor --broker URL`: the fleet as the broker holds it: each
/// lifecycled's retained presence and app states, and the lifecycle notifications they publish.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Show the devices of a fleet and their apps, from the MQTT broker.",
        subcommands: [FleetDevicesCommand.self, FleetAppsCommand.self, FleetMonitorCommand.self])
}

/// The broker options every `fleet` verb takes.
struct FleetBrokerOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The broker: mqtt://host[:port] or mqtts://host[:port].", valueName: "url"))
    var broker: String

    @Option(help: "The MQTT user (an operator account that may read applifecycle/v1/#).")
    var username: String?

    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("A file whose first line is the password.", valueName: "file"))
    var passwordFile: String?

    @Option(name: .customLong("ca-file"), help: ArgumentHelp("The CA certificate for mqtts://.", valueName: "file"))
    var caFile: String?

    /// A clean, anonymous-looking session: an operator's view needs no persistent state.
    func configuration() throws -> BrokerConfiguration {
        var password = ProcessInfo.processInfo.environment["LIFECYCLECTL_BROKER_PASSWORD"]
        if let passwordFile {
            do {
                password = try BrokerConfiguration.password(fromFile: passwordFile)
            } catch {
                throw ValidationError("--password-file: \(error.message)")
            }
        }
        do {
            var configuration = try BrokerConfiguration(
                url: broker, clientID: "lifecyclectl-\(UUID().uuidString.prefix(12))", username: username,
                password: password)
            configuration.cleanSession = true
            configuration.caFile = caFile
            return configuration
        } catch {
            throw ValidationError("--broker: \(error)")
        }
    }

    /// Connects, subscribes to `filters`, and hands each message to `body` (on the loop thread)
    /// until `until` returns; then disconnects.
    func withMessages(
        _ filters: [String], until: @escaping @Sendable (FleetWatch) async throws -> Void,
        _ body: @escaping @Sendable (BrokerMessage) -> Void
    ) async throws {
        let loop = try EventLoop(name: "lifecyclectl-fleet")
        defer { loop.shutdown() }
        let connection = BrokerConnection(
            configuration: try configuration(), loop: loop, logger: Logger(label: "lifecyclectl"))
        let watch = FleetWatch()
        connection.setEventHandler { event in watch.record(event) }
        connection.setMessageHandler(acknowledgingImmediately: { message in
            watch.touch()
            body(message)
        })
        for filter in filters { try connection.subscribe(filter, qos: 1) }
        try await connection.start()
        defer { connection.stop() }
        try await watch.waitForConnection(to: broker, login: username != nil || passwordFile != nil)
        try await until(watch)
    }
}

/// What a fleet command waits on: the connection, and when the last message came.
final class FleetWatch: Sendable {
    /// Why the connection failed before its CONNACK: the broker's refusal (a CONNACK return code)
    /// or the connection's loss.
    private enum Failure {
        case refused(BrokerError)
        case lost(BrokerError)
    }

    private let state = Mutex<(connected: Bool, failure: Failure?, last: ContinuousClock.Instant)>(
        (false, nil, .now))

    func record(_ event: BrokerConnectionEvent) {
        state.withLock {
            switch event {
            case .connected: $0.connected = true
            case .connectionRefused(let error): $0.failure = .refused(error)
            case .disconnected(.lost(let error)) where !$0.connected: $0.failure = .lost(error)
            case .disconnected: break
            }
            $0.last = .now
        }
    }

    func touch() { state.withLock { $0.last = .now } }

    /// Waits (at most 10 s) for the CONNACK; a failure says what to check.
    ///
    /// - Parameters:
    ///   - broker: The broker's URL, as given.
    ///   - login: Whether a user name or password was given.
    func waitForConnection(to broker: String, login: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let (connected, failure, _) = state.withLock { $0 }
            if connected { return }
            switch failure {
            case .refused(let error), .lost(let error):
                var message = error.explanation(broker: broker, userOption: "--username and --password-file")
                if !login, error.code == .connectionRefused { message += "; this broker wants a user" }
                if broker.hasPrefix("mqtts:"), error.code != .connectionRefused {
                    message += "; for mqtts:// with a private CA, give its certificate with --ca-file"
                }
                throw CtlFailure(message: message)
            case nil:
                break
            }
            guard ContinuousClock.now < deadline else {
                throw CtlFailure(
                    message: """
                        the broker at \(broker) did not answer within 10 s: check --broker, a firewall between here \
                        and there, and that the URL's scheme matches the port (mqtts:// for TLS)
                        """)
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until no message came for `quiet` (the retained ones have arrived), at most `limit`.
    func waitForQuiet(_ quiet: Duration = .milliseconds(400), limit: Duration = .seconds(5)) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let last = state.withLock { $0.last }
            if ContinuousClock.now - last >= quiet { return }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// `lifecyclectl fleet devices`: each device and whether it is online (its retained presence).
struct FleetDevicesCommand: CtlCommand {
    static let displayName = "fleet devices"
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the devices and whether each is online.")

    @OptionGroup var options: FleetBrokerOptions

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let presence = Mutex<[String: String]>([:])
        try await options.withMessages([FleetTopics.allPresence], until: { try await $0.waitForQuiet() }) { message in
            guard let parsed = FleetTopics.parse(message.topic), parsed.kind == .presence else { return }
            presence.withLock { $0[parsed.device] = message.text }
        }
        for (device, state) in presence.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            output.out("\(device)\t\(state)")
        }
    }
}

/// `lifecyclectl fleet apps`: each device's apps and their last reported state.
struct FleetAppsCommand: CtlCommand {
    static let displayName = "fleet apps"
    static let configuration = CommandConfiguration(
        commandName: "apps", abstract: "List every device's apps and their states.")

    @OptionGroup var options: FleetBrokerOptions

    @Option(help: "Only this device.")
    var device: String?

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let states = Mutex<[String: String]>([:])
        try await options.withMessages([FleetTopics.allAppStates], until: { try await $0.waitForQuiet() }) { message in
            guard let parsed = FleetTopics.parse(message.topic), parsed.kind == .appState, let app = parsed.key,
                !message.payload.isEmpty
            else { return }
            let state = (try? UserInfo(json: message.text))?["state"]?.stringValue ?? "?"
            states.withLock { $0["\(parsed.device)\t\(app)"] = state }
        }
        for (key, state) in states.withLock({ $0 }).sorted(by: { $0.key < $1.key })
        where device.map({ key.hasPrefix($0 + "\t") }) ?? true {
            output.out("\(key)\t\(state)")
        }
    }
}

/// `lifecyclectl fleet monitor`: presence, app states and lifecycle notifications as they come.
struct FleetMonitorCommand: CtlCommand {
    static let displayName = "fleet monitor"
    static let configuration = CommandConfiguration(
        commandName: "monitor", abstract: "Follow the fleet: presence, app states and lifecycle notifications.")

    @OptionGroup var options: FleetBrokerOptions

    @Option(help: "Stop after this many lines.")
    var count: Int?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var timeout: Double?

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        let printed = Atomic<Int>(0)
        let limit = count
        try await options.withMessages(
            [FleetTopics.allPresence, FleetTopics.allAppStates, FleetTopics.allAppNotifications],
            until: { _ in
                output.ready()
                let deadline = timeout.map { ContinuousClock.now + .milliseconds(Int($0 * 1000)) }
                while !Task.isCancelled {
                    if let limit, printed.load(ordering: .relaxed) >= limit { return }
                    if let deadline, ContinuousClock.now >= deadline { return }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
        ) { message in
            guard let parsed = FleetTopics.parse(message.topic), !message.payload.isEmpty else { return }
            if let limit, printed.load(ordering: .relaxed) >= limit { return }
            let info = try? UserInfo(json: message.text)
            let line: String
            switch parsed.kind {
            case .presence: line = "\(parsed.device) presence \(message.text)"
            case .appState: line = "\(parsed.device) \(parsed.key ?? "?") state \(info?["state"]?.stringValue ?? "?")"
            case .appNotifications:
                line = "\(parsed.device) \(parsed.key ?? "?") \(info?["name"]?.stringValue ?? "?")"
            default: return
            }
            printed.add(1, ordering: .relaxed)
            output.out(line)
        }
    }
}
