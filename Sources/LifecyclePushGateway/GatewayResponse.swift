/// One HTTP response of the gateway, independent of NIO so the request logic can be tested alone.
///
/// Errors are `text/plain` with a one-line reason; ``status`` is the numeric code, ``reason`` its
/// phrase.
package struct GatewayResponse: Sendable, Equatable {
    /// The status code, for example 201.
    package var status: Int
    /// The status line's reason phrase, for example `Created`.
    package var reason: String
    /// Extra headers (`Location`, `TTL`, `Retry-After`, `Allow`); `Content-Type` and
    /// `Content-Length` are added by the server.
    package var headers: [(String, String)]
    /// The `Content-Type` of ``body``.
    package var contentType: String
    /// The body.
    package var body: String

    package static func == (lhs: GatewayResponse, rhs: GatewayResponse) -> Bool {
        lhs.status == rhs.status && lhs.reason == rhs.reason && lhs.contentType == rhs.contentType
            && lhs.body == rhs.body && lhs.headers.map { "\($0.0): \($0.1)" } == rhs.headers.map { "\($0.0): \($0.1)" }
    }

    /// The first value of a header (case-insensitive name), for tests and logs.
    package func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// A `text/plain` response whose body is `message` and a newline.
    static func text(_ status: Int, _ message: String, headers: [(String, String)] = []) -> GatewayResponse {
        GatewayResponse(
            status: status, reason: phrase(for: status), headers: headers, contentType: "text/plain; charset=utf-8",
            body: message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n")
    }

    /// 201 Created for an accepted push message (RFC 8030 §5).
    static func created(location: String, ttl: Int) -> GatewayResponse {
        GatewayResponse(
            status: 201, reason: phrase(for: 201), headers: [("Location", location), ("TTL", String(ttl))],
            contentType: "text/plain; charset=utf-8", body: "")
    }

    /// 503 with `Retry-After`: the broker cannot take messages now.
    static func unavailable(_ message: String, retryAfter seconds: Int = 5) -> GatewayResponse {
        text(503, message, headers: [("Retry-After", String(seconds))])
    }

    /// The reason phrases of the statuses the gateway sends.
    static func phrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 503: "Service Unavailable"
        default: "Status \(status)"
        }
    }
}
