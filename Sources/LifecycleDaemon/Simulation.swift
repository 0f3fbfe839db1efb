import AppLifecycle
import AppLifecycleSystemd
import LifecycledProtocol
import SystemdBus

/// A `Simulate(kind, arguments)` request, parsed: a host event to inject, or one app to end.
///
/// | kind | arguments | effect |
/// | --- | --- | --- |
/// | `sleep` / `wake` | — | `PrepareForSleep(true/false)` |
/// | `lock` / `unlock` | — | the session locks / unlocks |
/// | `memory-warning` | `level: s` (`low`, `medium`, `critical`; default `critical`) | a memory warning |
/// | `time-change` | `reason: s` (`clock-set`, `timezone`, `midnight`, `dst`; default `clock-set`), `timezone: s`? | a significant time change |
/// | `terminate` | `app: s`? | with `app`, that app is terminated; without, the whole session (the daemon stops) |
enum Simulation: Sendable, Equatable {
    /// Inject this event as if the host bridge had reported it.
    case event(HostEvent)
    /// Terminate one app (`terminate` with `app`).
    case terminateApp(String)

    /// Parses a request.
    ///
    /// - Parameters:
    ///   - kind: The kind (see the type's table).
    /// - Throws: `InvalidArgs` for an unknown kind or a bad argument.
    static func parse(kind: String, arguments: UserInfo) throws(BusError) -> Simulation {
        switch kind {
        case "sleep": return .event(.sleeping(true))
        case "wake": return .event(.sleeping(false))
        case "lock": return .event(.locked(true))
        case "unlock": return .event(.locked(false))
        case "memory-warning":
            let text = try string(arguments, "level") ?? MemoryWarning.Level.critical.rawValue
            guard let level = MemoryWarning.Level(rawValue: text) else {
                throw DaemonError.invalidArgs(
                    "memory-warning level '\(text.prefix(32))' is not low, medium or critical")
            }
            return .event(.memoryWarning(MemoryWarning(level: level, source: "simulate")))
        case "time-change":
            let text = try string(arguments, "reason") ?? SignificantTimeChange.Reason.clockSet.rawValue
            guard let reason = SignificantTimeChange.Reason(rawValue: text) else {
                throw DaemonError.invalidArgs(
                    "time-change reason '\(text.prefix(32))' is not clock-set, timezone, midnight or dst")
            }
            return .event(
                .significantTimeChange(
                    SignificantTimeChange(reason: reason, timeZoneIdentifier: try string(arguments, "timezone"))))
        case "terminate":
            guard let app = try string(arguments, "app") else { return .event(.terminate(.hostRequest)) }
            guard LifecycledProtocol.isValidAppID(app) else {
                throw DaemonError.invalidArgs("'\(app.prefix(64))' is not a valid app id")
            }
            return .terminateApp(app)
        default:
            throw DaemonError.invalidArgs(
                "unknown simulation '\(kind.prefix(32))' (sleep, wake, lock, unlock, memory-warning, time-change, terminate)"
            )
        }
    }

    /// A string argument, `nil` when absent, `InvalidArgs` when not a string.
    ///
    /// - Parameters:
    ///   - key: The argument's name.
    private static func string(_ arguments: UserInfo, _ key: String) throws(BusError) -> String? {
        guard let value = arguments[key] else { return nil }
        guard let text = value.stringValue else { throw DaemonError.invalidArgs("argument '\(key)' must be a string") }
        return text
    }
}
