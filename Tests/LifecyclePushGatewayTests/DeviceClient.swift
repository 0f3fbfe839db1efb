import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Logging
import SystemdBus
import SystemdBusTesting

/// A device of the fleet for the tests: a BrokerConnection logged in as a device user, subscribed
/// to its own `push` topic, recording what arrives.
final class DeviceClient: Sendable {
    let loop: EventLoop
    let connection: BrokerConnection
    let probe: ConnectionProbe
    let topics: FleetTopics

    /// Connects as `device` and returns once its subscription is known to be in place (a marker the
    /// gateway's user published to its push topic came back).
    init(broker: MosquittoBroker, device: String) async throws {
        topics = try FleetTopics(device: device)
        loop = try EventLoop(name: "test-\(device)")
        var configuration = try BrokerConfiguration(
            url: broker.url, clientID: "test-\(device)", username: device, password: broker.users[device])
        configuration.cleanSession = true
        connection = BrokerConnection(
            configuration: configuration, loop: loop, logger: Logger(label: "BrokerLinkTests"))
        probe = ConnectionProbe(connection)
        try connection.subscribe(topics.push, qos: 1)
        try await connection.start()
        guard await probe.waitForConnections(1, seconds: 10) else {
            throw FixtureError("device \(device) did not connect")
        }
        // Published by the gateway: under the shipped ACL a device may not write its own push topic.
        let marker = "subscribed"
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        let push = topics.push
        guard
            await eventually(
                hangGuard: .seconds(10), pause: .milliseconds(100),
                {
                    if probe.texts.contains(marker) { return true }
                    _ = try? await gateway.publish(topic: push, message: marker)
                    return probe.texts.contains(marker)
                })
        else { throw FixtureError("device \(device) never saw its own subscription work") }
    }

    deinit {
        connection.stop()
        loop.shutdown()
    }

    /// The push envelopes received so far (the subscription markers left out).
    var envelopes: [PushEnvelope] {
        probe.messages.compactMap { try? PushEnvelope.decode($0.payload) }
    }
}
