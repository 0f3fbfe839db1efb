import Testing

@testable import LifecyclePushGateway

/// Routes, `/health`, and the parsing of `--listen` and `--public-url`.
@Suite struct RoutingAndOptionsTests {
    @Test func routes() {
        #expect(PushGateway.route(method: "POST", target: "/push/abc") == .push(token: "abc"))
        #expect(PushGateway.route(method: "POST", target: "/push/abc?x=1") == .push(token: "abc"))
        #expect(PushGateway.route(method: "GET", target: "/push/abc") == .methodNotAllowed(allow: "POST"))
        #expect(PushGateway.route(method: "GET", target: "/health") == .health)
        #expect(PushGateway.route(method: "POST", target: "/health") == .methodNotAllowed(allow: "GET"))
        #expect(PushGateway.route(method: "GET", target: "/") == .notFound)
        #expect(PushGateway.route(method: "GET", target: "/message/abc") == .notFound)
    }

    @Test func otherRoutesAnswerWithShortTextBodies() async {
        let (gateway, _, _) = Fixture.gateway()
        let notFound = await gateway.handle(method: "GET", path: "/nothing", headers: RequestHeaders([]), body: [])
        #expect(notFound.status == 404)
        #expect(notFound.contentType.hasPrefix("text/plain"))
        let wrongMethod = await gateway.handle(
            method: "DELETE", path: "/push/\(Fixture.token)", headers: RequestHeaders([]), body: [])
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "POST")
    }

    @Test func healthReportsTheBrokerAndTheRegistrations() {
        let (gateway, publisher, _) = Fixture.gateway()
        let healthy = gateway.health()
        #expect(healthy.status == 200)
        #expect(healthy.body == #"{"broker":"connected","registrations":1,"loaded":true}"#)
        #expect(healthy.contentType == "application/json")
        publisher.brokerStatus = .connecting
        let down = gateway.health()
        #expect(down.status == 503)
        #expect(down.body == #"{"broker":"connecting","registrations":1,"loaded":true}"#)
    }

    @Test func listenAddresses() {
        #expect(ListenAddress("127.0.0.1:8080") == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(ListenAddress("[::1]:0") == ListenAddress(host: "::1", port: 0))
        #expect(ListenAddress("localhost:443")?.port == 443)
        for bad in ["8080", "127.0.0.1", "127.0.0.1:", ":8080", "host:65536", "::1:80", "[::1]8080", "a b:1", "h:-1"] {
            #expect(ListenAddress(bad) == nil, "\(bad)")
        }
    }

    @Test func publicURLs() {
        #expect(PublicURL.normalize("https://push.example.net") == "https://push.example.net")
        #expect(PublicURL.normalize("HTTPS://Push.Example.NET/") == "https://push.example.net")
        #expect(PublicURL.normalize("http://127.0.0.1:8080") == "http://127.0.0.1:8080")
        #expect(PublicURL.normalize("http://[::1]:8080") == "http://[::1]:8080")
        for bad in [
            "push.example.net", "ftp://x", "https://", "https://x/path", "https://u@x", "https://x?q",
            "https://x:99999",
        ] {
            #expect(PublicURL.normalize(bad) == nil, "\(bad)")
        }
    }
}

extension ListenAddress {
    init(host: String, port: Int) {
        self.init("\(host.contains(":") ? "[\(host)]" : host):\(port)")!
    }
}
