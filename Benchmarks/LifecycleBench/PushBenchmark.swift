import AppLifecycle
import ArgumentParser
import BrokerLink
import BrokerTestSupport
import Foundation
import Glibc
import HTTPClientSupport
import LifecycledClient
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import WebPush

/// `lifecycle-bench push`: Web Push end to end (an HTTP POST to lifecycle-push-gateway → mosquitto
/// → lifecycled → an in-process app's delegate), against raw MQTT QoS 1 on the same broker.
struct PushBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push latency and throughput through the gateway, the broker and lifecycled, against raw MQTT.",
        discussion: """
            One mosquitto, one lifecycle-push-gateway and one lifecycled (release build, its own private bus, \
            --no-host-sources, --config), and APPS in-process apps (LifecycledHost + Application) registered \
            for remote notifications. Latency: COUNT pushes one after another over one keep-alive HTTP/1.1 \
            connection; each is the delegate's receipt minus the instant before its POST (the body is \
            encrypted before that instant). Reference, in the same run: one BrokerConnection publishing QoS 1 \
            to a topic another subscribes to, on the same broker, publish to receipt. Throughput: PUSHES \
            pushes spread over the apps, sent over CONNECTIONS keep-alive connections at once, from the \
            first POST to the last delivery; lost = 201s not delivered. Faults: FAULT-PUSHES pushes the same way \
            (a push answered other than 201, or not at all, is sent again after 50 ms, as an app server does), \
            while lifecycled is killed with SIGKILL and started again (after a quarter are accepted), the \
            gateway is killed with SIGKILL and started again on its port (after half), and the broker is \
            restarted (SIGTERM: it saves its persistence; after three quarters); lost = 201s never delivered, \
            twice = deliveries beyond one per push, less the POSTs that got no answer and were sent again (the \
            app server sent those twice).
            """)

    @Option(help: "Pushes for the latency run (one after another).") var count = 300
    @Option(help: "In-process apps registered for pushes.") var apps = 10
    @Option(help: "Pushes for the throughput run.") var pushes = 1000
    @Option(help: "Concurrent keep-alive HTTP connections for the throughput run.") var connections = 4
    @Option(help: "Pushes for the fault run (SIGKILLs of lifecycled and the gateway, a broker restart); 0: none.")
    var faultPushes = 3000
    @Option(
        help: ArgumentHelp(
            "Where lifecycled keeps its state (default: its directory under /tmp); /dev/shm shows the chain without the disk's fsyncs.",
            valueName: "dir"))
    var stateBase: String?
    @Flag(help: "One JSON object per line.") var json = false

    @MainActor
    func run() async throws {
        BenchProcesses.installSignalCleanup()
        BenchProcesses.raiseFileLimit()
        let log = DeliveryLog()
        let chain = try await PushChain.start(
            devices: ["device-0"], extraUsers: ["bench": "pw-bench"], stateBase: stateBase)
        defer { chain.stop() }
        var hosted: [InProcessApp] = []
        defer { hosted.forEach { $0.stop() } }
        let device = chain.devices[0]
        for index in 0..<apps {
            hosted.append(
                InProcessApp(
                    id: "org.example.PushBench.App\(index)", busAddress: device.bus.address,
                    stateHome: device.directory.appending("xdg-\(index)"), log: log))
        }
        var targets: [PushTarget] = []
        for app in hosted { targets.append(try await app.registerForPushes()) }
        let port = chain.gateway.port
        let warmTargets = targets
        // Warm-up: one push to each app, retried until the gateway knows its token, and delivered.
        let warm = await PushChain.warmUp(targets: warmTargets, port: port, log: log)
        if let warm { throw ValidationError(warm) }

        let latencyCount = count
        let latency = await Self.measureLatency(targets: warmTargets, count: latencyCount, port: port, log: log)
        let reference = try await Self.measureReference(
            broker: chain.broker, count: count, payloadSize: latency.envelopeBytes, log: log)
        let throughputCount = pushes
        let connectionCount = connections
        let throughput = await PushChain.send(
            targets: (0..<throughputCount).map { warmTargets[$0 % warmTargets.count] }, keyPrefix: "tp",
            connections: connectionCount, port: port, log: log, retry: false)
        let faults =
            faultPushes > 0
            ? await Self.measureFaults(
                chain: chain, targets: warmTargets, count: faultPushes, connections: connectionCount, log: log)
            : nil

        let ratio50 = latency.p50 / reference.p50
        let ratio99 = latency.p99 / reference.p99
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "push", "apps": apps, "count": count, "keep_alive": true,
                    "state_base": stateBase ?? "/tmp",
                    "push_p50_ms": latency.p50, "push_p99_ms": latency.p99, "push_lost": latency.lost,
                    "push_non_201": latency.non201, "reference_p50_ms": reference.p50,
                    "reference_p99_ms": reference.p99,
                    "reference_lost": reference.lost, "reference_payload_bytes": latency.envelopeBytes,
                    "ratio_p50": ratio50, "ratio_p99": ratio99, "target_ratio_p50": 3,
                    "throughput_pushes": pushes, "throughput_connections": connections,
                    "throughput_per_second": throughput.rate, "throughput_seconds": throughput.seconds,
                    "throughput_201": throughput.accepted, "throughput_non_201": throughput.non201Total,
                    "throughput_lost": throughput.lost, "throughput_duplicates": throughput.duplicates,
                    "faults_pushes": faults?.batch.accepted ?? 0, "faults_lost": faults?.batch.lost ?? 0,
                    "faults_twice": faults?.twice ?? 0, "faults_resent_after_no_answer": faults?.resent ?? 0,
                    "faults_done": faults?.done ?? [], "faults_failed": faults?.failures ?? [],
                    "faults_per_second": faults?.batch.rate ?? 0,
                ]))
        } else {
            print(
                "Web Push through lifecycle-push-gateway, mosquitto and lifecycled to \(apps) in-process apps (release build)"
            )
            print(
                "  latency, \(count) pushes one after another over one keep-alive HTTP/1.1 connection (lifecycled's state in \(stateBase ?? "/tmp")):"
            )
            print(
                "    push:      p50 \(Measurement.format(latency.p50, 2)) ms   p99 \(Measurement.format(latency.p99, 2)) ms   lost \(latency.lost)   non-201 \(latency.non201)"
            )
            print(
                "    raw MQTT:  p50 \(Measurement.format(reference.p50, 2)) ms   p99 \(Measurement.format(reference.p99, 2)) ms   lost \(reference.lost)   (QoS 1, \(latency.envelopeBytes)-byte payload, same broker)"
            )
            print(
                "    ratio:     p50 \(Measurement.format(ratio50, 2))   p99 \(Measurement.format(ratio99, 2))   (target p50 ≤ 3)"
            )
            print(
                "  throughput, \(pushes) pushes over \(apps) apps on \(connections) keep-alive connections: \(Measurement.format(throughput.seconds, 3)) s, \(Measurement.format(throughput.rate, 0)) pushes/s"
            )
            print(
                "    201: \(throughput.accepted)   non-201: \(throughput.non201Description)   lost: \(throughput.lost)   duplicates: \(throughput.duplicates)"
            )
            if let faults {
                print(
                    "  faults, \(faultPushes) pushes on \(connections) connections (\(faults.done.joined(separator: ", "))): \(Measurement.format(faults.batch.seconds, 3)) s, \(Measurement.format(faults.batch.rate, 0)) pushes/s"
                )
                print(
                    "    201: \(faults.batch.accepted)   non-201 (sent again): \(faults.batch.non201Description)   lost: \(faults.batch.lost)   twice: \(faults.twice)   (\(faults.resent) POSTs sent again after no answer)"
                )
                for failure in faults.failures { print("    fault FAILED: \(failure)") }
            }
        }
        if latency.lost > 0 || throughput.lost > 0 { throw ExitCode(1) }
        if let faults, faults.batch.lost > 0 || faults.twice > 0 || !faults.failures.isEmpty { throw ExitCode(1) }
    }

    struct Latency: Sendable {
        var p50: Double
        var p99: Double
        var lost: Int
        var non201: Int
        var envelopeBytes: Int
    }

    /// Pushes one after another, each awaited at the delegate before the next is sent.
    static func measureLatency(targets: [PushTarget], count: Int, port: Int, log: DeliveryLog) async -> Latency {
        var latencies: [Double] = []
        var non201 = 0
        var lost = 0
        var bodyBytes = 0
        var index = 0
        await GatewayConnections.whileConnected(port: port) { connection in
            guard index < count else { return false }
            defer { index += 1 }
            let key = "lat-\(index)"
            guard let body = try? targets[index % targets.count].encrypted(key: key) else {
                lost += 1
                return true
            }
            bodyBytes = body.count
            let start = monotonicNanoseconds()
            let status = await GatewayConnections.post(
                connection, path: targets[index % targets.count].path, headers: PushTarget.headers, body: body)
            guard status == 201 else {
                non201 += 1
                return true
            }
            guard let arrival = await onOwnThread({ log.wait(for: key, timeout: 10) }).value() else {
                lost += 1
                return true
            }
            latencies.append(Double(arrival &- start) / 1e6)
            return true
        }
        // The envelope the gateway publishes: JSON around the base64 body (measured shape).
        let envelope = (bodyBytes + 2) / 3 * 4 + 200
        return Latency(
            p50: Measurement.percentile(latencies, 50), p99: Measurement.percentile(latencies, 99), lost: lost,
            non201: non201, envelopeBytes: envelope)
    }

    /// What the fault run came to.
    struct Faults: Sendable {
        var batch: PushChain.Batch
        /// Deliveries beyond one per accepted push, less ``resent``'s share.
        var twice: Int
        /// POSTs that got no answer or a 503 and were sent again: each may have reached the app too.
        var resent: Int
        var done: [String]
        var failures: [String]
    }

    /// Pushes sent while lifecycled is SIGKILLed and restarted, then the gateway, then the broker
    /// restarted; one fault at a time, in that order, on a thread of their own.
    static func measureFaults(
        chain: PushChain, targets: [PushTarget], count: Int, connections: Int, log: DeliveryLog
    ) async -> Faults {
        let plan: [Int: String] = [
            max(1, count / 4): "lifecycled", max(2, count / 2): "gateway", max(3, count * 3 / 4): "broker",
        ]
        let record = Mutex<(done: [String], failures: [String])>(([], []))
        let faultQueue = DispatchQueue(label: "push-faults")
        let device = chain.devices[0]
        let batch = await PushChain.send(
            targets: (0..<count).map { targets[$0 % targets.count] }, keyPrefix: "fault", connections: connections,
            port: chain.gateway.port, log: log, retry: true
        ) { accepted in
            guard let fault = plan[accepted] else { return }
            faultQueue.async {
                do {
                    switch fault {
                    case "lifecycled": try device.killAndRestart()
                    case "gateway":
                        // This queue's thread waits for the async restart (not a thread of the task pool).
                        let gateway = chain.gateway
                        let finished = DispatchSemaphore(value: 0)
                        let failure = Mutex<String?>(nil)
                        Task {
                            do { try await gateway.killAndRestart() } catch { failure.withLock { $0 = "\(error)" } }
                            finished.signal()
                        }
                        finished.wait()
                        if let failure = failure.withLock({ $0 }) { throw ValidationError(failure) }
                    default: try chain.broker.restart()
                    }
                    record.withLock { $0.done.append("\(fault) after \(accepted)") }
                } catch {
                    record.withLock { $0.failures.append("\(fault): \(error)") }
                }
            }
        }
        // The last fault may still be under way when a short run ends (bounded, no measurement).
        await onOwnThread { faultQueue.sync {} }.value()
        let arrivals = log.arrivals(prefix: "fault-")
        var twice = 0
        for (key, times) in arrivals {
            twice += max(times.count - 1 - (batch.resentKeys[key] ?? 0), 0)
        }
        let (done, failures) = record.withLock { ($0.done, $0.failures) }
        return Faults(
            batch: batch, twice: twice, resent: batch.resentKeys.values.reduce(0, +), done: done, failures: failures)
    }

    /// Raw MQTT on the same broker: QoS 1 publish by one client, receipt by another.
    static func measureReference(broker: MosquittoBroker, count: Int, payloadSize: Int, log: DeliveryLog)
        async throws -> (p50: Double, p99: Double, lost: Int)
    {
        let loop = try EventLoop(name: "bench-mqtt")
        defer { loop.shutdown() }
        let topic = "applifecycle/v1/bench/reference"
        func connection(_ name: String) throws -> (BrokerConnection, ConnectedState) {
            var configuration = try BrokerConfiguration(
                url: broker.url, clientID: "bench-\(name)-\(getpid())", username: "bench", password: "pw-bench")
            configuration.cleanSession = true
            let connection = BrokerConnection(
                configuration: configuration, loop: loop, logger: Logger(label: "lifecycle-bench"))
            let state = ConnectedState()
            connection.setEventHandler { event in
                if case .connected = event { state.set(true) } else { state.set(false) }
            }
            return (connection, state)
        }
        let (subscriber, subscriberUp) = try connection("sub")
        let (publisher, publisherUp) = try connection("pub")
        defer {
            subscriber.stop()
            publisher.stop()
        }
        subscriber.setMessageHandler(acknowledgingImmediately: { message in
            let now = monotonicNanoseconds()
            log.record(String(message.text.prefix { $0 != " " }), at: now)
        })
        try subscriber.subscribe(topic, qos: 1)
        try await subscriber.start()
        try await publisher.start()
        let result = await onOwnThread { () -> (p50: Double, p99: Double, lost: Int) in
            let padding = String(repeating: "x", count: max(payloadSize - 16, 1))
            // Warm-up, until the subscription is in place (there is no SUBACK event to wait for).
            var attempt = 0
            while attempt < 200, !(subscriberUp.value && publisherUp.value) {
                usleep(50_000)
                attempt += 1
            }
            for warm in 0..<100 {
                publisher.publish(topic: topic, payload: Array("warm-\(warm) \(padding)".utf8), qos: 1) { _ in }
                if log.wait(for: "warm-\(warm)", timeout: 0.1) != nil { break }
            }
            var latencies: [Double] = []
            var lost = 0
            for index in 0..<count {
                let key = "ref-\(index)"
                let payload = Array("\(key) \(padding)".utf8)
                let start = monotonicNanoseconds()
                publisher.publish(topic: topic, payload: payload, qos: 1) { _ in }
                guard let arrival = log.wait(for: key, timeout: 10) else {
                    lost += 1
                    continue
                }
                latencies.append(Double(arrival &- start) / 1e6)
            }
            return (Measurement.percentile(latencies, 50), Measurement.percentile(latencies, 99), lost)
        }.value()
        return result
    }
}

// MARK: - The chain: broker, gateway, lifecycled instances

/// One mosquitto, one lifecycle-push-gateway and lifecycled instances (one per device) behind them.
final class PushChain: Sendable {
    static let publicURL = "https://push.example.net"
    let broker: MosquittoBroker
    let gateway: GatewayProcess
    let devices: [LifecycledInstance]

    private init(broker: MosquittoBroker, gateway: GatewayProcess, devices: [LifecycledInstance]) {
        self.broker = broker
        self.gateway = gateway
        self.devices = devices
    }

    /// Starts the broker (users: every device, `gateway`, and `extraUsers`), the gateway, and one
    /// lifecycled per device; every process is stopped by its own pid by ``stop()``, and by the
    /// fixtures' `deinit` on a failure path.
    static func start(devices: [String], extraUsers: [String: String] = [:], stateBase: String? = nil) async throws
        -> PushChain
    {
        guard let lifecycled = DaemonRig.lifecycledPath() else {
            throw ValidationError("lifecycled is not built next to lifecycle-bench")
        }
        var users = extraUsers
        users["gateway"] = "pw-gateway"
        for device in devices { users[device] = "pw-\(device)" }
        // What a fleet's broker should set (README): small packets out at once, no Nagle delay.
        // The shipped least-privilege ACL, and the raw reference hop's own topic for its user.
        let acl = try MosquittoBroker.shippedACL() + "\nuser bench\ntopic readwrite applifecycle/v1/bench/reference\n"
        let broker = try MosquittoBroker(users: users, acl: acl, extraConfiguration: "set_tcp_nodelay true")
        let gateway = try await GatewayProcess(brokerURL: broker.url, password: "pw-gateway", publicURL: publicURL)
        var instances: [LifecycledInstance] = []
        do {
            for device in devices {
                instances.append(
                    try LifecycledInstance(
                        executable: lifecycled,
                        configuration: """
                            [broker]
                            url = \(broker.url)
                            username = \(device)
                            password = pw-\(device)
                            device-id = \(device)
                            keepalive = 10

                            [push]
                            endpoint-url = \(publicURL)
                            """, stateBase: stateBase))
            }
        } catch {
            instances.forEach { $0.stop() }
            throw error
        }
        return PushChain(broker: broker, gateway: gateway, devices: instances)
    }

    /// Stops every lifecycled (SIGTERM to all first, then each is reaped), the gateway and the broker.
    func stop() {
        for device in devices { kill(device.daemon.pid, SIGTERM) }
        devices.forEach { $0.stop() }
        gateway.stop()
        broker.stop()
    }

    /// One push to each target, retried until the gateway knows the token, each awaited at its app.
    ///
    /// - Returns: `nil`, or what failed.
    static func warmUp(targets: [PushTarget], port: Int, log: DeliveryLog) async -> String? {
        var index = 0
        var attempts = 0
        var last = 0
        var failure: String?
        await GatewayConnections.whileConnected(port: port) { connection in
            guard index < targets.count else { return false }
            let key = "warm-\(index)"
            guard let body = try? targets[index].encrypted(key: key) else {
                failure = "cannot encrypt to \(targets[index].token)"
                return false
            }
            attempts += 1
            last = await GatewayConnections.post(
                connection, path: targets[index].path, headers: PushTarget.headers, body: body)
            if last == 201 {
                guard await onOwnThread({ log.wait(for: key, timeout: 15) != nil }).value() else {
                    failure = "the warm-up push to app \(index) was not delivered within 15 s"
                    return false
                }
                index += 1
                attempts = 0
            } else if attempts >= 600 {
                failure = "the gateway kept answering \(last) to app \(index)'s warm-up push"
                return false
            } else {
                try? await Task.sleep(for: .milliseconds(50))
            }
            return true
        }
        return failure
    }

    /// What a batch of pushes sent at once came to.
    struct Batch: Sendable {
        var seconds: Double
        var rate: Double
        var accepted: Int
        var non201: [Int: Int]
        var lost: Int
        var duplicates: Int
        var latencies: [Double]
        var lastDelivery: UInt64
        var firstPost: UInt64
        /// Per push key, the POSTs that got no answer or a 503 and were sent again.
        var resentKeys: [String: Int] = [:]

        var non201Total: Int { non201.values.reduce(0, +) }
        var non201Description: String {
            non201.isEmpty
                ? "0"
                : "\(non201Total) ("
                    + non201.sorted { $0.key < $1.key }.map {
                        "\($0.key == -1 ? "error" : String($0.key)): \($0.value)"
                    }
                    .joined(separator: ", ") + ")"
        }
    }

    /// Sends one push per target over `connections` keep-alive connections at once, then waits
    /// for the deliveries (until every accepted push arrived or none arrived for 30 s).
    ///
    /// - Parameters:
    ///   - retry: Whether a push answered other than 201 is sent again (after 50 ms) until it is
    ///     accepted, as an app server does after a 503; the latency then counts from the first POST.
    ///   - accepted: Called after each 201 with the number accepted so far.
    static func send(
        targets: [PushTarget], keyPrefix: String, connections: Int, port: Int, log: DeliveryLog, retry: Bool,
        accepted onAccepted: @escaping @Sendable (Int) -> Void = { _ in }
    ) async -> Batch {
        let bodies = targets.enumerated().map { index, target in
            (try? target.encrypted(key: "\(keyPrefix)-\(index)")) ?? []
        }
        let progress = BatchProgress()
        let first = monotonicNanoseconds()
        await withTaskGroup(of: Void.self) { senders in
            for _ in 0..<max(connections, 1) {
                senders.addTask {
                    // The push this sender is on: its index, when it was first sent, how often.
                    var current: (index: Int, start: UInt64, attempts: Int)?
                    await GatewayConnections.whileConnected(port: port) { connection in
                        if current == nil {
                            let index = progress.next.add(1, ordering: .relaxed).oldValue
                            guard index < targets.count else { return false }
                            current = (index, monotonicNanoseconds(), 0)
                        }
                        guard var push = current else { return false }
                        push.attempts += 1
                        current = push
                        let status = await GatewayConnections.post(
                            connection, path: targets[push.index].path, headers: PushTarget.headers,
                            body: bodies[push.index])
                        if status == 201 {
                            progress.state.withLock { $0.starts["\(keyPrefix)-\(push.index)"] = push.start }
                            onAccepted(progress.accepted.add(1, ordering: .relaxed).newValue)
                            current = nil
                            return true
                        }
                        progress.state.withLock {
                            $0.non201[status, default: 0] += 1
                            if retry, status == -1 || status == 503 {
                                $0.resent["\(keyPrefix)-\(push.index)", default: 0] += 1
                            }
                        }
                        if retry, push.attempts < 2400 {
                            try? await Task.sleep(for: .milliseconds(50))
                        } else {
                            current = nil
                        }
                        return true
                    }
                }
            }
        }
        let (starts, non201, resent) = progress.state.withLock { ($0.starts, $0.non201, $0.resent) }
        await onOwnThread { log.waitForKeys(Set(starts.keys), quiet: 30) }.value()
        let arrivals = log.arrivals(prefix: keyPrefix + "-")
        var latencies: [Double] = []
        var last = first
        var lost = 0
        for (key, start) in starts {
            guard let arrival = arrivals[key]?.min() else {
                lost += 1
                continue
            }
            latencies.append(Double(arrival &- start) / 1e6)
            last = max(last, arrival)
        }
        let duplicates = arrivals.values.reduce(0) { $0 + max($1.count - 1, 0) }
        let seconds = Double(last &- first) / 1e9
        return Batch(
            seconds: seconds, rate: Double(latencies.count) / seconds, accepted: starts.count, non201: non201,
            lost: lost, duplicates: duplicates, latencies: latencies, lastDelivery: last, firstPost: first,
            resentKeys: resent)
    }
}

/// A lifecycled (release build) on a private bus of its own, with host sources off, a state
/// directory of its own and a `--config` file; its output goes to `lifecycled.log` in its directory.
final class LifecycledInstance: Sendable {
    let bus: PrivateBus
    /// lifecycled (the current one, after ``killAndRestart()``).
    var daemon: ChildProcess { current.withLock { $0 } }
    private let current: Mutex<ChildProcess>
    private let executable: String
    private let arguments: [String]
    private let environment: [String: String]
    private let logPath: String
    let directory: TemporaryDirectory
    /// lifecycled's `--state-directory` (in ``directory``, or under the state base).
    let stateDirectory: String

    init(executable: String, configuration: String, stateBase: String? = nil) throws {
        let directory = try TemporaryDirectory(prefix: "bench-lifecycled")
        let state =
            stateBase.map { "\($0)/bench-lifecycled-\(getpid())-\(UUID().uuidString.prefix(8))" }
            ?? directory.appending("state")
        stateDirectory = state
        do {
            let bus = try PrivateBus()
            do {
                let config = try directory.write("lifecycled.conf", configuration + "\n", mode: 0o600)
                let apps = directory.appending("apps")
                try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
                try FileManager.default.createDirectory(atPath: apps, withIntermediateDirectories: true)
                var environment = ProcessInfo.processInfo.environment
                environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
                environment["XDG_CONFIG_HOME"] = directory.appending("config")
                environment["XDG_STATE_HOME"] = directory.appending("state-home")
                let arguments = [
                    "--address", bus.address, "--no-host-sources", "--apps-directory", apps, "--state-directory",
                    state, "--config", config,
                ]
                logPath = directory.appending("lifecycled.log")
                current = Mutex(
                    try ChildProcess.spawn(executable, arguments, environment: environment, stdout: .file(logPath)))
                self.executable = executable
                self.arguments = arguments
                self.environment = environment
            } catch {
                bus.stop()
                throw error
            }
            self.bus = bus
        } catch {
            try? FileManager.default.removeItem(atPath: state)
            directory.remove()
            throw error
        }
        self.directory = directory
    }

    /// SIGKILL to lifecycled's pid, its reaping, and a new lifecycled with the same bus, state and
    /// configuration (its output appended to the same log).
    func killAndRestart() throws {
        let old = daemon
        kill(old.pid, SIGKILL)
        old.waitForExit()
        let new = try ChildProcess.spawn(executable, arguments, environment: environment, stdout: .file(logPath))
        current.withLock { $0 = new }
    }

    /// SIGTERM to lifecycled's pid and its reaping, then the bus, then the directory.
    func stop() {
        daemon.terminateAndWait()
        bus.stop()
        try? FileManager.default.removeItem(atPath: stateDirectory)
        directory.remove()
    }
}

// MARK: - The app side

/// The app's delegate: keeps the device token and records each push's key and arrival.
@MainActor
final class PushBenchDelegate: ApplicationDelegate {
    let log: DeliveryLog
    var token: Data?
    var failure: String?

    init(log: DeliveryLog) { self.log = log }

    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        token = deviceToken
    }

    func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error) {
        failure = "\(error)"
    }

    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        let now = monotonicNanoseconds()
        if let key = userInfo["k"]?.stringValue { log.record(key, at: now) }
        completionHandler(.newData)
    }
}

/// An app in this process: `LifecycledHost` + `Application`, its own id and `XDG_STATE_HOME`.
@MainActor
final class InProcessApp {
    let id: String
    let host: LifecycledHost
    let delegate: PushBenchDelegate
    let application: Application
    private var running: Task<Void, Never>?

    init(id: String, busAddress: String, stateHome: String, log: DeliveryLog) {
        self.id = id
        host = LifecycledHost(
            configuration: .init(
                appID: id, busAddress: .address(busAddress),
                environment: ["XDG_STATE_HOME": stateHome, "HOME": stateHome], handlesTerminationSignals: false))
        delegate = PushBenchDelegate(log: log)
        application = Application(
            delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
            configuration: .init(applicationIdentifier: id, isStateRestorationEnabled: false))
        let application = application
        running = Task { @MainActor in await application.run() }
    }

    /// Waits until lifecycled hosts the app, registers for remote notifications and returns the
    /// device token's push target (a hang guard of `timeout` each; no measurement depends on it).
    func registerForPushes(timeout: Duration = .seconds(30)) async throws -> PushTarget {
        var deadline = ContinuousClock.now + timeout
        while !host.status.isHosted {
            guard ContinuousClock.now < deadline else { throw ValidationError("\(id) was not hosted by lifecycled") }
            try await Task.sleep(for: .milliseconds(10))
        }
        application.registerForRemoteNotifications()
        deadline = ContinuousClock.now + timeout
        while delegate.token == nil {
            if let failure = delegate.failure { throw ValidationError("\(id): registration failed: \(failure)") }
            guard ContinuousClock.now < deadline else { throw ValidationError("\(id) got no device token") }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try PushTarget(deviceToken: delegate.token ?? Data())
    }

    func stop() {
        running?.cancel()
        running = nil
    }
}

/// Where and how to push to one app: its endpoint's token and its Web Push keys.
struct PushTarget: Sendable {
    static let headers = [("TTL", "3600"), ("Content-Encoding", "aes128gcm")]
    let token: String
    let publicKey: Data
    let authSecret: Data

    init(deviceToken: Data) throws {
        let subscription = try RemoteNotificationDeviceToken(deviceToken: deviceToken)
        token = subscription.endpoint.lastPathComponent
        publicKey = subscription.publicKey
        authSecret = subscription.authSecret
    }

    var path: String { "/push/" + token }

    /// `{"k":"<key>"}` encrypted to the app's keys (RFC 8291), as an app server sends it.
    func encrypted(key: String) throws -> [UInt8] {
        Array(
            try WebPushEncryption.encrypt(
                Data("{\"k\":\"\(key)\"}".utf8), receiverPublicKey: publicKey, authSecret: authSecret))
    }
}

// MARK: - Deliveries

/// Arrival times (monotonic ns) by key, recorded on the main actor or a loop thread and awaited
/// by blocking driver threads.
final class DeliveryLog: @unchecked Sendable {
    // Why @unchecked Sendable: `arrivals` and `total` are touched only while holding `condition`.
    private let condition = NSCondition()
    private var arrivals: [String: [UInt64]] = [:]
    private var total = 0

    func record(_ key: String, at time: UInt64) {
        condition.lock()
        arrivals[key, default: []].append(time)
        total += 1
        condition.broadcast()
        condition.unlock()
    }

    /// Blocks until `key` arrived, at most `timeout` seconds; returns its first arrival.
    func wait(for key: String, timeout: Double) -> UInt64? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while arrivals[key] == nil, condition.wait(until: deadline) {}
        return arrivals[key]?.first
    }

    /// Blocks until every key arrived, or none arrived for `quiet` seconds.
    func waitForKeys(_ keys: Set<String>, quiet: Double) {
        condition.lock()
        defer { condition.unlock() }
        var seen = total
        var deadline = Date(timeIntervalSinceNow: quiet)
        while keys.contains(where: { arrivals[$0] == nil }) {
            _ = condition.wait(until: deadline)
            if total != seen {
                seen = total
                deadline = Date(timeIntervalSinceNow: quiet)
            } else if Date() >= deadline {
                return
            }
        }
    }

    /// The arrivals of the keys that start with `prefix`.
    func arrivals(prefix: String) -> [String: [UInt64]] {
        condition.lock()
        defer { condition.unlock() }
        return arrivals.filter { $0.key.hasPrefix(prefix) }
    }

    /// How many keys that start with `prefix` arrived at least once.
    func delivered(prefix: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return arrivals.keys.filter { $0.hasPrefix(prefix) }.count
    }
}

/// Whether a broker connection is up, set on its loop thread.
final class ConnectedState: Sendable {
    private let state = Mutex(false)
    func set(_ value: Bool) { state.withLock { $0 = value } }
    var value: Bool { state.withLock { $0 } }
}

// MARK: - HTTP

/// What the senders of one batch share: the next push to take, the count accepted, and each
/// accepted push's first POST and the statuses other than 201.
final class BatchProgress: Sendable {
    let next = Atomic<Int>(0)
    let accepted = Atomic<Int>(0)
    let state = Mutex<(starts: [String: UInt64], non201: [Int: Int], resent: [String: Int])>(([:], [:], [:]))
}

/// The benchmark's HTTP to the gateway on `127.0.0.1`: the project's HTTP/1.1 client
/// (`HTTPClientConnection`, the one `lifecyclectl push` uses) on keep-alive connections.
enum GatewayConnections {
    /// Runs `step` with a keep-alive connection to the gateway until it returns `false`; a new
    /// connection replaces one that can take no more requests (the gateway closed it, or a request
    /// on it failed). When a connection cannot be opened, `step` gets `nil` for that try.
    static func whileConnected(port: Int, _ step: (HTTPClientConnection?) async -> Bool) async {
        var going = true
        while going {
            do {
                try await HTTPClientConnection.withConnection(host: "127.0.0.1", port: port) { connection in
                    while going, connection.isReusable { going = await step(connection) }
                }
            } catch {
                going = await step(nil)
            }
        }
    }

    /// POSTs `body` and returns the response's status code; -1 without a connection or a response.
    static func post(
        _ connection: HTTPClientConnection?, path: String, headers: [(String, String)], body: [UInt8]
    ) async -> Int {
        guard let connection else { return -1 }
        let request = HTTPClientRequest(path: path, headers: headers, body: body)
        return (try? await connection.send(request))?.status ?? -1
    }
}

// MARK: - Processes

/// The benchmark's child processes on a signal: each is stopped by its own pid.
enum BenchProcesses {
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    /// On SIGINT or SIGTERM: SIGTERM to every child of this process (by pid, from /proc), SIGKILL
    /// to those still running after 5 s, then exit. The fixtures' own `stop`s and `deinit`s cover
    /// every other path (errors, the normal end).
    static func installSignalCleanup() {
        guard sources.isEmpty else { return }
        // The in-process apps log every registration and stop; warnings and errors are what matter here.
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                terminateChildren()
                _exit(128 + signalNumber)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// This process's children (their pids, from `/proc/<pid>/stat`'s parent field).
    static func children() -> [pid_t] {
        let me = getpid()
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry), ProcessStat(pid: pid)?.parent == me else { return nil }
            return pid
        }
    }

    static func terminateChildren() {
        let pids = children()
        for pid in pids { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + .seconds(5)
        var remaining = pids
        while !remaining.isEmpty, ContinuousClock.now < deadline {
            remaining = remaining.filter { waitpid($0, nil, WNOHANG) == 0 }
            if !remaining.isEmpty { usleep(20_000) }
        }
        for pid in remaining { kill(pid, SIGKILL) }
    }

    /// Raises the soft limit of open files to the hard limit (50 buses, brokers' and gateways' sockets).
    static func raiseFileLimit() {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}
