import BrokerLink
import BrokerTestSupport
import Foundation
import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

/// The lifecycled binary against a real broker: no push is lost when lifecycled is killed with
/// SIGKILL between receiving and delivering, while the device is offline, or when the broker
/// restarts mid-stream; none reaches the app twice (at a connector that drops ids it accepted, as
/// this project's does: a push to a running app is acknowledged after the app's reply, so a crash
/// in between makes the broker send it again).
@Suite("Pushes survive SIGKILL, an offline device and a broker restart", .serialized, .timeLimit(.minutes(3)))
struct DaemonPushDurabilityTests {
    static let connectorName = "org.example.Durable"

    @Test func nothingLostNothingTwice() async throws {
        let rig = try await FleetRig()
        let binaryRig = try await BinaryDaemonRig(
            prefix: "push-durability", extraArguments: ["--config", rig.configurationPath])
        defer { binaryRig.close() }
        let (bus, dir, tracker) = (binaryRig.bus, binaryRig.directory, binaryRig.tracker)
        let queueFile = dir.path + "/daemon-state/push-queue.json"
        let log = dir.path + "/connector.log"
        let token = "durable-connector-token"
        func startDaemon() async throws -> SpawnedDaemon { try await binaryRig.start() }
        func startConnector() throws -> PythonConnector {
            try PythonConnector(
                name: Self.connectorName, bus: bus.address, log: log,
                extra: ["--token", token, "--drop-repeated-ids"])
        }

        var daemon = try await startDaemon()
        defer { daemon.kill() }
        var connector = try startConnector()
        defer { connector.process.terminateAndWait() }
        #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
        let endpoint = try #require(connector.endpointToken)
        var sent: [String] = []
        sent.append(try await rig.push(token: endpoint, body: Array("a".utf8)))
        #expect(await eventually { connector.messageIDs == sent }, "\(connector.calls)")

        // 1. SIGKILL between receiving and delivering: the app is gone, so the push is held on
        // disk (and PUBACKed); lifecycled dies; after its restart the push reaches the app once.
        connector.process.terminateAndWait()
        sent.append(try await rig.push(token: endpoint, body: Array("b".utf8)))
        #expect(
            await eventually { ((try? String(contentsOfFile: queueFile, encoding: .utf8)) ?? "").contains(sent[1]) })
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = await daemon.exitStatus()
        #expect(await eventually { tracker.currentOwner == nil })
        daemon = try await startDaemon()
        connector = try startConnector()
        #expect(await eventually { connector.messageIDs == sent }, "\(connector.calls)")

        // 2. The device offline (lifecycled stopped) while pushes are sent: all arrive after, once, in order.
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(await daemon.exitStatus() == 0)
        for letter in ["c", "d", "e", "f", "g"] {
            sent.append(try await rig.push(token: endpoint, body: Array(letter.utf8)))
        }
        daemon = try await startDaemon()
        #expect(await eventually(hangGuard: .seconds(20)) { connector.messageIDs == sent }, "\(connector.calls)")

        // 3. The broker restarts mid-stream (with persistence): nothing sent before or after is lost.
        for letter in ["h", "i", "j"] { sent.append(try await rig.push(token: endpoint, body: Array(letter.utf8))) }
        rig.broker.stop()
        try rig.broker.restart()
        #expect(
            await eventually(hangGuard: .seconds(20)) { rig.gatewayConnected }, "the gateway client did not reconnect")
        for letter in ["k", "l", "m"] { sent.append(try await rig.push(token: endpoint, body: Array(letter.utf8))) }
        #expect(
            await eventually(hangGuard: .seconds(30)) { connector.messageIDs.count >= sent.count }, "\(connector.calls)"
        )
        // A last push, published after all of them, arrives after every copy of theirs.
        sent.append(try await rig.push(token: endpoint, body: Array("n".utf8)))
        #expect(
            await eventually(hangGuard: .seconds(30)) { connector.messageIDs.contains(sent.last!) },
            "\(connector.calls)")
        #expect(connector.messageIDs == sent, "lost or duplicated: \(connector.messageIDs) vs \(sent)")
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(await daemon.exitStatus() == 0)
    }

    /// A push to a running app is acknowledged only once the app accepted it: nothing is written
    /// for it, and if lifecycled dies while its `Message` is outstanding the broker still holds it
    /// and sends it again, so the next lifecycled delivers it again. This connector does not drop
    /// repeated ids, so the repeat shows; this project's connector drops it (``RecentMessageIDs``).
    /// It answers after 2 s, so the kill falls while its `Message` is outstanding.
    @Test func aPushToARunningAppIsAcknowledgedOnlyOnceTheAppAcceptedIt() async throws {
        let rig = try await FleetRig()
        let binaryRig = try await BinaryDaemonRig(
            prefix: "push-durability", extraArguments: ["--config", rig.configurationPath])
        defer { binaryRig.close() }
        let (bus, dir, tracker) = (binaryRig.bus, binaryRig.directory, binaryRig.tracker)
        let queueFile = dir.path + "/daemon-state/push-queue.json"
        var daemon = try await binaryRig.start()
        defer { daemon.kill() }
        let connector = try PythonConnector(
            name: Self.connectorName, bus: bus.address, log: dir.path + "/connector.log",
            extra: ["--token", "slow-token", "--reply-delay", "2"])
        defer { connector.process.terminateAndWait() }
        #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
        let endpoint = try #require(connector.endpointToken)

        let first = try await rig.push(token: endpoint, body: Array("first".utf8))
        #expect(await eventually { connector.messageIDs == [first] }, "\(connector.calls)")
        // Handed to the running app without a write: no queue file names it.
        #expect(!((try? String(contentsOfFile: queueFile, encoding: .utf8)) ?? "").contains(first))
        kill(daemon.process.processIdentifier, SIGKILL)
        _ = await daemon.exitStatus()
        #expect(await eventually { tracker.currentOwner == nil })
        let log = dir.path + "/second-daemon.log"
        daemon = try await binaryRig.start(standardErrorPath: log)
        // The broker had no PUBACK for it: it comes again, before the next push.
        let second = try await rig.push(token: endpoint, body: Array("second".utf8))
        #expect(
            await eventually(hangGuard: .seconds(20)) { connector.messageIDs.count >= 3 }, "\(connector.calls)")
        #expect(connector.messageIDs.prefix(3) == [first, first, second], "\(connector.messageIDs)")
        // The second's `Message` is outstanding (2 s) when SIGTERM comes: the delivery ends before
        // lifecycled says it stopped, and the push stays unacknowledged (the broker keeps it).
        let stopping = try await rig.push(token: endpoint, body: Array("third".utf8))
        #expect(await eventually { connector.messageIDs.last == stopping }, "\(connector.calls)")
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(await daemon.exitStatus() == 0)
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let daemonLines = lines.filter { $0.contains("[LifecycleDaemon]") }
        #expect(daemonLines.last?.hasSuffix("stopped") == true, "\(lines.joined(separator: "\n"))")
        #expect(
            daemonLines.contains { $0.contains("push: \(stopping)") && $0.contains("lifecycled is stopping") },
            "\(lines.joined(separator: "\n"))")
    }
}
