import BrokerLink
import BrokerTestSupport
import FleetProtocol
import Foundation
import Glibc
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// TLS to the broker, as `lifecycled.conf`'s ca-file, certificate-file and key-file set it up:
/// a real mosquitto TLS listener that requires a client certificate from a test CA.
@Suite(.serialized, .timeLimit(.minutes(1))) struct BrokerTLSTests {
    /// A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl.
    struct Certificates {
        let directory: TemporaryDirectory
        var ca: String { directory.appending("ca.crt") }
        var serverCertificate: String { directory.appending("server.crt") }
        var serverKey: String { directory.appending("server.key") }
        var clientCertificate: String { directory.appending("client.crt") }
        var clientKey: String { directory.appending("client.key") }

        init() throws {
            directory = try TemporaryDirectory(prefix: "mqtt-tls")
            let dir = directory.path
            let commands: [[String]] = [
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=test-ca",
                    "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.crt",
                ],
                [
                    "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "\(dir)/server.key",
                    "-out", "\(dir)/server.csr",
                ],
                [
                    "x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.crt", "-CAkey", "\(dir)/ca.key",
                    "-CAcreateserial", "-days", "2", "-out", "\(dir)/server.crt", "-extfile", "\(dir)/san.cnf",
                ],
                [
                    "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=dev1", "-keyout", "\(dir)/client.key",
                    "-out", "\(dir)/client.csr",
                ],
                [
                    "x509", "-req", "-in", "\(dir)/client.csr", "-CA", "\(dir)/ca.crt", "-CAkey", "\(dir)/ca.key",
                    "-CAcreateserial", "-days", "2", "-out", "\(dir)/client.crt",
                ],
            ]
            _ = try directory.write("san.cnf", "subjectAltName=IP:127.0.0.1\n")
            for arguments in commands {
                let result = try ChildProcess.run("/usr/bin/openssl", arguments)
                guard result.status == 0 else { throw FixtureError("openssl \(arguments[0]): \(result.output)") }
            }
        }
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw FixtureError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func connectsOverTLSWithAClientCertificateAndIsRefusedWithout() async throws {
        let certificates = try Certificates()
        defer { certificates.directory.remove() }
        let tlsPort = try Self.freePort()
        let broker = try MosquittoBroker(
            users: ["dev1": "pw-dev1", "gateway": "pw-gateway"],
            extraConfiguration: """
                listener \(tlsPort) 127.0.0.1
                cafile \(certificates.ca)
                certfile \(certificates.serverCertificate)
                keyfile \(certificates.serverKey)
                require_certificate true
                """)
        #expect(
            await eventually {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(tlsPort).bigEndian
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
            }, "the TLS listener did not come up: \(logLines(broker.logPath).suffix(5))")

        func client(_ id: String, certificate: Bool) throws -> (EventLoop, BrokerConnection, ConnectionProbe) {
            let loop = try EventLoop(name: "tls-\(id)")
            var configuration = try BrokerConfiguration(
                url: "mqtts://127.0.0.1:\(tlsPort)", clientID: id, username: "dev1", password: "pw-dev1")
            configuration.caFile = certificates.ca
            if certificate {
                configuration.certificateFile = certificates.clientCertificate
                configuration.keyFile = certificates.clientKey
            }
            configuration.maximumReconnectDelay = .milliseconds(400)
            let connection = BrokerConnection(
                configuration: configuration, loop: loop, logger: Logger(label: "BrokerLinkTests"))
            let probe = ConnectionProbe(connection)
            return (loop, connection, probe)
        }

        // With the client certificate: connected, and a QoS 1 round trip over TLS.
        let (loop, connection, probe) = try client("dev1-tls", certificate: true)
        defer {
            connection.stop()
            loop.shutdown()
        }
        // Under the shipped ACL the device reads its push topic, which only the gateway writes (over
        // the plain listener); the device's own publish is acknowledged over TLS.
        let topics = try FleetTopics(device: "dev1")
        try connection.subscribe(topics.push, qos: 1)
        try await connection.start()
        try #require(await probe.waitForConnections(), "\(probe.events) \(logLines(broker.logPath).suffix(5))")
        try await connection.publish(topic: topics.presence, payload: Array("online".utf8), qos: 1)
        let gateway = MosquittoClientTool(broker: broker, username: "gateway")
        #expect(
            await eventually(hangGuard: .seconds(10), pause: .milliseconds(100)) {
                if probe.texts.contains("over tls") { return true }
                _ = try? await gateway.publish(topic: topics.push, message: "over tls")
                return probe.texts.contains("over tls")
            })

        // Without one: the broker refuses the handshake, and no connection is ever made.
        let (bareLoop, bare, bareProbe) = try client("dev1-bare", certificate: false)
        defer {
            bare.stop()
            bareLoop.shutdown()
        }
        try await bare.start()
        // Each attempt ends as `connected` or `disconnected(.lost)`: wait for two attempts to end
        // (the first and a retry), then none of them may have connected.
        @Sendable func lost(_ events: [BrokerConnectionEvent]) -> Int {
            events.filter { if case .disconnected(.lost) = $0 { true } else { false } }.count
        }
        #expect(await bareProbe.wait { lost($0.events) >= 2 }, "\(bareProbe.events)")
        #expect(bareProbe.connectCount == 0, "\(bareProbe.events)")
    }
}

private func logLines(_ path: String) -> [String] {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
}
