import AppLifecycle
import ArgumentParser
import Foundation
import HTTPClientSupport
import WebPush

/// `lifecyclectl push [--gateway URL] TOKEN PAYLOAD`: sends a Web Push message exactly as an app
/// server does: the payload encrypted to the device token's keys (RFC 8291 `aes128gcm`), POSTed
/// to its endpoint (RFC 8030) with `TTL`, `Urgency`, `Topic` and, with `--vapid-key`, an RFC 8292
/// VAPID `Authorization` whose audience is the endpoint's origin.
struct PushCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Send a Web Push message to an app, as its server would.",
        discussion: """
            TOKEN is the device token an app received in didRegisterForRemoteNotificationsWithDeviceToken: \
            a Push API subscription in JSON ({"endpoint":…,"keys":{"p256dh":…,"auth":…}}), given as the JSON \
            itself or as @FILE. PAYLOAD is the message (for AppLifecycle apps a JSON object, such as \
            {"aps":{"alert":"Hi"}}), or @FILE. --gateway sends to that base URL instead of the endpoint's \
            own origin (a gateway reached on another address than the public one). An https:// endpoint or \
            gateway is reached over TLS, its certificate checked against the system's CA certificates, or \
            against --ca-file's (a private CA). Exit 0 on 201 Created.
            """)

    @Option(
        help: ArgumentHelp(
            "POST to this gateway (http[s]://host:port) instead of the endpoint's origin.", valueName: "url"))
    var gateway: String?

    @Option(help: "How long the push service keeps the message for an offline device, in seconds.")
    var ttl = 86400

    @Option(help: ArgumentHelp("very-low, low, normal or high.", valueName: "urgency"))
    var urgency = "normal"

    @Option(
        help: ArgumentHelp(
            "Replaces an undelivered message with the same topic (≤ 32 base64url characters).", valueName: "topic"))
    var topic: String?

    @Option(
        name: .customLong("vapid-key"),
        help: ArgumentHelp(
            "The app server's VAPID private key: a PEM file, or 32 raw bytes in base64url.", valueName: "file"))
    var vapidKey: String?

    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp(
            "Trust only the CA certificates in this PEM file for https:// (default: the system's).", valueName: "file"))
    var caFile: String?

    @Option(help: ArgumentHelp("The VAPID subject (mailto: or https: contact).", valueName: "uri"))
    var subject = "mailto:admin@example.net"

    @Argument(help: "The device token (JSON), or @FILE.")
    var token: String

    @Argument(help: "The message, or @FILE.")
    var payload: String

    func run() async throws { try await runOnStandardStreams() }

    func execute(output: CtlOutput) async throws {
        guard ["very-low", "low", "normal", "high"].contains(urgency) else {
            throw ValidationError("--urgency must be very-low, low, normal or high, not '\(urgency)'")
        }
        guard ttl >= 0 else { throw ValidationError("--ttl must not be negative") }
        let subscription: RemoteNotificationDeviceToken
        do {
            subscription = try RemoteNotificationDeviceToken(deviceToken: try Self.argument(token, "TOKEN"))
        } catch let error as ApplicationError {
            throw ValidationError("TOKEN: \(error.message)")
        }
        let message = try Self.argument(payload, "PAYLOAD")
        var target = subscription.endpoint
        if let gateway {
            guard let base = URL(string: gateway), ["http", "https"].contains(base.scheme), base.host != nil else {
                throw ValidationError("--gateway must be an http[s]://host[:port] URL, not '\(gateway)'")
            }
            var components = URLComponents(url: subscription.endpoint, resolvingAgainstBaseURL: false)
            components?.scheme = base.scheme
            components?.host = base.host
            components?.port = base.port
            guard let redirected = components?.url else { throw ValidationError("cannot combine --gateway and TOKEN") }
            target = redirected
        }
        let body: Data
        do {
            body = try WebPushEncryption.encrypt(
                message, receiverPublicKey: subscription.publicKey, authSecret: subscription.authSecret)
        } catch {
            throw ValidationError("PAYLOAD: \(error)")
        }
        var headers = [
            ("TTL", "\(ttl)"), ("Urgency", urgency), ("Content-Encoding", "aes128gcm"),
            ("Content-Type", "application/octet-stream"),
        ]
        if let topic { headers.append(("Topic", topic)) }
        if let vapidKey {
            let key = try Self.signingKey(vapidKey)
            let origin = Self.origin(of: subscription.endpoint)
            headers.append(("Authorization", try key.authorization(audience: origin, subject: subject)))
        }
        if let caFile, !FileManager.default.isReadableFile(atPath: caFile) {
            throw ValidationError("--ca-file: cannot read '\(caFile)'")
        }
        let response = try await Self.post(to: target, headers: headers, body: Array(body), caFile: caFile)
        guard response.status == 201 else {
            let said = response.bodyText.trimmingCharacters(in: .whitespacesAndNewlines)
            var message =
                "\(target.absoluteString): \(response.status) \(response.reason)" + (said.isEmpty ? "" : ": \(said)")
            if let advice = Self.advice(forStatus: response.status, retryAfter: response.headers["retry-after"]) {
                message += "; " + advice
            }
            throw CtlFailure(message: message)
        }
        output.out("201 Created \(response.headers["location"] ?? "")")
    }

    /// POSTs `body` to an `http://` or `https://` URL on a connection of its own (`Connection: close`),
    /// within 10 s; over TLS, the server's certificate is checked against `caFile`'s CA certificates,
    /// or the system's.
    static func post(
        to url: URL, headers: [(String, String)], body: [UInt8], caFile: String? = nil
    ) async throws -> HTTPClientResponse {
        guard let scheme = url.scheme, ["http", "https"].contains(scheme), let host = url.host else {
            throw HTTPClientError(.invalidURL, "\(url) is not an http:// or https:// URL")
        }
        let tls = scheme == "https" ? try HTTPClientTLS(caFile: caFile, caFileOption: "--ca-file FILE") : nil
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let request = HTTPClientRequest(path: path, headers: headers, body: body, closesConnection: true)
        return try await HTTPClientConnection.withConnection(
            host: host, port: url.port ?? (tls == nil ? 80 : 443), tls: tls
        ) {
            try await $0.send(request)
        }
    }

    /// What to do about a push service's refusal (RFC 8030, and the gateway's statuses), or `nil`
    /// when the status says it all.
    ///
    /// - Parameters:
    ///   - status: The response's status.
    ///   - retryAfter: Its `Retry-After` header, if any.
    static func advice(forStatus status: Int, retryAfter: String?) -> String? {
        switch status {
        case 404, 410:
            "the push service knows no subscription with this token: the app unregistered, or it registered again and has a new device token; send to the token it reported last"
        case 401:
            "this subscription was made with an application server key: sign with its private key, --vapid-key FILE"
        case 403:
            "this subscription was made with another application server key: sign with that key's private key (--vapid-key)"
        case 413:
            "the encrypted message is too large for the push service: send less (the gateway takes at most 4,096 bytes of encrypted body: about 3,990 bytes of message)"
        case 429:
            "the push service asks to send less often" + (retryAfter.map { ": wait \($0) s" } ?? "")
        case 503:
            "the push service cannot take pushes now (its broker is unreachable, or it is starting): try again"
                + (retryAfter.map { " in \($0) s" } ?? "")
                + "; its operator finds why in its log (`journalctl -u lifecycle-push-gateway`)"
        case 400, 415:
            "the push service refused the request as malformed; lifecyclectl builds valid requests, so check --ttl, --urgency and --topic"
        default:
            nil
        }
    }

    /// The text itself, or the contents of `@FILE`.
    static func argument(_ value: String, _ name: String) throws -> Data {
        guard value.hasPrefix("@") else { return Data(value.utf8) }
        let path = String(value.dropFirst())
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ValidationError("\(name): cannot read \(path)")
        }
        return data
    }

    /// `scheme://host[:port]` of a URL (the VAPID audience).
    static func origin(of url: URL) -> String {
        "\(url.scheme ?? "https")://\(url.host ?? "")" + (url.port.map { ":\($0)" } ?? "")
    }

    static func signingKey(_ path: String) throws -> VAPIDSigningKey {
        guard let text = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw ValidationError("--vapid-key: cannot read \(path)")
        }
        do {
            if text.contains("-----BEGIN") { return try VAPIDSigningKey(pemRepresentation: text) }
            guard let raw = Base64URL.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw ValidationError("--vapid-key: \(path) is neither PEM nor base64url")
            }
            return try VAPIDSigningKey(rawRepresentation: raw)
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("--vapid-key: \(error)")
        }
    }
}
