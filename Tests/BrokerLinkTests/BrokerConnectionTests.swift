import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Foundation
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// Against a real mosquitto (its own port, directory, password file and ACL per test).
@Suite(.serialized) struct BrokerConnectionTests {
    static let users = ["dev1": "pw-dev1", "dev2": "pw-dev2", "gateway": "pw-gateway", "operator": "pw-operator"]

    /// A connection on its own loop; `close()` stops it and shuts the loop down.
    struct Client {
        let loop: EventLoop
        let connection: BrokerConnection
        let probe: ConnectionProbe

        init(
            _ broker: MosquittoBroker, user: String, clientID: String, password: String? = nil,
            will: BrokerWill? = nil, holdAcknowledgements: Bool = false, subscribe filters: [String] = [],
            keepAlive: Int = 30, maximumQueuedPublishes: Int = 1000, cleanSession: Bool = false
        ) async throws {
            loop = try EventLoop(name: "mqtt-\(clientID)")
            var configuration = try BrokerConfiguration(
                url: broker.url, clientID: clientID, username: user,
                password: password ?? broker.users[user])
            configuration.will = will
            configuration.keepAlive = keepAlive
            configuration.cleanSession = cleanSession
            configuration.maximumReconnectDelay = .milliseconds(400)
            configuration.maximumQueuedPublishes = maximumQueuedPublishes
            connection = BrokerConnection(
                configuration: configuration, loop: loop, logger: Logger(label: "BrokerLinkTests"))
            probe = ConnectionProbe(connection, holdAcknowledgements: holdAcknowledgements)
            for filter in filters { try connection.subscribe(filter, qos: 1) }
            try await connection.start()
        }

        func close() {
            connection.stop()
            loop.shutdown()
        }

        func abort() {
            connection.abort()
            loop.shutdown()
        }
    }

    @Test func connectsWithUsernameAndPassword() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let client = try await Client(broker, user: "dev1", clientID: "dev1-connect")
        defer { client.close() }
        #expect(await client.probe.waitForConnections())
        #expect(client.probe.events.first == .connected(sessionPresent: false))

        let wrong = try await Client(broker, user: "dev1", clientID: "dev1-wrong", password: "nope")
        defer { wrong.close() }
        // Refused (5: not authorised), then tried again with backoff: refused again.
        let refusals = await wrong.probe.wait {
            $0.events.filter {
                if case .connectionRefused(let e) = $0 {
                    e.code == .connectionRefused && e.returnCode == 5
                } else {
                    false
                }
            }
            .count >= 2
        }
        #expect(refusals)
        #expect(wrong.probe.connectCount == 0)
    }

    @Test func publishesQoS1AndReceivesInOrder() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        // The device writes its app's notifications; under the shipped ACL the operator reads them.
        let reader = try await Client(broker, user: "operator", clientID: "operator-order", subscribe: [topics.all])
        defer { reader.close() }
        #expect(await reader.probe.waitForConnections())
        #expect(await eventually { brokerLog(broker).contains("Sending SUBACK to operator-order") })
        let client = try await Client(broker, user: "dev1", clientID: "dev1-order")
        defer { client.close() }
        #expect(await client.probe.waitForConnections())
        let topic = try topics.appNotifications("org.example.App")
        for index in 0..<50 {
            client.connection.publish(topic: topic, payload: Array("m\(index)".utf8), qos: 1) { _ in }
        }
        try await client.connection.boundedPublish(topic: topic, payload: Array("last".utf8), qos: 1)
        #expect(await reader.probe.wait { $0.messages.count >= 51 })
        #expect(reader.probe.texts == (0..<50).map { "m\($0)" } + ["last"])
        #expect(reader.probe.messages.allSatisfy { $0.qos == 1 && $0.topic == topic && !$0.retain })
    }

    @Test func aclKeepsDevicesApart() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let dev1 = try FleetTopics(device: "dev1")
        let dev2 = try FleetTopics(device: "dev2")
        let watcher = try MosquittoClientTool(broker: broker, username: "operator").startSubscriber(
            filter: "applifecycle/v1/#")
        #expect(await watcher.waitUntilSubscribed())
        // dev1 subscribes to dev2's topics too: the SUBACK grants it (MQTT 3.1.1), nothing arrives.
        let client = try await Client(broker, user: "dev1", clientID: "dev1-acl", subscribe: [dev1.all, dev2.all])
        defer { client.close() }
        #expect(await client.probe.waitForConnections())
        let dev2Tool = MosquittoClientTool(broker: broker, username: "dev2")
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        // Give the subscriptions time to be in place: a marker the gateway puts on dev1's push topic
        // (the one topic a device reads) comes back.
        #expect(try await gateway.publish(topic: dev1.push, message: "marker0").status == 0)
        #expect(await client.probe.wait { $0.texts.contains("marker0") })
        #expect(try await dev2Tool.publish(topic: dev2.presence, message: "dev2-secret").status == 0)
        #expect(try await gateway.publish(topic: dev2.push, message: "dev2-push").status == 0)
        // dev1 writes to dev2's push topic: the broker acknowledges and drops it.
        try await client.connection.boundedPublish(topic: dev2.push, payload: Array("forged".utf8))
        try await client.connection.boundedPublish(topic: dev1.presence, payload: Array("marker1".utf8))
        #expect(try await gateway.publish(topic: dev1.push, message: "marker2").status == 0)
        #expect(await client.probe.wait { $0.texts.contains("marker2") })
        #expect(await eventually(hangGuard: .seconds(5)) { watcher.messages.contains { $0.hasSuffix("marker1") } })
        #expect(!client.probe.texts.contains("dev2-secret"))
        #expect(!client.probe.texts.contains("dev2-push"))
        #expect(watcher.messages.contains("\(dev2.presence) dev2-secret"))
        #expect(!watcher.messages.contains { $0.contains("forged") })
    }

    @Test func lastWillAfterAbortAndOnlineAfterConnect() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let operatorTool = MosquittoClientTool(broker: broker, username: "operator")
        let client = try await Client(
            broker, user: "dev1", clientID: "dev1-will",
            will: BrokerWill(topic: topics.presence, payload: FleetTopics.offline, qos: 1, retain: true))
        #expect(await client.probe.waitForConnections())
        try await client.connection.boundedPublish(topic: topics.presence, payload: FleetTopics.online, retain: true)
        #expect(
            try await operatorTool.receive(filter: topics.presence, count: 1, retainedOnly: true)
                == ["\(topics.presence) online"])
        client.abort()
        let offline = await eventually(hangGuard: .seconds(5)) {
            (try? await operatorTool.receive(filter: topics.presence, count: 1, timeoutSeconds: 1, retainedOnly: true))
                == ["\(topics.presence) offline"]
        }
        #expect(offline)
    }

    @Test func stopSuppressesTheWill() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let client = try await Client(
            broker, user: "dev1", clientID: "dev1-stop",
            will: BrokerWill(topic: topics.presence, payload: FleetTopics.offline, qos: 1, retain: true))
        #expect(await client.probe.waitForConnections())
        try await client.connection.boundedPublish(topic: topics.presence, payload: FleetTopics.online, retain: true)
        client.close()
        #expect(await client.probe.wait { $0.events.last == .disconnected(.stopped) })
        #expect(
            await eventually {
                (try? String(contentsOfFile: broker.logPath, encoding: .utf8))?.contains(
                    "Client dev1-stop disconnected.") == true
            })
        let retained = try await MosquittoClientTool(broker: broker, username: "operator")
            .receive(filter: topics.presence, count: 1, timeoutSeconds: 1, retainedOnly: true)
        #expect(retained == ["\(topics.presence) online"])
    }

    @Test func persistentSessionGetsWhatWasPublishedWhileAway() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let first = try await Client(broker, user: "dev1", clientID: "dev1-session", subscribe: [topics.push])
        #expect(await first.probe.waitForConnections())
        // The SUBACK is in when a message published now arrives.
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        #expect(try await gateway.publish(topic: topics.push, message: "before").status == 0)
        #expect(await first.probe.wait { $0.texts == ["before"] })
        first.close()
        #expect(await first.probe.wait { $0.events.last == .disconnected(.stopped) })

        for index in 0..<3 {
            #expect(try await gateway.publish(topic: topics.push, message: "away\(index)").status == 0)
        }
        let second = try await Client(broker, user: "dev1", clientID: "dev1-session")
        defer { second.close() }
        #expect(await second.probe.waitForConnections())
        #expect(second.probe.events.first == .connected(sessionPresent: true))
        #expect(await second.probe.wait { $0.messages.count >= 3 })
        #expect(second.probe.texts == ["away0", "away1", "away2"])
    }

    @Test func heldAcknowledgementGatesAndIsRedelivered() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        let first = try await Client(
            broker, user: "dev1", clientID: "dev1-gate", holdAcknowledgements: true, subscribe: [topics.push])
        #expect(await first.probe.waitForConnections())
        // Wait for the SUBACK in the broker's log before publishing.
        #expect(await eventually { brokerLog(broker).contains("Sending SUBACK to dev1-gate") })
        #expect(try await gateway.publish(topic: topics.push, message: "held-1").status == 0)
        #expect(await first.probe.wait { $0.texts == ["held-1"] })
        #expect(try await withDeadline { try await first.connection.outstandingAcknowledgements() } == 1)
        // Gated: a second message is read (it joins the same group commit) but neither is
        // acknowledged: no PUBACK reached the broker.
        #expect(try await gateway.publish(topic: topics.push, message: "held-2").status == 0)
        #expect(await first.probe.wait { $0.texts == ["held-1", "held-2"] })
        #expect(try await withDeadline { try await first.connection.outstandingAcknowledgements() } == 2)
        first.abort()
        // The broker reads the socket in order: a PUBACK written before the abort is in its log
        // before the end of that connection is.
        #expect(
            await eventually { brokerSawTheEnd(of: "dev1-gate", in: brokerLog(broker)) },
            "\(brokerLog(broker).split(separator: "\n").suffix(5))")
        #expect(!brokerLog(broker).contains("Received PUBACK from dev1-gate"))

        // The broker redelivers both (same payloads; packet ids may differ).
        let second = try await Client(broker, user: "dev1", clientID: "dev1-gate", holdAcknowledgements: true)
        #expect(await second.probe.wait { $0.texts == ["held-1", "held-2"] })
        #expect(second.probe.events.first == .connected(sessionPresent: true))
        second.probe.acknowledgeAll()
        #expect(await eventually { brokerLog(broker).contains("Received PUBACK from dev1-gate") })
        #expect(try await withDeadline { try await second.connection.outstandingAcknowledgements() } == 0)
        second.close()
        #expect(await second.probe.wait { $0.events.last == .disconnected(.stopped) })

        // Acknowledged: nothing comes again; a later message does.
        let third = try await Client(broker, user: "dev1", clientID: "dev1-gate")
        defer { third.close() }
        #expect(await third.probe.waitForConnections())
        #expect(try await gateway.publish(topic: topics.push, message: "after").status == 0)
        #expect(await third.probe.wait { $0.texts.contains("after") })
        #expect(third.probe.texts == ["after"])
    }

    @Test func survivesABrokerRestart() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        let client = try await Client(broker, user: "dev1", clientID: "dev1-restart", subscribe: [topics.all])
        defer { client.close() }
        #expect(await client.probe.waitForConnections())
        #expect(await eventually { brokerLog(broker).contains("Sending SUBACK to dev1-restart") })
        for index in 0..<5 { #expect(try await gateway.publish(topic: topics.push, message: "p\(index)").status == 0) }

        broker.stop()
        #expect(await client.probe.wait { if case .disconnected(.lost) = $0.events.last { true } else { false } })
        // Published while the broker is down: queued, sent after it returns.
        let state = try topics.appState("org.example.App")
        let whileDown = ValueRecorder<Result<Void, BrokerError>>()
        client.connection.publish(topic: state, payload: Array("s-down".utf8), retain: true) { whileDown.add($0) }
        // Publishes reach the loop in order: once this round trip is back, it waits in the queue.
        _ = try await client.connection.outstandingAcknowledgements()
        try broker.restart()

        #expect(await client.probe.waitForConnections(2))
        #expect(client.probe.events.contains(.connected(sessionPresent: true)))
        try await whileDown.next("the publish queued while the broker was down", hangGuard: .seconds(5)).get()
        for index in 5..<10 { #expect(try await gateway.publish(topic: topics.push, message: "p\(index)").status == 0) }
        // Its own state comes back to the operator (a device reads only its push topic).
        let expected = Set((0..<10).map { "p\($0)" })
        #expect(await client.probe.wait { expected.isSubset(of: Set($0.texts)) })
        #expect(expected.subtracting(client.probe.texts).isEmpty)
        let retained = try await MosquittoClientTool(broker: broker, username: "operator")
            .receive(filter: state, count: 1, timeoutSeconds: 2, retainedOnly: true)
        #expect(retained == ["\(state) s-down"])
    }

    @Test func resubscribesAfterAReconnectWithoutSession() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        let topics = try FleetTopics(device: "dev1")
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        let client = try await Client(
            broker, user: "dev1", clientID: "dev1-clean", subscribe: [topics.push], cleanSession: true)
        defer { client.close() }
        #expect(await client.probe.waitForConnections())
        try broker.restart()
        #expect(await client.probe.waitForConnections(2))
        #expect(client.probe.events.filter { $0 == .connected(sessionPresent: false) }.count == 2)
        // The broker kept nothing of a clean session: the message arrives only if the connection
        // subscribed again by itself. At least once more: on a loaded machine (CI with other
        // builds running) a keep-alive can lapse and add a reconnect, and a subscription, of its own.
        #expect(
            await eventually { brokerLog(broker).components(separatedBy: "Sending SUBACK to dev1-clean").count >= 3 })
        #expect(try await gateway.publish(topic: topics.push, message: "again").status == 0)
        #expect(await client.probe.wait { $0.texts == ["again"] })
    }

    @Test func queueIsBoundedWhileDisconnected() async throws {
        let broker = try MosquittoBroker(users: Self.users)
        broker.stop()
        let client = try await Client(broker, user: "dev1", clientID: "dev1-queue", maximumQueuedPublishes: 2)
        defer { client.close() }
        let waiting = ValueRecorder<Result<Void, BrokerError>>()
        client.connection.publish(topic: "applifecycle/v1/dev1/push", payload: [1]) { waiting.add($0) }
        client.connection.publish(topic: "applifecycle/v1/dev1/push", payload: [2]) { waiting.add($0) }
        // Publishes reach the loop in order: both wait in the queue when the third is looked at.
        await #expect(throws: BrokerError(.queueFull, "2 publishes are already waiting")) {
            try await client.connection.boundedPublish(topic: "applifecycle/v1/dev1/push", payload: [3])
        }
        await #expect(throws: BrokerError.self) {
            try await client.connection.boundedPublish(topic: "bad/#", payload: [3])
        }
        client.connection.stop()
        await #expect(throws: BrokerError.self) { try await waiting.next("the first publish's end").get() }
        await #expect(throws: BrokerError.self) { try await waiting.next("the second publish's end").get() }
    }
}

/// Whether mosquitto's log shows a client's connection ending (closed, or dropped with an error).
func brokerSawTheEnd(of clientID: String, in log: String) -> Bool {
    log.contains("Client \(clientID) closed its connection") || log.contains("Socket error on client \(clientID),")
        || log.contains("Client \(clientID) disconnected")
}

/// The broker's log so far.
func brokerLog(_ broker: MosquittoBroker) -> String {
    (try? String(contentsOfFile: broker.logPath, encoding: .utf8)) ?? ""
}
