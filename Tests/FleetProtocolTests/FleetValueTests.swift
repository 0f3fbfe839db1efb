import Foundation
import Testing

@testable import FleetProtocol

@Suite struct FleetTopicsTests {
    @Test func buildsTheLayout() throws {
        let topics = try FleetTopics(device: "dev1")
        #expect(topics.push == "applifecycle/v1/dev1/push")
        #expect(topics.presence == "applifecycle/v1/dev1/presence")
        #expect(try topics.appState("org.example.App") == "applifecycle/v1/dev1/apps/org.example.App/state")
        #expect(try topics.appNotifications("a") == "applifecycle/v1/dev1/apps/a/notifications")
        #expect(try topics.registration("tok_1") == "applifecycle/v1/dev1/registrations/tok_1")
        #expect(FleetTopics.offline == Array("offline".utf8))
        #expect(FleetTopics.allRegistrations == "applifecycle/v1/+/registrations/+")
        #expect(FleetTopics.allPresence == "applifecycle/v1/+/presence")
        #expect(FleetTopics.allAppStates == "applifecycle/v1/+/apps/+/state")
    }

    @Test func rejectsBadLevels() throws {
        let topics = try FleetTopics(device: "dev1")
        for bad in ["", "a/b", "a+", "#", "a\u{0}b", "a\nb", String(repeating: "x", count: 129)] {
            #expect(throws: FleetProtocolError.self) { try topics.appState(bad) }
            #expect(throws: FleetProtocolError.self) { try topics.registration(bad) }
        }
        for bad in ["", "a/b", "+", "#", "..", "dé", String(repeating: "x", count: 65)] {
            #expect(throws: FleetProtocolError.self) { try FleetTopics(device: bad) }
        }
    }

    @Test func parsesTopicsBack() {
        #expect(FleetTopics.parse("applifecycle/v1/d/push") == .init(device: "d", kind: .push, key: nil))
        #expect(FleetTopics.parse("applifecycle/v1/d/presence") == .init(device: "d", kind: .presence, key: nil))
        #expect(
            FleetTopics.parse("applifecycle/v1/d/apps/a.b/state") == .init(device: "d", kind: .appState, key: "a.b"))
        #expect(
            FleetTopics.parse("applifecycle/v1/d/apps/a/notifications")
                == .init(device: "d", kind: .appNotifications, key: "a"))
        #expect(
            FleetTopics.parse("applifecycle/v1/d/registrations/t") == .init(device: "d", kind: .registration, key: "t"))
        for bad in [
            "applifecycle/v1/d", "applifecycle/v2/d/push", "applifecycle/v1/+/push", "applifecycle/v1/d/push/x",
            "applifecycle/v1/d/apps//state", "applifecycle/v1/d/apps/a/other", "applifecycle/v1/d/registrations/",
            "", "/",
        ] {
            #expect(FleetTopics.parse(bad) == nil, "\(bad)")
        }
    }
}

@Suite struct DeviceIdentityTests {
    @Test func derivesAStableAppSpecificID() throws {
        let id = try DeviceIdentity.derived()
        #expect(id.count == 32 && id.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        #expect(try DeviceIdentity.derived() == id)
        #expect(try DeviceIdentity.derived(applicationID: DeviceIdentity.fleetApplicationID.uppercased()) == id)
        let other = try DeviceIdentity.derived(applicationID: "00112233-4455-6677-8899-aabbccddeeff")
        #expect(other != id)
        let machineID = (try? String(contentsOfFile: "/etc/machine-id", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(id != machineID && other != machineID)
        #expect(DeviceIdentity.isValid(id))
    }

    @Test func rejectsBadApplicationIDs() {
        for bad in ["", "xyz", String(repeating: "g", count: 32), String(repeating: "a", count: 31)] {
            #expect(throws: FleetProtocolError.self) { try DeviceIdentity.derived(applicationID: bad) }
        }
    }

    @Test func validatesIDs() {
        #expect(DeviceIdentity.isValid("dev-1_a.B"))
        for bad in ["", "a/b", "a+b", "a#", "a b", "é", ".", String(repeating: "a", count: 65)] {
            #expect(!DeviceIdentity.isValid(bad), "\(bad)")
        }
    }
}

@Suite struct PushEnvelopeTests {
    static let id = "6F9619FF-8B86-D011-B42D-00C04FC964FF"

    @Test func roundTrips() throws {
        let envelope = try PushEnvelope(
            id: Self.id, token: "tok", ttl: 60, urgency: .veryLow, topic: "news", received: 1_000,
            body: [0, 1, 2, 254, 255])
        let json = try envelope.jsonPayload()
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains("\"v\":1") && text.contains("\"body\":\"AAEC_v8\"") && text.contains("\"very-low\""))
        #expect(try PushEnvelope.decode(json) == envelope)
        #expect(envelope.expiresAt == 61_000)
    }

    @Test(arguments: [
        #"{"v":2,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"low","received":1,"body":""}"#,
        #"{"v":1,"id":"nope","token":"t","ttl":1,"urgency":"low","received":1,"body":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"a/b","ttl":1,"urgency":"low","received":1,"body":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":-1,"urgency":"low","received":1,"body":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"urgent","received":1,"body":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"low","received":1,"body":"AA=="}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"low","received":1,"body":"A+"}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"low","topic":"a b","received":1,"body":""}"#,
        #"{"v":1,"id":"6F9619FF-8B86-D011-B42D-00C04FC964FF","token":"t","ttl":1,"urgency":"low","received":-5,"body":""}"#,
        #"{"v":1,"token":"t","ttl":1,"urgency":"low","received":1,"body":""}"#,
        #"not json"#,
    ])
    func rejectsInvalidEnvelopes(json: String) {
        #expect(throws: FleetProtocolError.self) { try PushEnvelope.decode(Array(json.utf8)) }
    }
}
