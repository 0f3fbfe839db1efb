import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Foundation
import Glibc
import SystemdBusTesting
import Testing
import WebPush

/// The built gateway against a real mosquitto: registrations published by a device user, pushes
/// over HTTP, envelopes received by the device.
@Suite(.serialized) struct GatewayIntegrationTests {
    static let users = ["gateway": "gateway-secret", "device-1": "device-1-secret", "device-2": "device-2-secret"]
    static let token = "integration_token_0123456789"

    let broker: MosquittoBroker
    let device: MosquittoClientTool

    init() throws {
        broker = try MosquittoBroker(users: Self.users)
        device = MosquittoClientTool(broker: broker, username: "device-1")
    }

    /// Publishes device-1's retained registration of `token`.
    func register(_ token: String = token, vapid: String? = nil, as tool: MosquittoClientTool? = nil) async throws {
        let record = PushRegistrationRecord(token: token, app: "org.example.App", vapid: vapid, created: 1)
        let client = tool ?? device
        let result = try await client.publish(
            topic: try FleetTopics(device: client.username).registration(token),
            message: String(decoding: record.encoded(), as: UTF8.self), retain: true)
        #expect(result.status == 0, "mosquitto_pub: \(result.output)")
    }

    func startGateway(clientID: String? = nil, tls: TestCertificateAuthority? = nil) async throws -> GatewayProcess {
        try await GatewayProcess(brokerURL: broker.url, password: Self.users["gateway"]!, clientID: clientID, tls: tls)
    }

    /// Waits until `/health` reports a connected broker and `count` registrations (over HTTPS
    /// trusting `tls`'s CA when the gateway serves TLS).
    func waitForRegistrations(
        _ count: Int, at gateway: GatewayProcess, tls: TestCertificateAuthority? = nil
    ) async -> Bool {
        await eventually(hangGuard: .seconds(15), pause: .milliseconds(100)) {
            let health = try? await HTTPExchange.send("GET", "\(gateway.url)/health", caFile: tls?.caPath)
            return health?.status == 200 && health?.body.contains("\"registrations\":\(count),\"loaded\":true") == true
        }
    }

    func push(
        _ gateway: GatewayProcess, token: String = token, body: [UInt8], headers: [(String, String)]? = nil
    ) async throws -> HTTPExchange {
        try await HTTPExchange.send(
            "POST", "\(gateway.url)/push/\(token)",
            headers: headers ?? [("TTL", "60"), ("Content-Encoding", "aes128gcm"), ("Urgency", "high")], body: body)
    }

    @Test func aPushReachesTheDeviceUnchanged() async throws {
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        let receiver = try await DeviceClient(broker: broker, device: "device-1")

        let (body, keys) = try Fixture.encryptedBody()
        let response = try await push(gateway, body: body)
        #expect(response.status == 201, "\(response)")
        #expect(response.headers["ttl"] == "60")
        let location = try #require(response.headers["location"])
        #expect(location.hasPrefix("https://push.example.net/message/"))
        let id = String(location.split(separator: "/").last ?? "")

        #expect(await eventually(hangGuard: .seconds(10)) { !receiver.envelopes.isEmpty })
        let envelope = try #require(receiver.envelopes.first)
        #expect(envelope.id == id)
        #expect(envelope.token == Self.token)
        #expect(envelope.urgency == .high)
        #expect(envelope.body == body)
        let plaintext = try WebPushEncryption.decrypt(Data(envelope.body), keys: keys)
        #expect(String(decoding: plaintext, as: UTF8.self) == "When I grow up, I want to be a watermelon")
        // The gateway never logs the body (nor anything of the plaintext).
        #expect(!gateway.log.contains(Base64URL.encode(Data(body))))
        #expect(gateway.stop() == 0)
    }

    /// The gateway as its packaged unit runs it: not root, no capability at all. Every socket
    /// option it sets must work there; `.socketOption(.tcp_nodelay)` (SOL_SOCKET's 1, SO_DEBUG,
    /// which needs CAP_NET_ADMIN) made it reset every connection, and only the real-host tier saw it.
    @Test(.enabled(if: getuid() == 0, "needs root to run the gateway as another uid"))
    func anUnprivilegedGatewayAnswersHealthAndAcceptsAPush() async throws {
        try await register()
        let gateway = try await GatewayProcess(
            brokerURL: broker.url, password: Self.users["gateway"]!, unprivileged: true)
        let status = try String(contentsOfFile: "/proc/\(gateway.child.pid)/status", encoding: .utf8)
        #expect(status.contains("Uid:\t65534\t65534\t65534\t65534"), "\(status)")
        #expect(status.contains("CapEff:\t0000000000000000"), "\(status)")
        #expect(await waitForRegistrations(1, at: gateway), "\(gateway.log)")
        let health = try await HTTPExchange.send("GET", "\(gateway.url)/health")
        #expect(health.status == 200, "\(health)")
        let receiver = try await DeviceClient(broker: broker, device: "device-1")
        let response = try await push(gateway, body: Fixture.body())
        #expect(response.status == 201, "\(response)")
        #expect(await eventually(hangGuard: .seconds(10)) { receiver.envelopes.count == 1 })
        #expect(gateway.stop() == 0)
    }

    /// The durability promise's first step: `201 Created` means the broker has the push (its
    /// PUBACK came). With the broker frozen (SIGSTOP) no PUBACK can come, and the request ends
    /// with 503 once the publish times out (10 s), not with a 201 for a push the broker never took.
    @Test func twoHundredOneOnlyOnceTheBrokerAcknowledgedThePush() async throws {
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        let pid = try #require(broker.pid)
        kill(pid, SIGSTOP)
        let frozen: HTTPExchange
        do {
            frozen = try await push(gateway, body: Fixture.body())
        } catch {
            kill(pid, SIGCONT)
            throw error
        }
        kill(pid, SIGCONT)
        #expect(frozen.status == 503, "\(frozen)")
        #expect(try await push(gateway, body: Fixture.body()).status == 201)
        #expect(gateway.stop() == 0)
    }

    @Test func badRequestsGetTheirStatuses() async throws {
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        let body = Fixture.body()
        let good: [(String, String)] = [("TTL", "60"), ("Content-Encoding", "aes128gcm")]

        #expect(try await push(gateway, token: "unknown_token_0123456789", body: body).status == 404)
        #expect(try await push(gateway, token: "bad", body: body).status == 404)
        let oversized = try await push(gateway, body: Fixture.body(length: 4097))
        #expect(oversized.status == 413)
        #expect(oversized.body.hasSuffix("\n"))
        // The same through chunked transfer encoding: no Content-Length to refuse up front.
        let chunked = try await push(
            gateway, body: Fixture.body(length: 4097), headers: good + [("Transfer-Encoding", "chunked")])
        #expect(chunked.status == 413)
        #expect(try await push(gateway, body: Fixture.body(length: 60), headers: good).status == 400)
        #expect(try await push(gateway, body: Fixture.body(idlen: 32), headers: good).status == 400)
        #expect(try await push(gateway, body: body, headers: [("Content-Encoding", "aes128gcm")]).status == 400)
        let unsupported = try await push(gateway, body: body, headers: [("TTL", "60"), ("Content-Encoding", "aesgcm")])
        #expect(unsupported.status == 415)
        #expect(unsupported.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(try await HTTPExchange.send("GET", "\(gateway.url)/push/\(Self.token)").status == 405)
        #expect(try await HTTPExchange.send("GET", "\(gateway.url)/elsewhere").status == 404)
        // After all of that the gateway still accepts a good push.
        #expect(try await push(gateway, body: body).status == 201)
        #expect(gateway.stop() == 0)
    }

    @Test func vapidIsRequiredWhenRegisteredAndMustMatchTheKey() async throws {
        let serverKey = VAPIDSigningKey()
        try await register(vapid: serverKey.publicKeyBase64URL)
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        let base: [(String, String)] = [("TTL", "60"), ("Content-Encoding", "aes128gcm")]
        let body = Fixture.body()

        #expect(try await push(gateway, body: body, headers: base).status == 401)
        let other = try VAPIDSigningKey().authorization(audience: "https://push.example.net", subject: "mailto:a@b.c")
        #expect(try await push(gateway, body: body, headers: base + [("Authorization", other)]).status == 403)
        let wrongAudience = try serverKey.authorization(audience: "https://elsewhere.example", subject: "mailto:a@b.c")
        #expect(try await push(gateway, body: body, headers: base + [("Authorization", wrongAudience)]).status == 401)
        let good = try serverKey.authorization(audience: "https://push.example.net", subject: "mailto:a@b.c")
        #expect(try await push(gateway, body: body, headers: base + [("Authorization", good)]).status == 201)
        #expect(gateway.stop() == 0)
    }

    @Test func twoGatewaysServeTheSameToken() async throws {
        try await register()
        let first = try await startGateway()
        let second = try await startGateway()
        #expect(await waitForRegistrations(1, at: first))
        #expect(await waitForRegistrations(1, at: second))
        let receiver = try await DeviceClient(broker: broker, device: "device-1")
        #expect(try await push(first, body: Fixture.body(length: 200)).status == 201)
        #expect(try await push(second, body: Fixture.body(length: 300)).status == 201)
        #expect(await eventually(hangGuard: .seconds(10)) { receiver.envelopes.count == 2 })
        #expect(Set(receiver.envelopes.map(\.body.count)) == [200, 300])
        #expect(first.stop() == 0)
        #expect(second.stop() == 0)
    }

    @Test func aRegistrationIsRemovedAndAnotherDevicesClaimIsIgnored() async throws {
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        // device-2 claims device-1's token: ignored (logged).
        try await register(as: MosquittoClientTool(broker: broker, username: "device-2"))
        #expect(await eventually(hangGuard: .seconds(10)) { gateway.log.contains("belongs to another device") })
        #expect(try await push(gateway, body: Fixture.body()).status == 201)
        // device-1 removes it with an empty retained payload.
        let removal = try await device.publish(
            topic: try FleetTopics(device: "device-1").registration(Self.token), message: "", retain: true)
        #expect(removal.status == 0)
        #expect(await waitForRegistrations(0, at: gateway))
        #expect(try await push(gateway, body: Fixture.body()).status == 404)
        #expect(gateway.stop() == 0)
    }

    @Test func unavailableWhileTheBrokerIsDownAndRecoveredAfterItsRestart() async throws {
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        broker.stop()
        #expect(
            await eventually(hangGuard: .seconds(15), pause: .milliseconds(100)) {
                (try? await HTTPExchange.send("GET", "\(gateway.url)/health"))?.status == 503
            })
        let refused = try await push(gateway, body: Fixture.body())
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] != nil)

        try broker.restart()
        #expect(await waitForRegistrations(1, at: gateway))
        #expect(
            await eventually(hangGuard: .seconds(15), pause: .milliseconds(200)) {
                (try? await push(gateway, body: Fixture.body()))?.status == 201
            })
        #expect(gateway.stop() == 0)
    }

    @Test func aBadConfigurationFileExitsTwoNamingTheFileAndLine() async throws {
        let executable = try #require(BuiltProducts.path(of: "lifecycle-push-gateway"))
        let directory = try TemporaryDirectory(prefix: "gateway-config")
        defer { directory.remove() }
        let badValue = try directory.write(
            "bad-value.conf", "[gateway]\npublic-url = https://push.example.net\nlisten = nonsense\n")
        let unknownKey = try directory.write("unknown.conf", "[gateway]\n\npublic-urll = https://push.example.net\n")
        for (file, expected) in [
            (badValue, "(listen = nonsense is set on line 3 of \(badValue)"),
            (unknownKey, "\(unknownKey):3: unknown setting 'public-urll'"),
        ] {
            let log = directory.appending("stderr")
            let status = try await offThread {
                try ChildProcess.spawn(executable, ["--config", file], stdout: .file(log)).waitForExit()
            }
            let output = try String(contentsOfFile: log, encoding: .utf8)
            #expect(status == 2, "\(output)")
            #expect(output.contains(expected), "\(output)")
        }
    }

    @Test func usageErrorsExitTwo() async throws {
        let executable = try #require(BuiltProducts.path(of: "lifecycle-push-gateway"))
        for arguments in [
            ["--listen", "nonsense", "--public-url", "https://push.example.net"],
            ["--public-url", "https://push.example.net/with/path"],
            ["--public-url", "https://push.example.net", "--broker", "http://127.0.0.1:1883"],
            ["--public-url", "https://push.example.net", "--idle-timeout", "0"],
            ["--public-url", "https://push.example.net", "--body-timeout", "nan"],
            ["--public-url", "https://push.example.net", "--header-timeout", "1e9"],
            ["--public-url", "https://push.example.net", "--max-connections", "0"],
            [],
        ] {
            let result = try await offThread { try ChildProcess.run(executable, arguments) }
            #expect(result.status == 2, "\(arguments)")
        }
    }

    /// A port another program holds is a clear start error, not NIO's `bind(descriptor:ptr:bytes:)`.
    @Test func aTakenPortIsExplained() async throws {
        let executable = try #require(BuiltProducts.path(of: "lifecycle-push-gateway"))
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(holder) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(holder, pointer, length) == 0 && listen(holder, 1) == 0
                    && getsockname(holder, pointer, &length) == 0
            }
        }
        #expect(bound)
        let port = Int(UInt16(bigEndian: address.sin_port))
        let result = try await offThread {
            try ChildProcess.run(
                executable,
                [
                    "--listen", "127.0.0.1:\(port)", "--public-url", "https://push.example.net", "--broker",
                    "mqtt://127.0.0.1:1",
                ], includingStandardError: true)
        }
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "lifecycle-push-gateway: cannot listen on 127.0.0.1:\(port): another program listens there already"),
            "\(result.output)")
        #expect(!result.output.contains("bind(descriptor"))
    }
}
