import FleetProtocol
import FoundationEssentials

@testable import LifecyclePushGateway

/// The gateway's request checks without NIO, many times faster than ``GatewayHTTPFuzzing``: the
/// input is read as a request line, `Name: value` header lines and, after a blank line, the body;
/// then `PushGateway.route`, `admit` (token, TTL, Urgency, Topic, Content-Encoding, the declared
/// length, VAPID against the registration's key) and `checkBody`, as the handler calls them. A
/// push that is admitted names a registered token and a TTL within the envelope's range.
enum GatewayRequestFuzzing {
    static let target = FuzzTarget(name: "gateway-request", summary: "gateway request checks (route, admit, body)") {
        bytes in
        let separator = Array("\r\n\r\n".utf8)
        var head = bytes[...]
        var body: ArraySlice<UInt8> = []
        if let index = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) {
            head = bytes[..<index]
            body = bytes[(index + separator.count)...]
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first.map { $0.split(separator: " ", omittingEmptySubsequences: false) } ?? []
        let method = requestLine.first.map(String.init) ?? ""
        let path = requestLine.count > 1 ? String(requestLine[1]) : ""
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...].drop { $0 == " " })))
        }
        let gateway = GatewayHTTPFuzzing.gateway
        let route = PushGateway.route(method: method, target: path)
        guard case .push(let token) = route else {
            _ = gateway.respond(to: route)
            return
        }
        switch gateway.admit(token: token, headers: RequestHeaders(headers)) {
        case .rejected(let response):
            guard (400..<600).contains(response.status) else {
                FuzzTarget.fail("a rejection with status \(response.status)")
            }
        case .admitted(let admission):
            guard gateway.registrations.lookup(admission.token) != nil else {
                FuzzTarget.fail("admitted a push for the unknown token '\(admission.token)'")
            }
            guard (0...PushEnvelope.maximumTTL).contains(admission.ttl) else {
                FuzzTarget.fail("admitted a TTL of \(admission.ttl)")
            }
            _ = gateway.checkBody(Array(body), token: token)
        }
    }
}
