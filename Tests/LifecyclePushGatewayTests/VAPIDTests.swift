import BrokerLink
import Foundation
import Logging
import Synchronization
import Testing
import WebPush

@testable import LifecyclePushGateway

/// RFC 8292 at the gateway: required with a registered key (401 without, 403 for another key),
/// checked when present without one.
@Suite struct VAPIDTests {
    let serverKey = VAPIDSigningKey()

    func header(
        key: VAPIDSigningKey? = nil, audience: String = Fixture.publicURL, expiresIn: Duration = .seconds(3600),
        now: Date = Fixture.now
    ) throws -> String {
        try (key ?? serverKey).authorization(
            audience: audience, subject: "mailto:ops@example.org", expiresIn: expiresIn, now: now)
    }

    @Test func registeredKeyAndAValidTokenIsAccepted() async throws {
        let (gateway, publisher, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let response = await gateway.push(headers: Fixture.headers(authorization: try header()))
        #expect(response.status == 201)
        #expect(publisher.published.count == 1)
    }

    @Test func registeredKeyWithoutAuthorizationIsUnauthorized() async {
        let (gateway, publisher, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let response = await gateway.push()
        #expect(response.status == 401)
        #expect(response.header("WWW-Authenticate") == "vapid")
        #expect(publisher.published.isEmpty)
    }

    @Test func anotherServersKeyIsForbidden() async throws {
        let (gateway, publisher, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let response = await gateway.push(headers: Fixture.headers(authorization: try header(key: VAPIDSigningKey())))
        #expect(response.status == 403)
        #expect(publisher.published.isEmpty)
    }

    @Test func wrongAudienceIsUnauthorized() async throws {
        let (gateway, _, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let response = await gateway.push(
            headers: Fixture.headers(authorization: try header(audience: "https://push.example.org")))
        #expect(response.status == 401)
    }

    @Test func audienceIsComparedAsAnOrigin() async throws {
        let (gateway, _, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let response = await gateway.push(
            headers: Fixture.headers(authorization: try header(audience: "HTTPS://Push.Example.net:443")))
        #expect(response.status == 201)
    }

    /// A header verified once is taken again without a new verification only while its token is
    /// unexpired: past its `exp` (and the minute of skew verification allows) it is refused.
    @Test func aVerifiedTokenIsReusedOnlyUntilItsExpiry() async throws {
        let table = RegistrationTable()
        table.apply(
            device: "device-1", token: Fixture.token, payload: Fixture.registration(vapid: serverKey.publicKeyBase64URL)
        )
        table.finishResync()
        let clock = Mutex(Fixture.now)
        let gateway = PushGateway(
            registrations: table, publisher: FakePublisher(), publicURL: Fixture.publicURL,
            now: { clock.withLock { $0 } }, logger: Logger(label: "lifecycle-push-gateway"))
        let authorization = try header(expiresIn: .seconds(600))
        #expect(await gateway.push(headers: Fixture.headers(authorization: authorization)).status == 201)
        clock.withLock { $0 = Fixture.now.addingTimeInterval(590) }
        #expect(await gateway.push(headers: Fixture.headers(authorization: authorization)).status == 201)
        clock.withLock { $0 = Fixture.now.addingTimeInterval(600 + 61) }
        #expect(await gateway.push(headers: Fixture.headers(authorization: authorization)).status == 401)
        // Another server's key, under the cache too: the registered key is checked every time.
        let other = try header(key: VAPIDSigningKey(), expiresIn: .seconds(600), now: clock.withLock { $0 })
        #expect(await gateway.push(headers: Fixture.headers(authorization: other)).status == 403)
        #expect(await gateway.push(headers: Fixture.headers(authorization: other)).status == 403)
    }

    @Test func expiredTokenIsUnauthorized() async throws {
        let (gateway, _, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        let stale = try header(expiresIn: .seconds(60), now: Fixture.now.addingTimeInterval(-3600))
        #expect(await gateway.push(headers: Fixture.headers(authorization: stale)).status == 401)
    }

    @Test func tamperedTokenIsUnauthorized() async throws {
        let (gateway, _, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        var tampered = try header()
        // Change one character of the signature (just before ", k=").
        let comma = tampered.firstIndex(of: ",")!
        let index = tampered.index(before: comma)
        tampered.replaceSubrange(index...index, with: tampered[index] == "A" ? "B" : "A")
        #expect(await gateway.push(headers: Fixture.headers(authorization: tampered)).status == 401)
    }

    @Test(arguments: ["Bearer abc", "vapid", "WebPush eyJ.eyJ.sig", "vapid t=a.b.c, k=BAAA"])
    func malformedAuthorizationIsUnauthorized(value: String) async {
        let (gateway, _, _) = Fixture.gateway(vapid: serverKey.publicKeyBase64URL)
        #expect(await gateway.push(headers: Fixture.headers(authorization: value)).status == 401)
    }

    @Test func withoutARegisteredKeyAValidTokenIsAcceptedAndABadOneIsNot() async throws {
        let (gateway, publisher, _) = Fixture.gateway(vapid: nil)
        #expect(await gateway.push(headers: Fixture.headers(authorization: try header())).status == 201)
        #expect(await gateway.push(headers: Fixture.headers(authorization: "vapid t=x.y.z, k=abc")).status == 401)
        #expect(await gateway.push().status == 201)
        #expect(publisher.published.count == 2)
    }
}
