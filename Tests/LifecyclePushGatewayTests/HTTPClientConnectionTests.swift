import BrokerTestSupport
import Glibc
import HTTPClientSupport
import SystemdBusTesting
import Testing

/// The HTTP/1.1 client `lifecyclectl push` and the benchmark send with, against the real gateway.
extension GatewayIntegrationTests {
    @Test func theClientKeepsAConnectionAliveUntilItAsksToClose() async throws {
        let gateway = try await startGateway()
        // Connected to the broker and its registrations read (none), so an unknown token is a 404.
        #expect(await waitForRegistrations(0, at: gateway))
        let health = HTTPClientRequest(method: "GET", path: "/health")
        let (first, second, reusable) = try await HTTPClientConnection.withConnection(
            host: "127.0.0.1", port: gateway.port
        ) { connection in
            let first = try await connection.send(health)
            let second = try await connection.send(health)
            return (first, second, connection.isReusable)
        }
        #expect(first.status == 200 && second.status == 200, "\(first) \(second)")
        #expect(second.headers["content-type"]?.hasPrefix("application/json") == true, "\(second.headers)")
        #expect(second.bodyText.contains("\"registrations\":"), "\(second.bodyText)")
        #expect(reusable)

        // A push to an unknown token: the gateway's status and body come back; then the last
        // request asks to close, and the connection takes no more.
        let push = HTTPClientRequest(
            path: "/push/unknown_token_0123456789", headers: [("TTL", "60"), ("Content-Encoding", "aes128gcm")],
            body: Fixture.body(), closesConnection: true)
        let (refused, closedAfter, failure) = try await HTTPClientConnection.withConnection(
            host: "127.0.0.1", port: gateway.port
        ) { connection in
            let refused = try await connection.send(push)
            let closedAfter = !connection.isReusable
            let failure = await #expect(throws: HTTPClientError.self) { try await connection.send(health) }
            #expect(failure?.code == .connectionNotReusable)
            return (refused, closedAfter, failure?.message)
        }
        #expect(refused.status == 404, "\(refused)")
        #expect(closedAfter)
        #expect(failure == "the connection can take no more requests")
        #expect(gateway.stop() == 0)
    }
}

@Suite(.timeLimit(.minutes(1))) struct HTTPClientFailureTests {
    @Test func aServerThatNeverAnswersRunsIntoTheTimeLimit() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        let clock = ContinuousClock()
        let started = clock.now
        let error = await #expect(throws: HTTPClientError.self) {
            try await HTTPClientConnection.withConnection(host: "127.0.0.1", port: listener.port, timeout: .seconds(1))
            {
                try await $0.send(HTTPClientRequest(path: "/push/x", body: [1, 2, 3]))
            }
        }
        let elapsed = clock.now - started
        #expect(error?.message == "no response within 1.0 seconds", "\(String(describing: error))")
        #expect(error?.code == .timedOut)
        // Not before the limit; the upper bound only guards against a hang (a loaded machine can
        // stall the process for seconds).
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(30), "gave up after \(elapsed)")
    }

    @Test func nothingListeningIsAConnectError() async throws {
        let listener = try SilentListener()
        let port = listener.port
        listener.close()
        let error = await #expect(throws: HTTPClientError.self) {
            try await HTTPClientConnection.withConnection(host: "127.0.0.1", port: port) {
                try await $0.send(HTTPClientRequest(path: "/"))
            }
        }
        #expect(
            error?.message
                == "cannot connect to 127.0.0.1:\(port): nothing listens there (connection refused): check the URL's host and port, and that the server runs",
            "\(String(describing: error))")
        #expect(error?.code == .connectFailed)
        #expect(error?.underlying != nil)
    }
}

/// A TCP socket listening on `127.0.0.1` that never accepts: the kernel completes connections and
/// takes their requests, and nobody answers.
private final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        var address = LoopbackSocket.address(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw FixtureError("listen on 127.0.0.1: \(message)")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        Glibc.close(fd)
    }
}
