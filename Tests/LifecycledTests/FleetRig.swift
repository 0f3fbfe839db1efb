import AppLifecycle
import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Foundation
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import WebPush

/// A real mosquitto broker for lifecycled's push tests, a `lifecycled.conf` that points a device at
/// it, and a client with the gateway's credentials that publishes pushes exactly as
/// lifecycle-push-gateway does (a ``PushEnvelope`` with QoS 1 on the device's push topic).
final class FleetRig: Sendable {
    let broker: MosquittoBroker
    let device: String
    let configurationPath: String
    let topics: FleetTopics
    let gateway: BrokerConnection
    let gatewayLoop: EventLoop
    let directory: TemporaryDirectory

    init(device: String = "device-one", endpointURL: String = "http://127.0.0.1:9") async throws {
        self.device = device
        broker = try MosquittoBroker(users: [
            device: "pw-\(device)", "gateway": "pw-gateway", "operator": "pw-operator",
        ])
        directory = try TemporaryDirectory(prefix: "fleet-rig")
        configurationPath = try directory.write(
            "lifecycled.conf",
            """
            # A device of the test fleet.
            [broker]
            url = \(broker.url)
            username = \(device)
            password = pw-\(device)
            device-id = \(device)
            keepalive = 10

            [push]
            endpoint-url = \(endpointURL)
            """)
        topics = try FleetTopics(device: device)
        gatewayLoop = try EventLoop(name: "test-gateway")
        var configuration = try BrokerConfiguration(
            url: broker.url, clientID: "test-gateway-\(UUID().uuidString.prefix(8))", username: "gateway",
            password: "pw-gateway")
        configuration.cleanSession = true
        gateway = BrokerConnection(
            configuration: configuration, loop: gatewayLoop, logger: Logger(label: "FleetRig.gateway"))
        let connected = self.connected
        gateway.setEventHandler { event in
            if case .connected = event { connected.set(true) } else { connected.set(false) }
        }
        try await gateway.start()
    }

    private let connected = ConnectedFlag()
    /// Whether the gateway's client is connected now.
    var gatewayConnected: Bool { connected.value }

    deinit {
        gateway.stop()
        gatewayLoop.shutdown()
        directory.remove()
    }

    /// Publishes a push for an endpoint token; returns its id.
    @discardableResult
    func push(
        token: String, body: [UInt8], id: String = UUID().uuidString.lowercased(), ttl: Int = 3600,
        urgency: PushEnvelope.Urgency = .normal, topic: String? = nil, receivedMillisecondsAgo: Int64 = 0
    ) async throws -> String {
        let envelope = try PushEnvelope(
            id: id, token: token, ttl: ttl, urgency: urgency, topic: topic,
            received: Int64(Date().timeIntervalSince1970 * 1000) - receivedMillisecondsAgo, body: body)
        try await gateway.publish(topic: topics.push, payload: try envelope.jsonPayload(), qos: 1)
        return id
    }

    /// Publishes raw bytes on the device's push topic (a malformed push).
    func pushRaw(_ payload: [UInt8]) async throws {
        try await gateway.publish(topic: topics.push, payload: payload, qos: 1)
    }

    /// A push for a device token, encrypted to its keys (RFC 8291), as an app server sends it.
    @discardableResult
    func push(to deviceToken: Data, json: String, id: String = UUID().uuidString.lowercased()) async throws -> String {
        let subscription = try RemoteNotificationDeviceToken(deviceToken: deviceToken)
        let body = try WebPushEncryption.encrypt(
            Data(json.utf8), receiverPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        return try await push(token: subscription.endpoint.lastPathComponent, body: Array(body), id: id)
    }
}

/// Whether the gateway's client is connected, set on its loop thread, read by the test.
final class ConnectedFlag: Sendable {
    private let state = Mutex(false)
    func set(_ value: Bool) { state.withLock { $0 = value } }
    var value: Bool { state.withLock { $0 } }
}
