import BrokerLink
import FleetProtocol
import Foundation
import Testing
import WebPush

@testable import LifecyclePushGateway

/// The checks of a push request, run on complete requests against a fake broker.
@Suite struct PushRequestTests {
    @Test func acceptedPushIsPublishedAndAnsweredWithLocationAndTTL() async throws {
        let (gateway, publisher, _) = Fixture.gateway()
        let body = Fixture.body(length: 500)
        let response = await gateway.push(
            headers: Fixture.headers(ttl: "3600", urgency: "high", topic: "news-1"), body: body)
        #expect(response.status == 201)
        let message = try #require(publisher.published.first)
        #expect(publisher.published.count == 1)
        #expect(message.device == "device-1")
        #expect(message.envelope.token == Fixture.token)
        #expect(message.envelope.body == body)
        #expect(message.envelope.ttl == 3600)
        #expect(message.envelope.urgency == .high)
        #expect(message.envelope.topic == "news-1")
        #expect(message.envelope.received == 1_767_225_600_000)
        #expect(UUID(uuidString: message.envelope.id) != nil)
        #expect(response.header("Location") == "\(Fixture.publicURL)/message/\(message.envelope.id)")
        #expect(response.header("TTL") == "3600")
    }

    @Test func eachMessageHasItsOwnID() async {
        let (gateway, publisher, _) = Fixture.gateway()
        _ = await gateway.push()
        _ = await gateway.push()
        #expect(Set(publisher.published.map(\.envelope.id)).count == 2)
    }

    @Test(arguments: [
        "short", "tok_0123456789a", String(repeating: "a", count: 101), "tok_0123456789abcdef=", "tok 0123456789abcdef",
        "tok/0123456789abcdef", "tok_0123456789abcdéf", "",
    ])
    func malformedTokensAreNotFound(token: String) async {
        let (gateway, publisher, _) = Fixture.gateway()
        #expect(await gateway.push(token).status == 404)
        #expect(publisher.published.isEmpty)
    }

    @Test func tokenSyntaxBounds() {
        #expect(PushRegistrationRecord.isValidToken(String(repeating: "A", count: 16)))
        #expect(PushRegistrationRecord.isValidToken(String(repeating: "_", count: 100)))
        #expect(!PushRegistrationRecord.isValidToken(String(repeating: "A", count: 15)))
        #expect(!PushRegistrationRecord.isValidToken(String(repeating: "A", count: 101)))
        #expect(!PushRegistrationRecord.isValidToken("0123456789abcdef+"))
    }

    @Test func unknownTokenIsNotFoundOnceLoadedButUnavailableWhileLoading() async {
        let (gateway, _, table) = Fixture.gateway()
        #expect(await gateway.push(Fixture.otherToken).status == 404)
        table.beginResync()
        let loading = await gateway.push(Fixture.otherToken)
        #expect(loading.status == 503)
        #expect(loading.header("Retry-After") != nil)
        // A known token is still served while the registrations reload.
        #expect(await gateway.push().status == 201)
    }

    @Test(arguments: [nil, "", "abc", "-1", "1.5", "+5", "0x10", " "])
    func missingOrInvalidTTLIsBadRequest(ttl: String?) async {
        let (gateway, publisher, _) = Fixture.gateway()
        let response = await gateway.push(headers: Fixture.headers(ttl: ttl))
        #expect(response.status == 400)
        #expect(response.contentType.hasPrefix("text/plain"))
        #expect(response.body.hasSuffix("\n") && response.body.dropLast().contains("TTL"))
        #expect(publisher.published.isEmpty)
    }

    @Test func repeatedTTLIsBadRequest() async {
        let (gateway, _, _) = Fixture.gateway()
        let headers = RequestHeaders([("TTL", "1"), ("TTL", "2"), ("Content-Encoding", "aes128gcm")])
        #expect(await gateway.push(headers: headers).status == 400)
    }

    @Test func zeroTTLIsAcceptedAndAHugeOneIsShortened() async throws {
        let (gateway, publisher, _) = Fixture.gateway()
        #expect(await gateway.push(headers: Fixture.headers(ttl: "0")).status == 201)
        let huge = await gateway.push(headers: Fixture.headers(ttl: "99999999999999999999999"))
        #expect(huge.status == 201)
        #expect(huge.header("TTL") == String(PushEnvelope.maximumTTL))
        #expect(publisher.published.last?.envelope.ttl == PushEnvelope.maximumTTL)
    }

    @Test(arguments: ["urgent", "HIGH", "very low", ""])
    func unknownUrgencyIsBadRequest(urgency: String) async {
        let (gateway, _, _) = Fixture.gateway()
        #expect(await gateway.push(headers: Fixture.headers(urgency: urgency)).status == 400)
    }

    @Test(arguments: PushEnvelope.Urgency.allCases)
    func everyUrgencyIsForwarded(urgency: PushEnvelope.Urgency) async {
        let (gateway, publisher, _) = Fixture.gateway()
        #expect(await gateway.push(headers: Fixture.headers(urgency: urgency.rawValue)).status == 201)
        #expect(publisher.published.first?.envelope.urgency == urgency)
    }

    @Test func absentUrgencyIsNormal() async {
        let (gateway, publisher, _) = Fixture.gateway()
        #expect(await gateway.push().status == 201)
        #expect(publisher.published.first?.envelope.urgency == .normal)
    }

    @Test(arguments: [String(repeating: "t", count: 33), "a.b", "news/1", "ümlaut", ""])
    func invalidTopicIsBadRequest(topic: String) async {
        let (gateway, _, _) = Fixture.gateway()
        #expect(await gateway.push(headers: Fixture.headers(topic: topic)).status == 400)
    }

    @Test func longestTopicIsAccepted() async {
        let (gateway, publisher, _) = Fixture.gateway()
        let topic = String(repeating: "T", count: 32)
        #expect(await gateway.push(headers: Fixture.headers(topic: topic)).status == 201)
        #expect(publisher.published.first?.envelope.topic == topic)
    }

    @Test(arguments: [nil, "aesgcm", "gzip", "aes128gcm, gzip"])
    func otherContentEncodingsAreUnsupported(encoding: String?) async {
        let (gateway, _, _) = Fixture.gateway()
        let response = await gateway.push(headers: Fixture.headers(encoding: encoding))
        #expect(response.status == 415)
        #expect(response.body.contains("aes128gcm"))
    }

    @Test func contentEncodingIsCaseInsensitive() async {
        let (gateway, _, _) = Fixture.gateway()
        #expect(await gateway.push(headers: Fixture.headers(encoding: "AES128GCM")).status == 201)
    }

    @Test func declaredLengthOverTheLimitIsRejectedFromTheHead() {
        let (gateway, _, _) = Fixture.gateway()
        let over = gateway.admit(token: Fixture.token, headers: Fixture.headers(length: 4097))
        #expect(over.rejection?.status == 413)
        let limit = gateway.admit(token: Fixture.token, headers: Fixture.headers(length: 4096))
        #expect(limit.rejection == nil)
    }

    @Test func bodySizeLimits() async {
        let (gateway, publisher, _) = Fixture.gateway()
        #expect(await gateway.push(body: Fixture.body(length: 4097)).status == 413)
        #expect(await gateway.push(body: Fixture.body(length: 4096)).status == 201)
        #expect(await gateway.push(body: Fixture.body(length: 103)).status == 201)
        #expect(await gateway.push(body: Fixture.body(length: 102)).status == 400)
        #expect(await gateway.push(body: []).status == 400)
        #expect(publisher.published.map(\.envelope.body.count) == [4096, 103])
    }

    @Test func malformedAES128GCMHeadersAreBadRequest() async {
        let (gateway, _, _) = Fixture.gateway()
        #expect(await gateway.push(body: Fixture.body(idlen: 64)).status == 400)
        #expect(await gateway.push(body: Fixture.body(idlen: 0)).status == 400)
        #expect(await gateway.push(body: Fixture.body(recordSize: 17)).status == 400)
    }

    @Test func aRealEncryptedBodyIsForwardedUnchangedAndStillDecrypts() async throws {
        let (gateway, publisher, _) = Fixture.gateway()
        let (body, keys) = try Fixture.encryptedBody()
        #expect(await gateway.push(body: body).status == 201)
        let forwarded = try #require(publisher.published.first).envelope.body
        #expect(forwarded == body)
        let plaintext = try WebPushEncryption.decrypt(Data(forwarded), keys: keys)
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
    }

    @Test func brokerDownIsServiceUnavailable() async {
        let (gateway, publisher, _) = Fixture.gateway()
        publisher.brokerStatus = .connecting
        let response = await gateway.push()
        #expect(response.status == 503)
        #expect(response.header("Retry-After") != nil)
        #expect(publisher.published.isEmpty)
    }

    @Test func failedPublishIsServiceUnavailable() async {
        let (gateway, publisher, _) = Fixture.gateway()
        publisher.fail(with: "connection lost")
        let response = await gateway.push()
        #expect(response.status == 503)
        #expect(response.header("Retry-After") != nil)
    }
}

extension AdmissionResult {
    /// The rejecting response, or `nil` when admitted.
    var rejection: GatewayResponse? {
        if case .rejected(let response) = self { return response }
        return nil
    }
}
