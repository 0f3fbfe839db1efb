import BrokerLink
import FleetProtocol
import Foundation
import Testing

@testable import LifecyclePushGateway

/// The token map the broker's retained registrations build.
@Suite struct RegistrationTableTests {
    @Test func addUpdateAndRemoveByEmptyPayload() {
        let table = RegistrationTable()
        #expect(table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration()) == .added)
        #expect(table.lookup(Fixture.token)?.device == "d1")
        #expect(table.lookup(Fixture.token)?.record.app == "org.example.App")
        let key = "B" + String(repeating: "A", count: 86)
        #expect(table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration(vapid: key)) == .updated)
        #expect(table.lookup(Fixture.token)?.record.vapid == key)
        #expect(table.count == 1)
        #expect(table.apply(device: "d1", token: Fixture.token, payload: []) == .removed)
        #expect(table.lookup(Fixture.token) == nil)
        #expect(table.apply(device: "d1", token: Fixture.token, payload: []) == .removedUnknown)
    }

    @Test func theFirstDeviceKeepsAToken() {
        let table = RegistrationTable()
        table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration())
        #expect(
            table.apply(device: "d2", token: Fixture.token, payload: Fixture.registration(app: "org.evil.App"))
                == .conflict(owner: "d1"))
        #expect(table.apply(device: "d2", token: Fixture.token, payload: []) == .conflict(owner: "d1"))
        #expect(table.lookup(Fixture.token)?.device == "d1")
        #expect(table.lookup(Fixture.token)?.record.app == "org.example.App")
    }

    @Test func invalidRecordsAreRejectedAndKeepWhatIsStored() {
        let table = RegistrationTable()
        table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration())
        let cases: [[UInt8]] = [
            Array("not json".utf8),
            Array(#"{"v":2,"token":"\#(Fixture.token)","app":"org.example.App","created":1}"#.utf8),
            Array(#"{"v":1,"token":"\#(Fixture.token)","app":"nodots","created":1}"#.utf8),
            Array(#"{"v":1,"token":"\#(Fixture.token)","app":"org.example.App","vapid":"short","created":1}"#.utf8),
            Array(#"{"v":1,"token":"\#(Fixture.token)","app":"org.example.App","created":-1}"#.utf8),
            Array(#"{"v":1,"token":"\#(Fixture.token)","app":"org.example.App"}"#.utf8),
            Fixture.registration(token: Fixture.otherToken),
        ]
        for payload in cases {
            guard case .rejected = table.apply(device: "d1", token: Fixture.token, payload: payload) else {
                Issue.record("accepted \(String(decoding: payload, as: UTF8.self))")
                continue
            }
        }
        #expect(table.lookup(Fixture.token)?.record.app == "org.example.App")
        guard case .rejected = table.apply(device: "d1", token: "bad+token", payload: Fixture.registration()) else {
            Issue.record("a malformed topic token was accepted")
            return
        }
    }

    @Test func aResyncDropsWhatTheBrokerNoLongerHas() {
        let table = RegistrationTable()
        #expect(table.isSyncing)
        table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration())
        table.apply(device: "d2", token: Fixture.otherToken, payload: Fixture.registration(token: Fixture.otherToken))
        #expect(table.finishResync() == 0)
        #expect(!table.isSyncing)
        table.beginResync()
        #expect(table.isSyncing)
        table.apply(device: "d1", token: Fixture.token, payload: Fixture.registration())
        // Until the resync ends, the old record is still served.
        #expect(table.lookup(Fixture.otherToken) != nil)
        #expect(table.finishResync() == 1)
        #expect(table.lookup(Fixture.otherToken) == nil)
        #expect(table.lookup(Fixture.token) != nil)
    }

    @Test func recordJSONRoundTripsWithTheDocumentedKeys() throws {
        let key = "B" + String(repeating: "A", count: 86)
        let record = PushRegistrationRecord(token: Fixture.token, app: "org.example.App", vapid: key, created: 42)
        let json = String(decoding: record.encoded(), as: UTF8.self)
        #expect(
            json == #"{"app":"org.example.App","created":42,"token":"\#(Fixture.token)","v":1,"vapid":"\#(key)"}"#)
        #expect(try PushRegistrationRecord.decode(Array(json.utf8)) == record)
        let withoutKey = PushRegistrationRecord(token: Fixture.token, app: "org.example.App", created: 42)
        #expect(!String(decoding: withoutKey.encoded(), as: UTF8.self).contains("vapid"))
    }

    @Test func vapidKeyForm() {
        #expect(PushRegistrationRecord.isValidVAPIDKey("B" + String(repeating: "A", count: 86)))
        #expect(!PushRegistrationRecord.isValidVAPIDKey("A" + String(repeating: "A", count: 86)))  // not 0x04
        #expect(!PushRegistrationRecord.isValidVAPIDKey("B" + String(repeating: "A", count: 85) + "B"))  // stray bits
        #expect(!PushRegistrationRecord.isValidVAPIDKey("B" + String(repeating: "A", count: 85)))
        #expect(!PushRegistrationRecord.isValidVAPIDKey("B" + String(repeating: "A", count: 85) + "="))
    }
}
