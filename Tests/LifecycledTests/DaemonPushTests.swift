import AppLifecycle
import AppLifecycleTesting
import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing
import WebPush

@testable import LifecycleDaemon

/// The UnifiedPush connector of `scripts/test/unifiedpush-connector.py` (dbus-python), and what it logged.
struct PythonConnector {
    let process: ChildProcess
    let log: String

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/test/unifiedpush-connector.py").path
    }

    /// Starts the connector; `asUser` runs it under another uid (through `setpriv`, as root).
    init(name: String, bus: String, log: String, extra: [String] = [], asUser uid: uid_t? = nil) throws {
        self.log = log
        let command = ["/usr/bin/python3", Self.script, name, log] + extra
        let run =
            uid.map { ["/usr/bin/setpriv", "--reuid=\($0)", "--regid=\($0)", "--clear-groups"] + command } ?? command
        process = try ChildProcess.spawn(
            run[0], Array(run.dropFirst()),
            environment: ["DBUS_SESSION_BUS_ADDRESS": bus, "PATH": "/usr/bin:/bin"], stdout: .file(log + ".out"))
    }

    /// The calls it received, in order.
    var calls: [[String: String]] {
        logLines(log).compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: String]
        }
    }
    func calls(_ name: String) -> [[String: String]] { calls.filter { $0["call"] == name } }
    var messageIDs: [String] { calls("Message").compactMap { $0["id"] } }
    var endpointToken: String? {
        calls("NewEndpoint").last?["endpoint"].map { String($0.split(separator: "/").last ?? "") }
    }
}

@Suite("lifecycled as a UnifiedPush distributor, with a real mosquitto broker", .serialized, .timeLimit(.minutes(3)))
@MainActor
struct DaemonPushTests {
    /// The distributor hands out doors into this user's broker account: another uid on a shared
    /// bus is refused before anything is looked at, over both interfaces, even for a name it owns.
    @Test(.enabled(if: getuid() == 0, "needs root to run a connector as another uid"))
    func aConnectorOfAnotherUIDIsRefusedByBothDistributorInterfaces() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            // The foreign connector writes its log as uid 65534.
            let logs = h.directory.path + "/foreign"
            try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: false)
            chmod(h.directory.path, 0o755)
            chmod(logs, 0o777)
            for version in ["2", "1"] {
                let connector = try PythonConnector(
                    name: "org.example.Foreign\(version)", bus: h.bus.address, log: logs + "/connector\(version).log",
                    extra: version == "1" ? ["--v1"] : [], asUser: 65534)
                defer { connector.process.terminateAndWait() }
                #expect(
                    await eventually {
                        !connector.calls("RegisterError").isEmpty || !connector.calls("RegisterReply").isEmpty
                    },
                    "\(connector.calls)")
                #expect(connector.calls("RegisterReply").isEmpty, "Distributor\(version) accepted uid 65534")
                let refusal = try #require(connector.calls("RegisterError").first)
                #expect(refusal["name"] == BusError.Name.accessDenied)
                #expect(refusal["message"]?.contains("uid 65534") == true, "\(refusal)")
            }
            #expect(h.daemon.push?.registrationCount == 0)
        }
    }

    /// A push whose TTL ran out while the broker held it (the device was offline) is not handed to
    /// a running app (RFC 8030 §5.2), on the direct path as on the queued one, and is counted.
    @Test func anExpiredPushIsNotHandedToARunningApp() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let connector = try PythonConnector(
                name: "org.example.PyPush", bus: h.bus.address, log: h.directory.path + "/connector.log")
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            let token = try #require(connector.endpointToken)
            let stale = try await rig.push(
                token: token, body: Array("stale".utf8), ttl: 1,
                receivedMillisecondsAgo: 1000 + PushQueue.expiryGraceMilliseconds + 60_000)
            // A later push on the same topic arrives after the stale one was handled.
            let fresh = try await rig.push(token: token, body: Array("fresh".utf8))
            #expect(await eventually { connector.messageIDs.contains(fresh) }, "\(connector.calls)")
            #expect(!connector.messageIDs.contains(stale))
            #expect(h.daemon.push?.counters.expired == 1)
        }
    }

    /// A connector slower than the direct path's 2 s may have the push: it counts as delivered (at
    /// most once, as on the queued path), so the push is not sent to it a second time.
    @Test func aPushToASlowRunningAppIsNotSentTwice() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let connector = try PythonConnector(
                name: "org.example.PyPush", bus: h.bus.address, log: h.directory.path + "/connector.log",
                extra: ["--reply-delay", "3"])
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            let token = try #require(connector.endpointToken)
            let slow = try await rig.push(token: token, body: Array("slow".utf8))
            let next = try await rig.push(token: token, body: Array("next".utf8))
            // Had the slow one been queued again, it would reach the connector again before `next`.
            #expect(
                await eventually(hangGuard: .seconds(30), pause: .milliseconds(50)) {
                    connector.messageIDs.contains(next)
                }, "\(connector.calls)")
            #expect(connector.messageIDs.filter { $0 == slow }.count == 1, "\(connector.messageIDs)")
            #expect(h.daemon.push?.counters.delivered == 2)
        }
    }

    /// An app launched by the call that D-Bus-activated lifecycled (handed over the moment it owns
    /// `org.applifecycle.Lifecycled1`) registers for remote notifications at once: the distributor's
    /// name must have its owner, with the fleet configured, before lifecycled takes its own name.
    /// Before, lifecycled served the distributor after its name, the host bridge and the local
    /// notifications, and such an app got `no-push-distributor`.
    @Test func theDistributorHasItsNameBeforeLifecycledTakesItsOwn() async throws {
        let rig = try await FleetRig()
        let acquired = DaemonSignalLog()
        var watcher: DaemonTestClient?
        var subscription: BusSubscription?
        defer {
            subscription?.cancel()
            watcher?.close()
        }
        try await withDaemon(
            fleetConfiguration: rig.configurationPath,
            beforeStart: { bus in
                let client = try await DaemonTestClient(address: bus.address, name: "name-watcher")
                watcher = client
                _ = try await client.connection.requestName("org.example.Early")
                subscription = try await client.connection.subscribe(
                    sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "NameOwnerChanged", signature: "sss"
                ) { signal in
                    guard signal.arguments[0].stringValue?.hasPrefix("org.") == true,
                        signal.arguments[2].stringValue?.isEmpty == false
                    else { return }
                    acquired.add(signal)
                }
            }
        ) { h in
            let names = { acquired.all.compactMap { $0.arguments[0].stringValue } }
            #expect(await eventually { names().contains(LifecycledProtocol.busName) })
            let distributor = names().firstIndex(of: UnifiedPush.lifecycledDistributorName)
            #expect(
                distributor != nil && distributor! < names().firstIndex(of: LifecycledProtocol.busName)!, "\(names())")
            // And a connector registering then is taken (not ACTION_REQUIRED: the fleet is there).
            let client = try #require(watcher)
            let reply = try await client.connection.call(
                destination: UnifiedPush.lifecycledDistributorName, path: UnifiedPush.distributorPath,
                interface: UnifiedPush.distributor2, member: "Register",
                arguments: [
                    .vardict([
                        "service": .string("org.example.Early"), "token": .string("early-token"),
                        "description": .string("early"),
                    ])
                ])
            #expect(UnifiedPush.field("success", in: reply.first)?.stringValue == UnifiedPush.registrationSucceeded)
        }
    }

    @Test func aDBusPythonConnectorRegistersAndGetsEachPushOnceInOrder() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(
                await eventually { h.daemon.push?.fleet?.isConnected == true },
                "\(logLines(rig.broker.logPath).suffix(5))")
            let connector = try PythonConnector(
                name: "org.example.PyPush", bus: h.bus.address, log: h.directory.path + "/connector.log")
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            #expect(connector.calls("RegisterReply").first?["success"] == "REGISTRATION_SUCCEEDED")
            let token = try #require(connector.endpointToken)
            let endpoint = try #require(connector.calls("NewEndpoint").first?["endpoint"])
            #expect(endpoint == "http://127.0.0.1:9/push/\(token)")
            #expect(token.utf8.count == 27, "160 random bits in base64url")

            // The gateway learns the token from the broker: a retained record on the device's topic.
            let retained = try await MosquittoClientTool(broker: rig.broker, username: "gateway").receive(
                filter: FleetTopics.allRegistrations, count: 1, retainedOnly: true)
            let record = try #require(retained.first)
            #expect(record.hasPrefix("applifecycle/v1/device-one/registrations/\(token) "), "\(record)")
            #expect(record.contains("\"app\":\"org.example.PyPush\""))

            // Pushes arrive once each, in order; a redelivered id, a malformed push and an unknown
            // token are dropped without losing anything else.
            let first = try await rig.push(token: token, body: Array("one".utf8))
            try await rig.push(token: token, body: Array("one".utf8), id: first)
            try await rig.pushRaw(Array("{not json".utf8))
            try await rig.push(token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", body: [1])
            let second = try await rig.push(token: token, body: Array("two".utf8))
            // A last push on the same topic arrives after everything published before it, so a
            // late copy of any of those would be in the list by then.
            let last = try await rig.push(token: token, body: Array("end".utf8))
            #expect(await eventually { connector.messageIDs.contains(last) }, "\(connector.calls)")
            #expect(connector.messageIDs == [first, second, last])
            #expect(connector.calls("Message").map { $0["message"] } == ["b25l", "dHdv", "ZW5k"])
            #expect(connector.calls("Message").allSatisfy { $0["token"] == connector.calls("NewEndpoint")[0]["token"] })

            // A spoofed registration for a name the caller does not own is refused.
            let spoof = try? await h.client.connection.call(
                destination: UnifiedPush.lifecycledDistributorName, path: UnifiedPush.distributorPath,
                interface: UnifiedPush.distributor2, member: "Register",
                arguments: [.vardict(["service": .string("org.example.PyPush"), "token": .string("stolen")])])
            #expect(spoof == nil)

            // Nor may another connection unregister it.
            let connectorToken = try #require(connector.calls("NewEndpoint").first?["token"])
            await #expect(throws: BusError.self) {
                _ = try await h.client.connection.call(
                    destination: UnifiedPush.lifecycledDistributorName, path: UnifiedPush.distributorPath,
                    interface: UnifiedPush.distributor2, member: "Unregister",
                    arguments: [.vardict(["token": .string(connectorToken)])])
            }
            #expect(connector.calls("Unregistered").isEmpty)

            // Unregister: the connector hears Unregistered, the broker's record is cleared.
            kill(connector.process.pid, SIGUSR1)
            #expect(await eventually { !connector.calls("Unregistered").isEmpty }, "\(connector.calls)")
            let cleared = try await MosquittoClientTool(broker: rig.broker, username: "gateway").receive(
                filter: FleetTopics.allRegistrations, count: 1, timeoutSeconds: 1, retainedOnly: true)
            #expect(cleared.isEmpty, "\(cleared)")
        }
    }

    @Test func pushesReceivedDeliveredAndDroppedAreCountedInGetCountersAndTheJournalFields() async throws {
        let rig = try await FleetRig()
        let log = RecordedLog()
        try await withDaemon(
            fleetConfiguration: rig.configurationPath, configure: { $0.logger = log.logger(label: "lifecycled") }
        ) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let connector = try PythonConnector(
                name: "org.example.PyPush", bus: h.bus.address, log: h.directory.path + "/connector.log")
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            let token = try #require(connector.endpointToken)
            func counters() async throws -> UserInfo {
                let reply = try await h.client.call(LifecycledProtocol.Method.getCounters.name)
                return try UserInfoBusCodec.decodeUserInfo(try #require(reply.first))
            }
            #expect(try await counters()["push-registrations"] == .int(1))

            try await rig.push(token: "AAAAAAAAAAAAAAAAAAAAAAAAAAA", body: [1])
            try await rig.push(token: token, body: Array("one".utf8))
            let last = try await rig.push(token: token, body: Array("two".utf8))
            #expect(await eventually { connector.messageIDs.contains(last) }, "\(connector.calls)")
            #expect(await eventually { (try? await counters())?["push-delivered"] == .int(2) })
            let counted = try await counters()
            #expect(counted["push-delivered"] == .int(2))
            #expect(counted["push-received"] == .int(2))
            #expect(counted["push-dropped"] == .int(1))
            #expect(counted["push-failed-deliveries"] == .int(0))
            #expect(counted["push-expired"] == .int(0))
            #expect(counted["push-queued"] == .int(0))
            #expect(counted["notifications-scheduled"] == .int(0))

            // The delivery lines carry the counters (journal fields PUSH_RECEIVED=…, PUSH_DELIVERED=…).
            let delivered = try #require(log.entries.last { $0.message.contains("\(last) delivered to") })
            #expect(delivered.metadata["push-delivered"] == "2")
            #expect(delivered.metadata["push-received"] == "2")
            #expect(delivered.metadata["push-dropped"] == "1")
            let dropped = try #require(log.entries.first { $0.message.contains("is not registered here") })
            #expect(dropped.metadata["push-dropped"] == "1")
        }
    }

    @Test func aV1ConnectorIsServedToo() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            let connector = try PythonConnector(
                name: "org.example.PyPushOld", bus: h.bus.address, log: h.directory.path + "/v1.log", extra: ["--v1"])
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            let id = try await rig.push(token: try #require(connector.endpointToken), body: [0, 1, 2, 255])
            #expect(await eventually { connector.messageIDs == [id] }, "\(connector.calls)")
            #expect(connector.calls("Message").first?["message"] == "AAEC/w==")
        }
    }

    /// A full queue holds the broker's PUBACK instead of dropping the oldest push it had
    /// acknowledged: with room for 120, 150 pushes for an app that is away all arrive, once, in
    /// order, when it is back.
    @Test func aFullQueueLetsTheBrokerKeepPushesInsteadOfDroppingAcknowledgedOnes() async throws {
        let rig = try await FleetRig()
        let capacity = 120
        try await withDaemon(fleetConfiguration: rig.configurationPath, pushQueueCapacity: capacity) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let log = h.directory.path + "/away.log"
            var connector = try PythonConnector(
                name: "org.example.Away", bus: h.bus.address, log: log, extra: ["--token", "away-token"])
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            let token = try #require(connector.endpointToken)
            connector.process.terminateAndWait()
            let count = capacity + 30
            var sent: [String] = []
            for index in 0..<count { sent.append(try await rig.push(token: token, body: Array("\(index)".utf8))) }
            #expect(await eventually { h.daemon.push?.queuedCount == capacity })
            connector = try PythonConnector(
                name: "org.example.Away", bus: h.bus.address, log: log, extra: ["--token", "away-token"])
            defer { connector.process.terminateAndWait() }
            #expect(
                await eventually(hangGuard: .seconds(60)) { connector.messageIDs.count >= count },
                "\(connector.messageIDs.count) of \(count)")
            #expect(connector.messageIDs == sent, "lost, reordered or duplicated")
        }
    }

    /// One app with many undelivered pushes (more than the 200 a registration once held) does not
    /// hold back another: a held PUBACK stalls the whole broker link, so nothing is held below the
    /// queue's bound. A new app gets its endpoint and its pushes at once.
    @Test func oneAppsBacklogDoesNotHoldBackAnotherApp() async throws {
        let rig = try await FleetRig()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let away = try PythonConnector(
                name: "org.example.Away", bus: h.bus.address, log: h.directory.path + "/away.log")
            #expect(await eventually { away.endpointToken != nil }, "\(away.calls)")
            let awayToken = try #require(away.endpointToken)
            away.process.terminateAndWait()
            for index in 0..<230 { try await rig.push(token: awayToken, body: Array("\(index)".utf8)) }
            #expect(await eventually { h.daemon.push?.queuedCount == 230 })
            let other = try PythonConnector(
                name: "org.example.Other", bus: h.bus.address, log: h.directory.path + "/other.log")
            defer { other.process.terminateAndWait() }
            #expect(await eventually { other.endpointToken != nil }, "no endpoint: \(other.calls)")
            let token = try #require(other.endpointToken)
            let id = try await rig.push(token: token, body: Array("hello".utf8))
            #expect(await eventually { other.messageIDs == [id] }, "\(other.calls)")
            #expect(h.daemon.push?.fleet?.isConnected == true)
        }
    }

    /// A corrupt or oversized state file is set aside with its bytes intact (never overwritten by
    /// the next write), read with a bound (an oversized one is refused before it is loaded).
    @Test func unusablePushStateFilesAreSetAsideNotLoadedOrOverwritten() async throws {
        try await withDaemon(setUp: { dir in
            let state = dir.path + "/daemon-state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try Data("{not json".utf8).write(to: URL(fileURLWithPath: state + "/push-queue.json"))
            let big = open(state + "/push-registrations.json", O_CREAT | O_WRONLY, 0o600)
            #expect(ftruncate(big, off_t(PushDistributor.maximumRegistrationsFileSize + 1)) == 0)
            close(big)
        }) { h in
            let state = h.directory.path + "/daemon-state"
            let names = try FileManager.default.contentsOfDirectory(atPath: state)
            let queue = try #require(names.first { $0.hasPrefix("push-queue.json.corrupt-") }, "\(names)")
            #expect(try String(contentsOfFile: state + "/" + queue, encoding: .utf8) == "{not json")
            let registrations = try #require(
                names.first { $0.hasPrefix("push-registrations.json.corrupt-") }, "\(names)")
            let size = try FileManager.default.attributesOfItem(atPath: state + "/" + registrations)[.size] as? NSNumber
            #expect(size?.intValue == PushDistributor.maximumRegistrationsFileSize + 1)
            #expect(h.daemon.push?.registrationCount == 0)
            #expect(h.daemon.push?.queuedCount == 0)
        }
    }

    @Test func withoutABrokerRegistrationsAskForAction() async throws {
        try await withDaemon { h in
            let connector = try PythonConnector(
                name: "org.example.PyPushNone", bus: h.bus.address, log: h.directory.path + "/none.log")
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { !connector.calls("RegisterReply").isEmpty }, "\(connector.calls)")
            #expect(connector.calls("RegisterReply").first?["success"] == "REGISTRATION_FAILED")
            #expect(connector.calls("RegisterReply").first?["reason"] == "ACTION_REQUIRED")
        }
    }

    @Test func veryLowPushesWaitForMainsPowerAndAnUnmeteredNetwork() async throws {
        let rig = try await FleetRig()
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let upower = try DBusMock(template: "upower", address: systemBus.address, parameters: #"{"OnBattery": true}"#)
        defer { upower.stop() }
        try upower.call(
            interface: "org.freedesktop.DBus.Mock", method: "SetupDisplayDevice",
            arguments: [
                "uint32 2", "uint32 2", "50.0", "40.0", "80.0", "2.5", "3600", "0", "true", "'battery'", "uint32 1",
            ])
        let networkManager = try DBusMock(template: "networkmanager", address: systemBus.address)
        defer { networkManager.stop() }
        try networkManager.addProperty(interface: "org.freedesktop.NetworkManager", name: "Metered", value: "uint32 1")
        try await withDaemon(systemBus: .address(systemBus.address), fleetConfiguration: rig.configurationPath) { h in
            let connector = try PythonConnector(
                name: "org.example.PyPushUrgent", bus: h.bus.address, log: h.directory.path + "/urgency.log")
            defer { connector.process.terminateAndWait() }
            #expect(await eventually { connector.endpointToken != nil }, "\(connector.calls)")
            #expect(
                await eventually {
                    h.daemon.push?.conditions.onBattery == true && h.daemon.push?.conditions.metered == true
                })
            let token = try #require(connector.endpointToken)
            // On battery and metered: very-low and low wait, high goes at once.
            let veryLow = try await rig.push(token: token, body: [1], urgency: .veryLow)
            let high = try await rig.push(token: token, body: [2], urgency: .high)
            #expect(await eventually { connector.messageIDs.contains(high) }, "\(connector.calls)")
            // Another high push, published after both: the oldest allowed push goes first, so had
            // the very-low one been let out it would arrive before this one.
            let later = try await rig.push(token: token, body: [3], urgency: .high)
            #expect(await eventually { connector.messageIDs.contains(later) }, "\(connector.calls)")
            #expect(!connector.messageIDs.contains(veryLow), "a very-low push went out on battery")
            #expect(connector.messageIDs == [high, later])
            // Mains power and an unmetered network: it goes.
            try upower.updateProperties(interface: "org.freedesktop.UPower", properties: ["OnBattery": "false"])
            try networkManager.updateProperties(
                interface: "org.freedesktop.NetworkManager", properties: ["Metered": "uint32 2"])
            #expect(await eventually { connector.messageIDs.contains(veryLow) }, "\(connector.calls)")
        }
    }

    @Test func urgencyFollowsTheDevicesPowerAndNetwork() {
        var conditions = DeliveryConditions()
        #expect(PushEnvelope.Urgency.allCases.allSatisfy(conditions.allows))
        conditions.onBattery = true
        #expect(!conditions.allows(.veryLow) && conditions.allows(.low) && conditions.allows(.normal))
        conditions.metered = true
        #expect(!conditions.allows(.low) && conditions.allows(.normal))
        conditions.batteryLow = true
        #expect(!conditions.allows(.normal) && conditions.allows(.high))
        conditions = DeliveryConditions(onBattery: false, batteryLow: false, metered: true)
        #expect(!conditions.allows(.veryLow) && conditions.allows(.low))
    }
}

@Suite(
    "Pushes to a hosted app through lifecycled and a real broker, in the seeds' order", .serialized,
    .timeLimit(.minutes(3)))
@MainActor
struct HostedAppPushTests {
    nonisolated static let counter = "org.example.Counter"

    /// A daemon with counter-app's manifest (hosted through lifecycled, its log in `counter.log`,
    /// its state in `counter-state`), pointed at the rig's broker.
    private func withCounterApp(_ rig: FleetRig, _ body: (DaemonHarness) async throws -> Void) async throws {
        try await withHostedCounterApp(rig, id: Self.counter, body)
    }

    /// The seeds' push to a suspended app: woken into the background, suspended again after its
    /// completion handler. In a burst, the next `Message` is on its way while the app finishes the
    /// previous one and reports `suspended`; stopping it then left that `Message` unread until its
    /// 30 s timeout (10 pushes took 93 s). With a call outstanding the app is not stopped.
    @Test func aBurstToAnAppThatSuspendsBetweenPushesArrivesWithoutATimeout() async throws {
        let rig = try await FleetRig()
        try await withCounterApp(rig) { h in
            let appLog = h.directory.path + "/counter.log"
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            _ = try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), UserInfoBusCodec.encode(UserInfo())])
            #expect(
                await eventually {
                    FileManager.default.fileExists(atPath: h.directory.path + "/counter-state/device-token.json")
                })
            let token = try Data(
                contentsOf: URL(fileURLWithPath: h.directory.path + "/counter-state/device-token.json"))
            _ = try await h.client.call(
                LifecycledProtocol.Method.simulate.name, [.string("sleep"), UserInfoBusCodec.encode(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .suspended)
            #expect(await eventually { h.daemon.registry[Self.counter]?.process?.isSuspended == true })
            for increment in 1...10 { try await rig.push(to: token, json: #"{"increment":\#(increment)}"#) }
            // Well under one timeout for all ten; a stalled Message alone takes 30 s.
            #expect(
                await eventually(hangGuard: .seconds(25)) {
                    (1...10).allSatisfy {
                        callbacks(appLog).contains(#"didReceiveRemoteNotification {"increment":\#($0)}"#)
                    }
                }, "\(logLines(appLog).suffix(12))")
            #expect(h.daemon.push?.failedDeliveries == 0, "a Message failed or timed out")
            // And it is suspended again after the last one.
            #expect(await eventually { h.daemon.registry[Self.counter]?.process?.isSuspended == true })
        }
    }

    @Test func activeSuspendedAndNotRunning() async throws {
        let rig = try await FleetRig()
        try await withCounterApp(rig) { h in
            let appLog = h.directory.path + "/counter.log"
            let state = h.directory.path + "/counter-state"
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })

            // Launched: it registers for pushes and saves its device token (a Push API subscription).
            _ = try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(Self.counter), UserInfoBusCodec.encode(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)
            #expect(
                await eventually {
                    callbacks(appLog).contains {
                        $0.hasPrefix("didRegisterForRemoteNotifications endpoint=http://127.0.0.1:9/push/")
                    }
                },
                "\(logLines(appLog))")
            let token = try Data(contentsOf: URL(fileURLWithPath: state + "/device-token.json"))
            #expect(try RemoteNotificationDeviceToken(deviceToken: token).publicKey.count == 65)
            let keyFile = h.directory.path + "/xdg/\(Self.counter)/remote-notifications.json"
            var info = stat()
            #expect(stat(keyFile, &info) == 0 && info.st_mode & 0o777 == 0o600, "keys not 0600")

            // Active: the fetch variant at once, no banner.
            try await rig.push(to: token, json: #"{"aps":{"alert":"one"},"increment":1}"#)
            #expect(
                await eventually {
                    callbacks(appLog).contains(#"didReceiveRemoteNotification {"aps":{"alert":"one"},"increment":1}"#)
                },
                "\(logLines(appLog))")
            #expect(
                logLines(appLog).last { $0.contains("didReceiveRemoteNotification") }?.contains("state=active") == true)

            // Suspended (the machine sleeps): woken into the background for the push, suspended again after.
            _ = try await h.client.call(
                LifecycledProtocol.Method.simulate.name, [.string("sleep"), UserInfoBusCodec.encode(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .suspended)
            #expect(await eventually { h.daemon.registry[Self.counter]?.process?.isSuspended == true })
            let before = h.client.log.stateChanges(Self.counter).count
            try await rig.push(to: token, json: #"{"increment":2}"#)
            #expect(
                await eventually { callbacks(appLog).contains(#"didReceiveRemoteNotification {"increment":2}"#) },
                "\(logLines(appLog))")
            #expect(
                logLines(appLog).last { $0.contains("didReceiveRemoteNotification") }?.contains("state=background")
                    == true)
            try await h.client.log.wait(for: "suspended again") {
                Array($0.stateChanges(Self.counter).dropFirst(before)) == [
                    "suspended->background", "background->suspended",
                ]
            }
            _ = try await h.client.call(
                LifecycledProtocol.Method.simulate.name, [.string("wake"), UserInfoBusCodec.encode(UserInfo())])
            try await h.client.log.waitForState(Self.counter, .active)

            // Not running: launched in the background, the payload in its launch options, then the
            // fetch variant only; it never comes to the foreground.
            _ = try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(Self.counter)])
            try await h.client.log.waitForState(Self.counter, .notRunning)
            let launchesBefore = callbacks(appLog).filter { $0.hasPrefix("didFinishLaunching") }.count
            let changesBefore = h.client.log.stateChanges(Self.counter).count
            try await rig.push(to: token, json: #"{"aps":{"alert":{"title":"Counter","body":"three"}},"increment":3}"#)
            #expect(
                await eventually(hangGuard: .seconds(20)) {
                    callbacks(appLog).contains(
                        #"didReceiveRemoteNotification {"aps":{"alert":{"body":"three","title":"Counter"}},"increment":3}"#
                    )
                }, "\(logLines(appLog))")
            let launches = callbacks(appLog).filter { $0.hasPrefix("didFinishLaunching") }
            #expect(launches.count == launchesBefore + 1)
            #expect(
                launches.last?.contains(
                    #"remoteNotification={"aps":{"alert":{"body":"three","title":"Counter"}},"increment":3}"#) == true,
                "\(logLines(appLog).suffix(12))")
            try await h.client.log.waitForState(Self.counter, .suspended)
            let changes = Array(h.client.log.stateChanges(Self.counter).dropFirst(changesBefore))
            // The core's launch passes through inactive, then straight to the background.
            #expect(!changes.contains { $0.hasSuffix("->active") }, "\(changes)")
            #expect(changes.prefix(2) == ["not-running->inactive", "inactive->background"], "\(changes)")
        }
    }
}
