import FoundationEssentials
import Logging
import SystemdBus

/// Follows what the urgency rule needs on the system bus: UPower's `OnBattery` and its display
/// device's `WarningLevel`, NetworkManager's `Metered`, each read once and then followed through
/// `PropertiesChanged` from the service's current owner. A service that is absent or leaves makes
/// its facts unknown (the permissive answer, ``DeliveryConditions``).
@MainActor
final class DeliveryConditionsSource {
    private static let upower = "org.freedesktop.UPower"
    private static let upowerPath = "/org/freedesktop/UPower"
    private static let displayDevicePath = "/org/freedesktop/UPower/devices/DisplayDevice"
    private static let deviceInterface = "org.freedesktop.UPower.Device"
    private static let networkManager = "org.freedesktop.NetworkManager"
    private static let networkManagerPath = "/org/freedesktop/NetworkManager"

    private var connection: BusConnection?
    private var subscriptions: [BusSubscription] = []
    private var conditions = DeliveryConditions()
    private let onChange: @MainActor (DeliveryConditions) -> Void
    private let logger: Logger

    init(logger: Logger, onChange: @escaping @MainActor (DeliveryConditions) -> Void) {
        self.logger = logger
        self.onChange = onChange
    }

    /// Connects to the system bus and starts following; without one, every fact stays unknown.
    func start(systemBus: BusConnection.Address, loop: EventLoop) async {
        do {
            let connection = try await BusConnection(
                systemBus, loop: loop, description: "lifecycled-push-conditions", timeout: .seconds(5))
            self.connection = connection
            let (stream, continuation) = AsyncStream<Change>.makeStream()
            Task { @MainActor [weak self] in
                for await change in stream { self?.apply(change) }
            }
            for (name, path, interface) in [
                (Self.upower, Self.upowerPath, Self.upower),
                (Self.upower, Self.displayDevicePath, Self.deviceInterface),
                (Self.networkManager, Self.networkManagerPath, Self.networkManager),
            ] {
                subscriptions.append(
                    try await connection.observeProperties(sender: name, path: path, interface: interface) { change in
                        continuation.yield(.properties(path, change.changed))
                    })
            }
            for name in [Self.upower, Self.networkManager] {
                let tracker = try await connection.trackNameOwner(name)
                subscriptions.append(
                    try await tracker.addOwnerChangeHandler { change in
                        continuation.yield(.owner(name, change.newOwner))
                    })
                await read(name)
            }
        } catch {
            logger.notice("push: no system bus for the urgency rule (\(error)); every urgency is delivered")
        }
    }

    func stop() {
        subscriptions.forEach { $0.cancel() }
        connection?.close()
    }

    private enum Change: Sendable {
        case properties(String, [String: BusValue])
        case owner(String, String?)
    }

    private func apply(_ change: Change) {
        switch change {
        case .properties(let path, let changed):
            update(path, changed)
        case .owner(let name, let owner):
            if owner == nil {
                if name == Self.upower {
                    conditions.onBattery = nil
                    conditions.batteryLow = nil
                } else {
                    conditions.metered = nil
                }
                onChange(conditions)
            } else {
                Task { @MainActor [weak self] in await self?.read(name) }
            }
        }
    }

    /// Reads a service's properties once (it appeared, or at start).
    private func read(_ name: String) async {
        guard let connection else { return }
        let objects =
            name == Self.upower
            ? [(Self.upowerPath, Self.upower), (Self.displayDevicePath, Self.deviceInterface)]
            : [(Self.networkManagerPath, Self.networkManager)]
        for (path, interface) in objects {
            if let properties = try? await connection.getAllProperties(
                destination: name, path: path, interface: interface)
            {
                update(path, properties.mapValues(\.unwrapped))
            }
        }
    }

    private func update(_ path: String, _ changed: [String: BusValue]) {
        let before = conditions
        switch path {
        case Self.upowerPath:
            if let value = changed["OnBattery"], case .bool(let onBattery) = value { conditions.onBattery = onBattery }
        case Self.displayDevicePath:
            if let value = changed["WarningLevel"], case .uint32(let level) = value {
                conditions.batteryLow = level >= 3
            }
        case Self.networkManagerPath:
            // 1 yes, 3 guess-yes; 2 no, 4 guess-no; 0 unknown.
            if let value = changed["Metered"], case .uint32(let metered) = value {
                conditions.metered = metered == 0 ? nil : (metered == 1 || metered == 3)
            }
        default:
            break
        }
        if conditions != before {
            logger.info("push: device conditions: \(conditions)")
            onChange(conditions)
        }
    }
}
