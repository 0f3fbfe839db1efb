import BrokerLink
import Synchronization
import SystemdBus
import SystemdBusTesting

/// Records a ``BrokerConnection``'s events and messages for a test, and keeps the
/// acknowledgements of the messages it holds back.
public final class ConnectionProbe: Sendable {
    private struct Record {
        var events: [BrokerConnectionEvent] = []
        var messages: [BrokerMessage] = []
        var held: [BrokerAcknowledgement] = []
    }

    private let record = Mutex(Record())
    /// Whether messages are acknowledged as they arrive (`true`) or held until ``acknowledgeAll()``.
    private let autoAcknowledge: Atomic<Bool>

    /// Attaches a probe to a connection (call before `start()`).
    ///
    /// - Parameters:
    ///   - connection: The connection.
    ///   - holdAcknowledgements: Whether to hold each acknowledgement instead of giving it at once.
    public init(_ connection: BrokerConnection, holdAcknowledgements: Bool = false) {
        autoAcknowledge = Atomic(!holdAcknowledgements)
        connection.setEventHandler { [self] event in record.withLock { $0.events.append(event) } }
        connection.setMessageHandler { [self] message, acknowledgement in
            record.withLock {
                $0.messages.append(message)
                $0.held.append(acknowledgement)
            }
            if autoAcknowledge.load(ordering: .relaxed) { acknowledgement.acknowledge() }
        }
    }

    /// Every event so far.
    public var events: [BrokerConnectionEvent] { record.withLock { $0.events } }
    /// Every message so far.
    public var messages: [BrokerMessage] { record.withLock { $0.messages } }
    /// The payloads of every message so far, as text.
    public var texts: [String] { messages.map(\.text) }
    /// How many `connected` events so far.
    public var connectCount: Int {
        events.filter { if case .connected = $0 { true } else { false } }.count
    }

    /// Gives every acknowledgement received so far (and acknowledges later ones at once).
    public func acknowledgeAll() {
        autoAcknowledge.store(true, ordering: .relaxed)
        for acknowledgement in record.withLock({ $0.held }) { acknowledgement.acknowledge() }
    }

    /// Waits (bounded) until `condition` holds for the probe.
    ///
    /// - Parameters:
    ///   - seconds: The bound.
    ///   - condition: The fact to wait for.
    /// - Returns: Whether it held in time.
    public func wait(seconds: Int = 5, _ condition: @escaping @Sendable (ConnectionProbe) -> Bool) async -> Bool {
        await eventually(hangGuard: .seconds(seconds)) { condition(self) }
    }

    /// Waits (bounded) for the `n`th `connected` event.
    ///
    /// - Parameters:
    ///   - count: How many connections to wait for.
    ///   - seconds: The bound.
    /// - Returns: Whether it came in time.
    public func waitForConnections(_ count: Int = 1, seconds: Int = 5) async -> Bool {
        await wait(seconds: seconds) { $0.connectCount >= count }
    }
}
