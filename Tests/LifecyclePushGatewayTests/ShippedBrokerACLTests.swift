import BrokerTestSupport
import Foundation
import SystemdBusTesting
import Testing

/// The mosquitto ACL the package ships (dist/examples/mosquitto/applifecycle.acl), in a real
/// mosquitto: each identity has least privilege.
///
/// Whether a QoS 1 publish was refused is proven by order, not by waiting: mosquitto_pub exits
/// after the broker's PUBACK, which the broker sends after it has routed (or dropped) the
/// message, so a message the broker let through reaches a subscriber before a marker published
/// afterwards by an identity that may publish there.
@Suite("The shipped broker ACL: least privilege for devices, the gateway and operators")
struct ShippedBrokerACLTests {
    private func broker() throws -> MosquittoBroker {
        try MosquittoBroker(
            users: ["gateway": "gateway-secret", "operator": "operator-secret", "device-a": "a", "device-b": "b"],
            acl: MosquittoBroker.shippedACL())
    }

    /// Publishes `forged` on `forbidden.topic` as `forbidden.user`, which the ACL must keep from
    /// `subscriber` (by refusing the publish or the delivery), then `marker` on `allowed.topic` as
    /// `allowed.user`, and returns what `subscriber` received once the marker arrived.
    private func received(
        on broker: MosquittoBroker, subscriber: String, filter: String, forbidden: (user: String, topic: String),
        allowed: (user: String, topic: String)
    ) async throws -> [String] {
        let listener = try MosquittoClientTool(broker: broker, username: subscriber).startSubscriber(filter: filter)
        defer { listener.stop() }
        #expect(await listener.waitUntilSubscribed())
        let sent = try await MosquittoClientTool(broker: broker, username: forbidden.user)
            .publish(topic: forbidden.topic, message: "forged")
        #expect(sent.status == 0, "\(sent.output)")
        let marker = try await MosquittoClientTool(broker: broker, username: allowed.user)
            .publish(topic: allowed.topic, message: "marker")
        #expect(marker.status == 0, "\(marker.output)")
        _ = await eventually(hangGuard: .seconds(5)) { listener.messages.contains { $0.hasSuffix(" marker") } }
        return listener.messages
    }

    @Test func aDeviceCannotPublishToItsOwnPushTopicAndTheGatewayCan() async throws {
        let broker = try broker()
        let push = "applifecycle/v1/device-a/push"
        let messages = try await received(
            on: broker, subscriber: "device-a", filter: push, forbidden: ("device-a", push), allowed: ("gateway", push))
        #expect(messages == ["\(push) marker"])
    }

    @Test func aDeviceWritesOnlyItsOwnRegistrationsWhichTheGatewayReads() async throws {
        let broker = try broker()
        let messages = try await received(
            on: broker, subscriber: "gateway", filter: "applifecycle/v1/+/registrations/+",
            forbidden: ("device-a", "applifecycle/v1/device-b/registrations/token"),
            allowed: ("device-a", "applifecycle/v1/device-a/registrations/token"))
        #expect(messages == ["applifecycle/v1/device-a/registrations/token marker"])
    }

    @Test func theGatewayCannotForgeADevicesState() async throws {
        let broker = try broker()
        let state = "applifecycle/v1/device-a/apps/org.example.Counter/state"
        let messages = try await received(
            on: broker, subscriber: "operator", filter: "applifecycle/v1/#", forbidden: ("gateway", state),
            allowed: ("device-a", state))
        #expect(messages == ["\(state) marker"])
    }

    @Test func anOperatorReadsButCannotPush() async throws {
        let broker = try broker()
        let push = "applifecycle/v1/device-a/push"
        let messages = try await received(
            on: broker, subscriber: "device-a", filter: push, forbidden: ("operator", push), allowed: ("gateway", push))
        #expect(messages == ["\(push) marker"])
    }

    @Test func aDeviceReceivesNoOtherDevicesPushes() async throws {
        let broker = try broker()
        // mosquitto 2.0 grants the subscription and filters each message by the ACL.
        let messages = try await received(
            on: broker, subscriber: "device-a", filter: "applifecycle/v1/+/push",
            forbidden: ("gateway", "applifecycle/v1/device-b/push"),
            allowed: ("gateway", "applifecycle/v1/device-a/push"))
        #expect(messages == ["applifecycle/v1/device-a/push marker"])
    }
}
