/// One HTTP/1.1 request for an ``HTTPClientConnection``: what an app server sends to a push
/// gateway. The connection adds `Host` and `Content-Length`.
package struct HTTPClientRequest: Sendable {
    /// The method (`POST`).
    package var method: String
    /// The request target: the path and query (`/push/<token>`).
    package var path: String
    /// More header fields, in order (`TTL`, `Content-Encoding`, `Authorization`, …).
    package var headers: [(String, String)]
    /// The body, sent with a `Content-Length`.
    package var body: [UInt8]
    /// Whether to send `Connection: close` (the last request on the connection).
    package var closesConnection: Bool

    /// A request.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path and query.
    ///   - headers: More header fields.
    ///   - body: The body.
    ///   - closesConnection: Whether to ask the server to close the connection after it.
    package init(
        method: String = "POST", path: String, headers: [(String, String)] = [], body: [UInt8] = [],
        closesConnection: Bool = false
    ) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
        self.closesConnection = closesConnection
    }
}
