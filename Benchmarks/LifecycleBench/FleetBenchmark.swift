import ArgumentParser
import BrokerTestSupport
import Foundation
import Glibc
import Synchronization

/// `lifecycle-bench fleet`: pushes to a fleet of lifecycled instances behind one broker and one
/// gateway, with the broker restarted once while pushes are in flight.
struct FleetBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract:
            "Pushes to every app of a fleet of lifecycled instances through one gateway, across a broker restart.",
        discussion: """
            DEVICES lifecycled instances (release build), each on a private bus of its own with host sources \
            off, its own device id (device-<i>) and MQTT user, behind one mosquitto and one \
            lifecycle-push-gateway; one in-process app per device (LifecycledHost + Application, the same app \
            id on every device, as one app installed on a fleet) registered for remote notifications. ROUNDS \
            pushes to every app, round after round, over CONNECTIONS keep-alive HTTP/1.1 connections; once a \
            third are accepted the broker is stopped (SIGTERM: it saves its persistence) and started again \
            on the same port. A push answered other than 201 (503 while the broker is away) is sent again \
            after 50 ms, as an app server does; its latency counts from its first POST. Lost: accepted (201) \
            and never delivered.
            """)

    @Option(help: "lifecycled instances (devices).") var devices = 50
    @Option(help: "Pushes to every app.") var rounds = 10
    @Option(help: "Concurrent keep-alive HTTP connections.") var connections = 4
    @Flag(help: "One JSON object per line.") var json = false

    /// When the broker was stopped and was back, and how many pushes were accepted and not delivered then.
    struct Restart: Sendable {
        var stopped: UInt64 = 0
        var back: UInt64 = 0
        var acceptedBefore = 0
        var inFlight = 0
        var failure: String?
        var done = false
    }

    @MainActor
    func run() async throws {
        BenchProcesses.installSignalCleanup()
        BenchProcesses.raiseFileLimit()
        let log = DeliveryLog()
        let setUp = ContinuousClock.now
        let chain = try await PushChain.start(devices: (0..<devices).map { "device-\($0)" })
        defer { chain.stop() }
        var hosted: [InProcessApp] = []
        defer { hosted.forEach { $0.stop() } }
        for device in chain.devices {
            hosted.append(
                InProcessApp(
                    id: "org.example.FleetBench", busAddress: device.bus.address,
                    stateHome: device.directory.appending("xdg"), log: log))
        }
        var targets: [PushTarget] = []
        for app in hosted { targets.append(try await app.registerForPushes(timeout: .seconds(60))) }
        let port = chain.gateway.port
        let allTargets = targets
        let warm = await PushChain.warmUp(targets: allTargets, port: port, log: log)
        if let warm { throw ValidationError(warm) }
        let setUpSeconds = (ContinuousClock.now - setUp).nanoseconds / 1e9

        let total = devices * rounds
        let threshold = max(1, total / 3)
        let broker = chain.broker
        let restart = Mutex(Restart())
        let connectionCount = connections
        let batch = await PushChain.send(
            targets: (0..<total).map { allTargets[$0 % allTargets.count] }, keyPrefix: "fleet",
            connections: connectionCount, port: port, log: log, retry: true
        ) { accepted in
            guard accepted == threshold else { return }
            Thread {
                let stopped = monotonicNanoseconds()
                let inFlight = accepted - log.delivered(prefix: "fleet-")
                var failure: String?
                do { try broker.restart() } catch { failure = "\(error)" }
                let back = monotonicNanoseconds()
                restart.withLock {
                    $0 = Restart(
                        stopped: stopped, back: back, acceptedBefore: accepted, inFlight: inFlight,
                        failure: failure, done: true)
                }
            }.start()
        }
        // The restart may still be under way when a short run ends (bounded wait, no measurement).
        let guardDeadline = ContinuousClock.now + .seconds(30)
        while !restart.withLock({ $0.done }), ContinuousClock.now < guardDeadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let restarted = restart.withLock { $0 }
        let delivered = log.delivered(prefix: "fleet-")
        let downMs = restarted.done ? Double(restarted.back &- restarted.stopped) / 1e6 : .nan
        let p50 = Measurement.percentile(batch.latencies, 50)
        let p99 = Measurement.percentile(batch.latencies, 99)
        let maxMs = batch.latencies.max() ?? .nan
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": "fleet", "devices": devices, "apps_per_device": 1, "rounds": rounds,
                    "connections": connections, "expected": total, "delivered": delivered, "accepted": batch.accepted,
                    "lost": batch.lost, "duplicates": batch.duplicates, "non_201": batch.non201Total,
                    "p50_ms": p50, "p99_ms": p99, "max_ms": maxMs, "seconds": batch.seconds,
                    "broker_restarted": restarted.done && restarted.failure == nil,
                    "broker_restart_ms": downMs, "restart_after_accepted": restarted.acceptedBefore,
                    "in_flight_at_restart": restarted.inFlight, "setup_s": setUpSeconds,
                ]))
        } else {
            print(
                "fleet: \(devices) lifecycled instances (private buses, host sources off), one app each, one broker, one gateway"
            )
            print(
                "  \(rounds) pushes to every app over \(connections) keep-alive connections; broker restarted once (SIGTERM, persistence, same port)"
            )
            print("  delivered:   \(delivered)/\(total)   lost: \(batch.lost)   duplicates: \(batch.duplicates)")
            print("  non-201:     \(batch.non201Description)   (each sent again after 50 ms until 201)")
            print(
                "  latency:     p50 \(Measurement.format(p50, 2)) ms   p99 \(Measurement.format(p99, 2)) ms   max \(Measurement.format(maxMs, 1)) ms   (from the first POST)"
            )
            print(
                "  everything:  \(Measurement.format(batch.seconds, 3)) s from the first POST to the last delivery (\(Measurement.format(batch.rate, 0)) pushes/s)"
            )
            if let failure = restarted.failure {
                print("  broker restart FAILED: \(failure)")
            } else if restarted.done {
                print(
                    "  broker:      stopped after \(restarted.acceptedBefore) accepted (\(restarted.inFlight) not yet delivered), back after \(Measurement.format(downMs, 0)) ms"
                )
            } else {
                print("  broker:      the restart did not finish")
            }
            print(
                "  set-up:      \(Measurement.format(setUpSeconds, 1)) s (processes, registrations, one warm-up push each)"
            )
        }
        if batch.lost > 0 || delivered < total { throw ExitCode(1) }
    }
}
