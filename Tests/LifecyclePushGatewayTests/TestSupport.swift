import BrokerLink
import FleetProtocol
import Foundation
import Logging
import Synchronization
import WebPush

@testable import LifecyclePushGateway

/// A broker stand-in: a settable status, the published messages, an optional failure.
final class FakePublisher: PushPublisher {
    private let state = Mutex((status: BrokerStatus.connected, published: [OutgoingPush](), failure: String?.none))

    var brokerStatus: BrokerStatus {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    var published: [OutgoingPush] { state.withLock { $0.published } }

    func fail(with message: String?) { state.withLock { $0.failure = message } }

    func publish(_ message: OutgoingPush) async throws {
        try state.withLock { state in
            if let failure = state.failure { throw FakeFailure(message: failure) }
            state.published.append(message)
        }
    }

    struct FakeFailure: Error { var message: String }
}

/// Values and builders the gateway tests share.
enum Fixture {
    static let publicURL = "https://push.example.net"
    static let token = "tok_0123456789abcdef-AB"
    static let otherToken = "tok_fedcba9876543210-XY"
    static let now = Date(timeIntervalSince1970: 1_767_225_600)

    /// A registration record's JSON.
    static func registration(token: String = token, app: String = "org.example.App", vapid: String? = nil) -> [UInt8] {
        Array(PushRegistrationRecord(token: token, app: app, vapid: vapid, created: 1_767_225_000_000).encoded())
    }

    /// A body with the shape of an aes128gcm message (salt, rs 4096, idlen 65, key id, record).
    static func body(length: Int = 103 + 16, idlen: UInt8 = 65, recordSize: UInt32 = 4096) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xA5, count: 16)
        bytes += withUnsafeBytes(of: recordSize.bigEndian) { Array($0) }
        bytes.append(idlen)
        bytes.append(0x04)
        bytes += [UInt8](repeating: 0x11, count: 64)
        while bytes.count < length { bytes.append(UInt8(truncatingIfNeeded: bytes.count)) }
        return Array(bytes.prefix(length))
    }

    /// A real RFC 8291 message for a fresh subscription.
    static func encryptedBody(_ text: String = "When I grow up, I want to be a watermelon") throws -> (
        body: [UInt8], keys: WebPushKeys
    ) {
        let keys = WebPushKeys()
        let body = try WebPushEncryption.encrypt(
            Data(text.utf8), receiverPublicKey: keys.publicKey, authSecret: keys.authSecret)
        return (Array(body), keys)
    }

    /// The headers of a well-formed push request.
    static func headers(
        ttl: String? = "60", urgency: String? = nil, topic: String? = nil, encoding: String? = "aes128gcm",
        length: Int? = nil, authorization: String? = nil
    ) -> RequestHeaders {
        var fields: [(String, String)] = []
        if let ttl { fields.append(("TTL", ttl)) }
        if let urgency { fields.append(("Urgency", urgency)) }
        if let topic { fields.append(("Topic", topic)) }
        if let encoding { fields.append(("Content-Encoding", encoding)) }
        if let length { fields.append(("Content-Length", String(length))) }
        if let authorization { fields.append(("Authorization", authorization)) }
        return RequestHeaders(fields)
    }

    /// A gateway over a fake broker, with `token` registered by `device-1` (and loaded).
    static func gateway(vapid: String? = nil) -> (PushGateway, FakePublisher, RegistrationTable) {
        let table = RegistrationTable()
        table.apply(device: "device-1", token: token, payload: registration(vapid: vapid))
        table.finishResync()
        let publisher = FakePublisher()
        let gateway = PushGateway(
            registrations: table, publisher: publisher, publicURL: publicURL, now: { now },
            logger: Logger(label: "lifecycle-push-gateway"))
        return (gateway, publisher, table)
    }
}

extension PushGateway {
    /// A push request to `token` with `headers` and `body`.
    func push(
        _ token: String = Fixture.token, headers: RequestHeaders = Fixture.headers(), body: [UInt8] = Fixture.body()
    )
        async -> GatewayResponse
    {
        await handle(method: "POST", path: "/push/\(token)", headers: headers, body: body)
    }
}
