import AppLifecycle
import Logging
import Synchronization
import SystemdBus

/// Follows systemd-timedated's `Timezone` property and reports real time-zone changes.
///
/// A `PropertiesChanged` of `org.freedesktop.timedate1` carrying a `Timezone` different from the last
/// known one becomes `AppLifecycle/HostEvent/significantTimeChange(_:)` with reason
/// `AppLifecycle/SignificantTimeChange/Reason/timeZone` and the new identifier. The value is read at
/// start, so setting the zone that is already in force reports nothing. An invalidated `Timezone` is read
/// again. Only the current owner of `org.freedesktop.timedate1` is believed.
///
/// timedated only reports changes made through it (`timedatectl set-timezone`); a zone changed by
/// replacing `/etc/localtime` directly is seen by ``TimeZoneWatcher``. timedated is bus-activated and
/// exits when idle; the subscription follows its owner across restarts.
public final class TimedatedClient: Sendable {
    /// `org.freedesktop.timedate1`.
    public static let busName = "org.freedesktop.timedate1"
    /// `/org/freedesktop/timedate1`.
    public static let path = "/org/freedesktop/timedate1"
    /// `org.freedesktop.timedate1`.
    public static let interface = "org.freedesktop.timedate1"

    /// The system bus connection the client uses.
    public let connection: BusConnection
    private let sink: @Sendable (HostEvent) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    private struct State {
        var subscription: BusSubscription?
        var timeZone: String?
    }

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

    /// The last known time zone identifier, or `nil` before it was read.
    public var timeZoneIdentifier: String? { state.withLock { $0.timeZone } }

    /// Subscribes to `PropertiesChanged` and reads the current `Timezone` (which activates timedated).
    ///
    /// - Returns: The time zone in force.
    /// - Throws: `BusServiceError` with `BusServiceError/Code/serviceUnavailable` when timedated is not
    ///   on the bus and cannot be activated, `BusServiceError/Code/invalidReply` when `Timezone` is not a
    ///   valid identifier, or `BusServiceError/Code/busFailure`.
    @discardableResult
    public func start() async throws(BusServiceError) -> String {
        do {
            let subscription = try await connection.observeProperties(
                sender: Self.busName, path: Self.path, interface: Self.interface
            ) { [weak self] change in
                guard let self else { return }
                if let value = change.changed["Timezone"] {
                    self.update(value, via: "PropertiesChanged")
                } else if change.invalidated.contains("Timezone") {
                    Task { try? await self.refresh() }
                }
            }
            state.withLock { $0.subscription = subscription }
            let zone = try await refresh()
            logger.info("timedated Timezone is \(zone)")
            return zone
        } catch {
            stop()
            throw BusServiceError.wrap(error, service: Self.busName, message: "follow Timezone")
        }
    }

    /// Cancels the subscription. Safe to call more than once.
    public func stop() {
        state.withLock { $0.subscription.take() }?.cancel()
    }

    /// Reads `Timezone` and applies it on the loop thread (reporting it if it changed).
    @discardableResult
    private func refresh() async throws -> String {
        let value = try await connection.getProperty(
            destination: Self.busName, path: Self.path,
            interface: Self.interface, name: "Timezone")
        guard let zone = value.stringValue, Self.isValidIdentifier(zone) else {
            throw BusServiceError(code: .invalidReply, service: Self.busName, message: "Timezone is \(value)")
        }
        try await connection.loop.run { [self] in update(value, via: "Get") }
        return zone
    }

    /// Loop thread: validates and de-duplicates a `Timezone` value; the first value is remembered, not reported.
    private func update(_ value: BusValue, via source: String) {
        guard case .string(let zone) = value.unwrapped, Self.isValidIdentifier(zone) else {
            logger.info("ignored Timezone \(value) from \(source): not a time zone identifier")
            return
        }
        let report = state.withLock { state -> Bool? in
            guard state.timeZone != zone else { return false }
            defer { state.timeZone = zone }
            return state.timeZone == nil ? nil : true
        }
        switch report {
        case true?:
            logger.info("time zone changed to \(zone) (\(source))")
            sink(.significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: zone)))
        case false?:
            logger.debug("Timezone \(zone) from \(source): no change")
        case nil:
            break
        }
    }

    /// A tz database identifier: `Area/Location`, `UTC`, `Etc/GMT+3`; no empty, absolute or `..` parts.
    static func isValidIdentifier(_ zone: String) -> Bool {
        guard !zone.isEmpty, zone.utf8.count <= 255, !zone.hasPrefix("/") else { return false }
        let allowed = zone.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
        }
        return allowed
            && !zone.split(separator: "/", omittingEmptySubsequences: false).contains {
                $0.isEmpty || $0 == ".." || $0 == "."
            }
    }
}
