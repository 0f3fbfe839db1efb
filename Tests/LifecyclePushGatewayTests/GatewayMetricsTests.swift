import BrokerTestSupport
import FleetProtocol
import Foundation
import SystemdBusTesting
import Testing

@testable import LifecyclePushGateway

/// `GET /metrics` of the built gateway, read by the `prometheus-client` Python package's parser
/// (an implementation of the text format no one here wrote), after pushes, a 404, a broker outage
/// and a removed registration.
extension GatewayIntegrationTests {
    /// The samples of the gateway's `/metrics` as `prometheus_client.parser` reads them, by sample
    /// name with its labels (`name{a=b,c=d}`, labels sorted).
    func scrape(_ gateway: GatewayProcess) async throws -> [String: Double] {
        let python = try #require(
            [
                ProcessInfo.processInfo.environment["WEBPUSH_PYTHON"],
                Self.packageRoot + "/.build/webpush-venv/bin/python",
            ]
            .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no Python with prometheus-client: run scripts/webpush-venv.sh")
        let response = try await HTTPExchange.send("GET", "\(gateway.url)/metrics")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
        let directory = try TemporaryDirectory(prefix: "metrics")
        defer { directory.remove() }
        let text = try directory.write("metrics.txt", response.body)
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            samples = {}
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for sample in family.samples:
                    labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
                    samples[sample.name + ("{" + labels + "}" if labels else "")] = sample.value
            print(json.dumps(samples))
            """
        let result = try await offThread { try ChildProcess.run(python, ["-c", script, text]) }
        try #require(result.status == 0, "the parser refused /metrics:\n\(result.output)\n\(response.body)")
        return try JSONDecoder().decode([String: Double].self, from: Data(result.output.utf8))
    }

    @Test func metricsCountAnswersByStatusThePublishesTheBrokerAndTheRegistrations() async throws {
        let requests = GatewayMetrics.requests
        try await register()
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        var samples = try await scrape(gateway)
        #expect(samples[GatewayMetrics.brokerConnected] == 1)
        #expect(samples[GatewayMetrics.registrations] == 1)
        #expect(samples["\(requests){status=201}"] == nil)
        #expect(samples["\(GatewayMetrics.publishLatency)_count"] == 0)
        let scrapesBefore = samples["\(requests){status=200}"] ?? 0

        for _ in 0..<3 { #expect(try await push(gateway, body: Fixture.body()).status == 201) }
        #expect(try await push(gateway, token: "unknown_token_0123456789", body: Fixture.body()).status == 404)
        #expect(try await HTTPExchange.send("GET", "\(gateway.url)/elsewhere").status == 404)
        samples = try await scrape(gateway)
        #expect(samples["\(requests){status=201}"] == 3)
        #expect(samples["\(requests){status=404}"] == 2)
        // The first scrape is counted once it was answered: one more 200 (no /health in between).
        #expect(samples["\(requests){status=200}"] == scrapesBefore + 1)
        #expect(samples["\(GatewayMetrics.publishLatency)_count"] == 3)
        let latency = try #require(samples["\(GatewayMetrics.publishLatency)_sum"])
        #expect(latency > 0 && latency < 3 * 10)
        #expect(samples["\(GatewayMetrics.publishLatency)_bucket{le=+Inf}"] == 3)

        // A removed registration, then the broker going away.
        let removal = try await device.publish(
            topic: try FleetTopics(device: "device-1").registration(Self.token), message: "", retain: true)
        #expect(removal.status == 0)
        #expect(await waitForRegistrations(0, at: gateway))
        samples = try await scrape(gateway)
        #expect(samples[GatewayMetrics.registrations] == 0)
        #expect(samples[GatewayMetrics.brokerConnected] == 1)
        broker.stop()
        var connected: Double?
        #expect(
            await eventually(hangGuard: .seconds(15), pause: .milliseconds(100)) {
                connected = try? await scrape(gateway)[GatewayMetrics.brokerConnected]
                return connected == 0
            }, "broker_connected stayed \(String(describing: connected))")
        #expect(gateway.stop() == 0)
    }
}
