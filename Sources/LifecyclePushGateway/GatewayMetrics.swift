import Metrics
import Synchronization

/// What the gateway measures, through the swift-metrics API (the backend is the process's: the
/// command bootstraps swift-prometheus, whose text ``PushGateway`` serves on `GET /metrics`; without
/// a bootstrap, as in the library's tests, the records go nowhere).
///
/// - `lifecycle_push_gateway_requests_total{status}`: answers by HTTP status (a counter);
/// - `lifecycle_push_gateway_publish_latency_seconds`: from a push request's head to the broker's
///   PUBACK, for each 201 (a timer: a histogram);
/// - `lifecycle_push_gateway_broker_connected`: 1 while the broker connection is up, else 0;
/// - `lifecycle_push_gateway_registrations`: the tokens the ``RegistrationTable`` knows.
package final class GatewayMetrics: Sendable {
    /// The name of the answers counter (its one dimension: `status`).
    package static let requests = "lifecycle_push_gateway_requests_total"
    /// The name of the publish latency timer.
    package static let publishLatency = "lifecycle_push_gateway_publish_latency_seconds"
    /// The name of the broker connection gauge.
    package static let brokerConnected = "lifecycle_push_gateway_broker_connected"
    /// The name of the registrations gauge.
    package static let registrations = "lifecycle_push_gateway_registrations"

    /// The answers counter of each status seen, made once (the gateway answers with a dozen statuses).
    private let requestCounters = Mutex<[Int: Counter]>([:])
    private let latency: Metrics.Timer
    private let connected: Gauge
    private let registrationCount: Gauge

    /// Metrics on the factory bootstrapped now (create it after `MetricsSystem.bootstrap`).
    package init() {
        latency = Metrics.Timer(label: Self.publishLatency)
        connected = Gauge(label: Self.brokerConnected)
        registrationCount = Gauge(label: Self.registrations)
    }

    /// Counts one answer with `status`.
    func answered(status: Int) {
        let counter = requestCounters.withLock { counters in
            if let counter = counters[status] { return counter }
            let counter = Counter(label: Self.requests, dimensions: [("status", String(status))])
            counters[status] = counter
            return counter
        }
        counter.increment()
    }

    /// Records a publish acknowledged now, for a request whose head arrived at `received`.
    func published(since received: ContinuousClock.Instant) {
        let elapsed = received.duration(to: .now).components
        latency.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }

    /// Records whether the broker connection is up.
    func brokerConnected(_ isConnected: Bool) {
        connected.record(isConnected ? 1 : 0)
    }

    /// Records how many registrations the table holds.
    func registrations(_ count: Int) {
        registrationCount.record(count)
    }
}
