import BrokerLink
import FleetProtocol
import FoundationEssentials
import Logging
import WebPush

/// The gateway's request logic, without NIO: routing, the checks of a push request's head and
/// body, VAPID, the publish and the answers.
///
/// The HTTP handler calls ``admit(token:headers:)`` when a request's head has arrived (so a bad
/// request is answered before its body is read), ``checkBody(_:)`` at its end, and
/// ``deliver(_:body:)`` to publish; ``handle(method:path:headers:body:)`` runs all of them for one
/// complete request (tests, and routes without a body). Every accepted or rejected push is logged
/// in one line, with the token shortened (it is a capability) and never the body.
package struct PushGateway: Sendable {
    /// The largest body RFC 8030 push services must accept, and the most this one takes.
    package static let maximumBodySize = 4096
    /// The smallest aes128gcm body (RFC 8188, RFC 8291): salt 16, rs 4, idlen 1, key id 65, and one
    /// record of at least a padding delimiter and the 16-byte tag.
    static let minimumBodySize = 16 + 4 + 1 + 65 + 17
    /// The longest `Topic` (RFC 8030 §5.4).
    static let maximumTopicLength = 32

    /// Where requests are routed.
    package enum Route: Equatable, Sendable {
        /// `POST /push/<token>`.
        case push(token: String)
        /// `GET /health`.
        case health
        /// `GET /metrics`: Prometheus text.
        case metrics
        /// A known path with another method; the associated value is the `Allow` header.
        case methodNotAllowed(allow: String)
        /// Anything else.
        case notFound
    }

    /// The registrations, from the broker.
    let registrations: RegistrationTable
    /// The broker.
    let publisher: any PushPublisher
    /// The public URL (`https://push.example.net`, no trailing slash): endpoints are
    /// `<publicURL>/push/<token>`, message locations `<publicURL>/message/<id>`.
    let publicURL: String
    /// The origin VAPID tokens must name in `aud`.
    let audience: String
    /// The clock (VAPID expiry, `received`).
    let now: @Sendable () -> Date
    /// The request log.
    let logger: Logger
    /// What the gateway measures.
    let metrics: GatewayMetrics
    /// The text of `GET /metrics` (the metrics backend's exposition), or `nil`: 404.
    let metricsText: (@Sendable () -> String)?
    /// VAPID headers verified already, until their tokens expire.
    let verifiedTokens = VerifiedVAPIDTokens()

    /// Creates the gateway's logic.
    ///
    /// - Parameters:
    ///   - registrations: The registrations, from the broker.
    ///   - publisher: The broker.
    ///   - publicURL: The gateway's public origin, such as `https://push.example.net`.
    ///   - now: The clock.
    ///   - logger: The request log.
    ///   - metrics: What the gateway measures.
    ///   - metricsText: The Prometheus text `GET /metrics` answers, or `nil` for no such route.
    package init(
        registrations: RegistrationTable, publisher: any PushPublisher, publicURL: String,
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger, metrics: GatewayMetrics = GatewayMetrics(),
        metricsText: (@Sendable () -> String)? = nil
    ) {
        self.metrics = metrics
        self.metricsText = metricsText
        self.registrations = registrations
        self.publisher = publisher
        var url = publicURL
        while url.hasSuffix("/") { url.removeLast() }
        self.publicURL = url
        self.audience = url.lowercased()
        self.now = now
        self.logger = logger
    }

    /// Routes a request line's method and target (a query string is ignored).
    package static func route(method: String, target: String) -> Route {
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        if path == "/health" {
            return method == "GET" ? .health : .methodNotAllowed(allow: "GET")
        }
        if path == "/metrics" {
            return method == "GET" ? .metrics : .methodNotAllowed(allow: "GET")
        }
        if path.hasPrefix("/push/") {
            let token = String(path.dropFirst("/push/".count))
            return method == "POST" ? .push(token: token) : .methodNotAllowed(allow: "POST")
        }
        return .notFound
    }

    /// The answer to a route that is not a push (`/health`, `/metrics`, 404, 405).
    package func respond(to route: Route) -> GatewayResponse {
        switch route {
        case .health: health()
        case .metrics:
            metricsText.map {
                GatewayResponse(
                    status: 200, reason: GatewayResponse.phrase(for: 200), headers: [],
                    contentType: "text/plain; version=0.0.4; charset=utf-8", body: $0())
            } ?? .text(404, "not found")
        case .methodNotAllowed(let allow): .text(405, "method not allowed", headers: [("Allow", allow)])
        case .notFound, .push: .text(404, "not found")
        }
    }

    /// `/health`: the broker's state, the number of registrations and whether they are all loaded
    /// since the last connect (until then an unknown token gets 503, not 404); 503 unless connected.
    func health() -> GatewayResponse {
        let status = publisher.brokerStatus
        let body =
            "{\"broker\":\"\(status.rawValue)\",\"registrations\":\(registrations.count),\"loaded\":\(!registrations.isSyncing)}"
        return GatewayResponse(
            status: status == .connected ? 200 : 503,
            reason: GatewayResponse.phrase(for: status == .connected ? 200 : 503),
            headers: status == .connected ? [] : [("Retry-After", "5")], contentType: "application/json", body: body)
    }

    /// Checks a push request's head: the token, the broker, the headers, the declared size and VAPID.
    ///
    /// - Parameters:
    ///   - token: The path's token.
    ///   - headers: The request's headers.
    /// - Returns: The admission, or the answer that rejects the request.
    package func admit(token: String, headers: RequestHeaders) -> AdmissionResult {
        let result = check(token: token, headers: headers)
        if case .rejected(let response) = result { log(response, token: token) }
        return result
    }

    private func check(token: String, headers: RequestHeaders) -> AdmissionResult {
        guard PushRegistrationRecord.isValidToken(token) else { return .rejected(.text(404, "no such subscription")) }
        guard publisher.brokerStatus == .connected else {
            return .rejected(.unavailable("the message broker is not connected"))
        }
        guard let entry = registrations.lookup(token) else {
            if registrations.isSyncing { return .rejected(.unavailable("the registrations are being loaded")) }
            return .rejected(.text(404, "no such subscription"))
        }
        let ttl: Int
        switch headers.single("TTL") {
        case .none: return .rejected(.text(400, "the TTL header is required"))
        case .some(.none): return .rejected(.text(400, "more than one TTL header"))
        case .some(.some(let value)):
            guard let parsed = Self.parseTTL(value) else {
                return .rejected(.text(400, "TTL must be a non-negative integer number of seconds"))
            }
            ttl = min(parsed, PushEnvelope.maximumTTL)
        }
        var urgency = PushEnvelope.Urgency.normal
        switch headers.single("Urgency") {
        case .none: break
        case .some(.none): return .rejected(.text(400, "more than one Urgency header"))
        case .some(.some(let value)):
            guard let parsed = PushEnvelope.Urgency(rawValue: value.trimmingASCIISpaces()) else {
                return .rejected(.text(400, "Urgency must be very-low, low, normal or high"))
            }
            urgency = parsed
        }
        var topic: String?
        switch headers.single("Topic") {
        case .none: break
        case .some(.none): return .rejected(.text(400, "more than one Topic header"))
        case .some(.some(let value)):
            let trimmed = value.trimmingASCIISpaces()
            guard !trimmed.isEmpty, trimmed.utf8.count <= Self.maximumTopicLength, Self.isBase64URL(trimmed) else {
                return .rejected(.text(400, "Topic must be 1-32 characters of the base64url alphabet"))
            }
            topic = trimmed
        }
        let encodings = headers.values("Content-Encoding").map { $0.trimmingASCIISpaces().lowercased() }
        guard encodings == ["aes128gcm"] else {
            return .rejected(.text(415, "Content-Encoding must be aes128gcm (RFC 8291)"))
        }
        if let declared = headers.values("Content-Length").first, let length = Int(declared.trimmingASCIISpaces()),
            length > Self.maximumBodySize
        {
            return .rejected(.text(413, "the body is larger than \(Self.maximumBodySize) bytes"))
        }
        if let failure = checkVAPID(headers: headers, registered: entry.record.vapid) {
            return .rejected(failure)
        }
        return .admitted(PushAdmission(token: token, device: entry.device, ttl: ttl, urgency: urgency, topic: topic))
    }

    /// RFC 8292: with a registered key, a valid token for this origin signed by that key is required;
    /// without one, an `Authorization` header that is present must still be valid.
    private func checkVAPID(headers: RequestHeaders, registered: String?) -> GatewayResponse? {
        let challenge = [("WWW-Authenticate", "vapid")]
        let authorization: String
        switch headers.single("Authorization") {
        case .none:
            guard registered == nil else {
                return .text(401, "this subscription requires VAPID authorization", headers: challenge)
            }
            return nil
        case .some(.none): return .text(401, "more than one Authorization header", headers: challenge)
        case .some(.some(let value)): authorization = value
        }
        let credentials: VAPIDCredentials
        do {
            credentials = try verifiedTokens.credentials(for: authorization, audience: audience, now: now())
        } catch {
            return .text(401, "invalid VAPID authorization: \(error)", headers: challenge)
        }
        if let registered, Base64URL.decode(registered) != credentials.publicKey {
            return .text(403, "the VAPID key is not the one this subscription was created with")
        }
        return nil
    }

    /// Checks a complete body: its size and the aes128gcm header's shape (RFC 8188 §2.1, RFC 8291
    /// §4: a 65-byte key id). The body is never decrypted: the gateway cannot, and must not.
    ///
    /// - Returns: The answer that rejects the body, or `nil`.
    package func checkBody(_ body: some Collection<UInt8>, token: String) -> GatewayResponse? {
        let failure = Self.bodyProblem(body)
        if let failure { log(failure, token: token) }
        return failure
    }

    private static func bodyProblem(_ body: some Collection<UInt8>) -> GatewayResponse? {
        guard body.count <= maximumBodySize else {
            return .text(413, "the body is larger than \(maximumBodySize) bytes")
        }
        guard body.count >= minimumBodySize else {
            return .text(400, "the body is too short to be an aes128gcm message")
        }
        let header = Array(body.prefix(21))
        let recordSize = header[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard recordSize >= 18 else { return .text(400, "the aes128gcm record size is below 18") }
        guard header[20] == 65 else {
            return .text(400, "the aes128gcm key id is not a 65-byte P-256 public key")
        }
        return nil
    }

    /// Publishes an admitted message and answers once the broker has it (201), or 503.
    ///
    /// - Parameters:
    ///   - admission: What ``admit(token:headers:)`` returned.
    ///   - body: The checked body.
    package func deliver(_ admission: PushAdmission, body: [UInt8]) async -> GatewayResponse {
        let message: OutgoingPush
        switch outgoing(admission, body: body) {
        case .failure(let response): return response.response
        case .success(let built): message = built
        }
        do {
            try await publisher.publish(message)
            return published(message, admission, bodySize: body.count, result: .success(()))
        } catch {
            return published(message, admission, bodySize: body.count, result: .failure(error))
        }
    }

    /// A response that ends a request before anything is published.
    package struct Refusal: Error {
        package var response: GatewayResponse
    }

    /// The message to publish for an admitted request, or the answer that refuses it (400).
    package func outgoing(_ admission: PushAdmission, body: [UInt8]) -> Result<OutgoingPush, Refusal> {
        do {
            let envelope = try PushEnvelope(
                id: UUID().uuidString.lowercased(), token: admission.token, ttl: admission.ttl,
                urgency: admission.urgency, topic: admission.topic,
                received: Int64((now().timeIntervalSince1970 * 1000).rounded(.down)), body: body)
            return .success(OutgoingPush(device: admission.device, envelope: envelope))
        } catch {
            // The checks above are stricter than the envelope's; this is a safety net.
            let response = GatewayResponse.text(400, "the message cannot be forwarded: \(error)")
            log(response, token: admission.token)
            return .failure(Refusal(response: response))
        }
    }

    /// The answer once the broker took `message` (201) or did not (503), counted and logged.
    package func published(
        _ message: OutgoingPush, _ admission: PushAdmission, bodySize: Int, result: Result<Void, any Error>
    ) -> GatewayResponse {
        var metadata: Logger.Metadata = [
            "token": "\(Self.shortened(admission.token))", "device": "\(admission.device)",
            "id": "\(message.envelope.id)",
        ]
        if case .failure(let error) = result {
            metadata["status"] = "503"
            metadata["reason"] = "\(error)"
            logger.notice("push rejected", metadata: metadata)
            return .unavailable("the message broker did not take the message")
        }
        metrics.published(since: admission.received)
        // At debug: otherwise a formatted write per request (requests_total counts them).
        logger.debug(
            "push accepted",
            metadata: metadata.merging(
                [
                    "status": "201", "ttl": "\(admission.ttl)", "urgency": "\(admission.urgency.rawValue)",
                    "bytes": "\(bodySize)",
                ], uniquingKeysWith: { $1 }))
        return .created(location: "\(publicURL)/message/\(message.envelope.id)", ttl: admission.ttl)
    }

    /// Runs every step for one complete request.
    package func handle(method: String, path: String, headers: RequestHeaders, body: [UInt8]) async -> GatewayResponse {
        let route = Self.route(method: method, target: path)
        guard case .push(let token) = route else { return respond(to: route) }
        switch admit(token: token, headers: headers) {
        case .rejected(let response): return response
        case .admitted(let admission):
            if let failure = checkBody(body, token: token) { return failure }
            return await deliver(admission, body: body)
        }
    }

    /// Logs a rejected push request in one line (notice).
    func log(_ response: GatewayResponse, token: String) {
        logger.notice(
            "push rejected",
            metadata: [
                "status": "\(response.status)", "token": "\(Self.shortened(token))",
                "reason": "\(response.body.split(whereSeparator: \.isNewline).joined(separator: " "))",
            ])
    }

    /// The first 8 characters of a token: enough to match log lines, not enough to push.
    static func shortened(_ token: String) -> String {
        let safe = token.unicodeScalars.prefix(8).map { isBase64URL(String($0)) ? Character($0) : "?" }
        return String(safe) + (token.unicodeScalars.count > 8 ? "…" : "")
    }

    /// `TTL`: a non-negative integer (RFC 8030 §5.2: delta-seconds); a value past `Int32.max` is
    /// kept at that (RFC 9111's rule for delta-seconds that overflow).
    static func parseTTL(_ value: String) -> Int? {
        let trimmed = value.trimmingASCIISpaces()
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            return nil
        }
        return Int(trimmed).map { min($0, Int(Int32.max)) } ?? Int(Int32.max)
    }

    private static func isBase64URL(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                true
            default: false
            }
        }
    }
}
