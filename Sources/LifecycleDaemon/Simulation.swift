import AppLifecycle
import AppLifecycleSystemd
import FetchScheduling
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
/// | `fetch-clock` | `advance: d` (seconds, 0 to 1e9) | the fetch scheduler's test clock moves forward: what came due runs, fetches past their deadline are ended |
/// | `fetch-conditions` | `full-connectivity: b`?, `metered: b`?, `low-battery: b`?, `low-power-mode: b`?, `thermal-serious: b`? | the fetch scheduler's conditions (each absent one unknown) |
///
/// The two `fetch-` kinds are the test clock and conditions of the real daemon: reachable only with
/// `--enable-simulate`, by a caller of the daemon's uid, like every simulation.
enum Simulation: Sendable, Equatable {
    /// Inject this event as if the host bridge had reported it.
    case event(HostEvent)
    /// Terminate one app (`terminate` with `app`).
    case terminateApp(String)
    /// Move the fetch clock forward by these seconds.
    case advanceFetchClock(Double)
    /// Set the fetch scheduler's conditions.
    case fetchConditions(FetchConditions)

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
        case "fetch-clock":
            guard let seconds = arguments["advance"]?.doubleValue, seconds.isFinite, seconds >= 0, seconds <= 1e9 else {
                throw DaemonError.invalidArgs("fetch-clock needs advance: a number of seconds, 0 to 1e9")
            }
            return .advanceFetchClock(seconds)
        case "fetch-conditions":
            return .fetchConditions(
                FetchConditions(
                    hasFullConnectivity: try bool(arguments, "full-connectivity"),
                    isMetered: try bool(arguments, "metered"),
                    isLowBattery: try bool(arguments, "low-battery"),
                    isLowPowerModeEnabled: try bool(arguments, "low-power-mode"),
                    isThermalStateSeriousOrAbove: try bool(arguments, "thermal-serious")))
        default:
            throw DaemonError.invalidArgs(
                "unknown simulation '\(kind.prefix(32))' (sleep, wake, lock, unlock, memory-warning, time-change, terminate, fetch-clock, fetch-conditions)"
            )
        }
    }

    /// A Boolean argument, `nil` when absent, `InvalidArgs` when not a Boolean.
    ///
    /// - Parameters:
    ///   - key: The argument's name.
    private static func bool(_ arguments: UserInfo, _ key: String) throws(BusError) -> Bool? {
        guard let value = arguments[key] else { return nil }
        guard let flag = value.boolValue else { throw DaemonError.invalidArgs("argument '\(key)' must be a Boolean") }
        return flag
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
