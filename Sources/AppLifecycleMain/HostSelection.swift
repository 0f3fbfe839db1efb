import AppLifecycle
import FoundationEssentials
import LifecycledProtocol
import Logging
import SystemdBus

/// Which host drives an app: `lifecycled`, the in-process systemd bridge, or whichever fits.
///
/// The same delegate code works both ways: pick the host here and hand it to
/// `Application/main(delegate:host:launchOptions:configuration:)`, or let
/// `main(delegate:selection:appID:configuration:applicationConfiguration:)` do all of it.
///
/// ``automatic`` chooses `lifecycled` when any of these holds, unless `$LIFECYCLE_USE_DAEMON=0`
/// forces the bridge:
///
/// 1. `$LIFECYCLE_USE_DAEMON=1`;
/// 2. `$LIFECYCLE_APP_ID` is set (the daemon launched this process);
/// 3. `org.applifecycle.Lifecycled1` has an owner on the session bus, or is activatable there
///    (`ListActivatableNames`: its D-Bus service file is installed, so the app's first call starts
///    it). The bus is asked once, with a short timeout.
///
/// Otherwise it chooses `SystemdHost`. The ``Decision`` says which and why, for the logs.
public enum HostSelection: String, Sendable, CaseIterable {
    /// Decide from the environment and the session bus.
    case automatic
    /// Always the in-process bridge (`SystemdHost`).
    case systemd
    /// Always `lifecycled` (`LifecycledHost`).
    case lifecycled

    /// The outcome of a selection and its reason.
    public struct Decision: Sendable, Equatable, CustomStringConvertible {
        /// The chosen host kind: ``HostSelection/systemd`` or ``HostSelection/lifecycled``.
        public var host: HostSelection
        /// Why, in words fit for a log line.
        public var reason: String

        /// Creates a decision.
        ///
        /// - Parameters:
        ///   - host: The chosen kind (not ``HostSelection/automatic``).
        ///   - reason: Why.
        public init(host: HostSelection, reason: String) {
            self.host = host
            self.reason = reason
        }

        /// `lifecycled (reason)`.
        public var description: String { "\(host.rawValue) (\(reason))" }
    }

    /// Decides which host to use.
    ///
    /// Only ``automatic`` looks at the environment and, as a last resort, at the bus: it opens
    /// one connection to `sessionBus`, asks `GetNameOwner` and then `ListActivatableNames` with
    /// `timeout`, and closes it. A bus that cannot be reached or does not answer counts as "no daemon".
    ///
    /// - Parameters:
    ///   - environment: The environment (`$LIFECYCLE_USE_DAEMON`, `$LIFECYCLE_APP_ID`).
    ///   - sessionBus: The bus to look for the daemon on.
    ///   - timeout: How long the bus may take to answer.
    public func decide(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        sessionBus: BusConnection.Address = .session,
        timeout: Duration = .milliseconds(500)
    ) async -> Decision {
        switch self {
        case .systemd: return Decision(host: .systemd, reason: "requested")
        case .lifecycled: return Decision(host: .lifecycled, reason: "requested")
        case .automatic: break
        }
        let force = environment[LifecycledProtocol.useDaemonEnvironment]
        if force == "0" { return Decision(host: .systemd, reason: "$\(LifecycledProtocol.useDaemonEnvironment)=0") }
        if force == "1" { return Decision(host: .lifecycled, reason: "$\(LifecycledProtocol.useDaemonEnvironment)=1") }
        if let id = environment[LifecycledProtocol.appIDEnvironment], !id.isEmpty {
            return Decision(host: .lifecycled, reason: "$\(LifecycledProtocol.appIDEnvironment)=\(id)")
        }
        switch await Self.daemonPresence(on: sessionBus, timeout: timeout) {
        case .success(.owned(let owner)):
            return Decision(
                host: .lifecycled, reason: "\(LifecycledProtocol.busName) is owned by \(owner) on the \(sessionBus) bus"
            )
        case .success(.activatable):
            return Decision(
                host: .lifecycled,
                reason:
                    "\(LifecycledProtocol.busName) is activatable on the \(sessionBus) bus (started by the first call)")
        case .success(.absent):
            return Decision(
                host: .systemd,
                reason: "\(LifecycledProtocol.busName) has no owner and is not activatable on the \(sessionBus) bus")
        case .failure(let error):
            return Decision(host: .systemd, reason: "the \(sessionBus) bus did not answer (\(error))")
        }
    }

    /// Whether lifecycled runs on a bus, can be started there, or neither.
    enum DaemonPresence: Equatable {
        /// Its name is owned by this unique name.
        case owned(String)
        /// Its name has no owner but a service file: a call to it starts it.
        case activatable
        /// Neither.
        case absent
    }

    /// Whether lifecycled's name is owned or activatable on `address`, or why the bus could not say.
    static func daemonPresence(on address: BusConnection.Address, timeout: Duration) async -> Result<
        DaemonPresence, BusError
    > {
        let loop: EventLoop
        do {
            loop = try EventLoop(name: "host-selection")
        } catch let error as BusError {
            return .failure(error)
        } catch {
            return .failure(BusError(name: BusError.Name.failed, message: "\(error)"))
        }
        defer { loop.shutdown() }
        do {
            let connection = try await BusConnection(
                address, loop: loop, description: "host-selection", timeout: timeout)
            defer { connection.close() }
            if let owner = try await connection.nameOwner(LifecycledProtocol.busName, timeout: timeout) {
                return .success(.owned(owner))
            }
            let activatable = try await connection.activatableNames(timeout: timeout)
            return .success(activatable.contains(LifecycledProtocol.busName) ? .activatable : .absent)
        } catch let error as BusError {
            return .failure(error)
        } catch {
            return .failure(BusError(name: BusError.Name.failed, message: "\(error)"))
        }
    }
}
