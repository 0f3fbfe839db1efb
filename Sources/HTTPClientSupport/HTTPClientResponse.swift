/// A response an ``HTTPClientConnection`` received: the status, the header fields and the whole body.
package struct HTTPClientResponse: Sendable {
    /// The status code (201).
    package var status: Int
    /// The reason phrase (`Created`).
    package var reason: String
    /// The header fields by lower-cased name (of a repeated field, the last).
    package var headers: [String: String]
    /// The body.
    package var body: [UInt8]

    /// The body as UTF-8 text (invalid bytes replaced).
    package var bodyText: String { String(decoding: body, as: UTF8.self) }
}
