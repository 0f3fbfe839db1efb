import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Follows low-memory-monitor's `LowMemoryWarning(y)` on the system bus.
///
/// Each warning becomes `AppLifecycle/HostEvent/memoryWarning(_:)` with the level from
/// `AppLifecycle/MemoryWarning/Level/init(lowMemoryMonitorValue:)` and source `"low-memory-monitor"`;
/// level 0 ("no warning any more") is not reported. Only the current owner of
/// `org.freedesktop.LowMemoryMonitor` is believed, and only with signature `y`. Rate limiting is the
/// host's job (``MemoryWarningRateLimiter``): every warning is passed on.
public final class LowMemoryMonitorClient: Sendable {
    /// `org.freedesktop.LowMemoryMonitor`.
    public static let busName = "org.freedesktop.LowMemoryMonitor"
    /// `/org/freedesktop/LowMemoryMonitor`.
    public static let path = "/org/freedesktop/LowMemoryMonitor"
    /// `org.freedesktop.LowMemoryMonitor`.
    public static let interface = "org.freedesktop.LowMemoryMonitor"
    /// The `AppLifecycle/MemoryWarning/source` of the warnings: `"low-memory-monitor"`.
    public static let source = "low-memory-monitor"

    /// The system bus connection the client uses.
    public let connection: BusConnection
    private let sink: @Sendable (HostEvent) -> Void
    private let logger: Logger
    private let subscription = Mutex<BusSubscription?>(nil)

    /// Creates a client; nothing happens on the bus until ``start()``.
    ///
    /// - Parameters:
    ///   - connection: A connection to the system bus (or a test bus).
    ///   - logger: Where the client's diagnostics go (at info and below), tagged with `service`.
    ///   - sink: Receives the host events, on the bus loop thread.
    public init(connection: BusConnection, logger: Logger, sink: @escaping @Sendable (HostEvent) -> Void) {
        self.connection = connection
        self.sink = sink
        var logger = logger
        logger[metadataKey: "service"] = "\(Self.busName)"
        self.logger = logger
    }

    /// Subscribes to `LowMemoryWarning`.
    ///
    /// - Throws: `BusServiceError` with `BusServiceError/Code/serviceUnavailable` when nobody owns
    ///   `org.freedesktop.LowMemoryMonitor` (the subscription is then cancelled), or
    ///   `BusServiceError/Code/busFailure`.
    public func start() async throws(BusServiceError) {
        do {
            let subscription = try await connection.subscribe(
                sender: Self.busName, path: Self.path, interface: Self.interface, member: "LowMemoryWarning",
                signature: "y"
            ) { [weak self] signal in
                guard let self, let value = signal.arguments[0].byteValue else { return }
                guard let level = MemoryWarning.Level(lowMemoryMonitorValue: value) else {
                    self.logger.debug("LowMemoryWarning(\(value)): no warning")
                    return
                }
                self.logger.debug("LowMemoryWarning(\(value)) → \(level)")
                self.sink(.memoryWarning(MemoryWarning(level: level, source: Self.source)))
            }
            self.subscription.withLock { $0 = subscription }
            guard try await connection.trackNameOwner(Self.busName).currentOwner != nil else {
                throw BusServiceError(
                    code: .serviceUnavailable, service: Self.busName,
                    message: "nobody owns \(Self.busName) on the bus")
            }
        } catch {
            stop()
            throw BusServiceError.wrap(error, service: Self.busName, message: "subscribe to LowMemoryWarning")
        }
    }

    /// Cancels the subscription. Safe to call more than once.
    public func stop() {
        subscription.withLock { $0.take() }?.cancel()
    }
}
