import AppLifecycleSystemd
import Foundation
import SystemdBusTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How long a test waits for readiness before it gives up: a hang guard, not an assertion on timing.
let hangGuardMilliseconds: Int32 = 10_000

/// Waits on `fd` for `events` with `poll(2)`; records an issue and returns `nil` if the hang guard expires.
func waitForReadiness(
    _ fd: Int32, events: Int16, timeoutMilliseconds: Int32 = hangGuardMilliseconds,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Int16? {
    var entry = pollfd(fd: fd, events: events, revents: 0)
    while true {
        let n = poll(&entry, 1, timeoutMilliseconds)
        if n < 0 && errno == EINTR { continue }
        if n < 0 {
            Issue.record("poll failed: errno \(errno)", sourceLocation: sourceLocation)
            return nil
        }
        if n == 0 {
            Issue.record("fd \(fd) did not become ready within the hang guard", sourceLocation: sourceLocation)
            return nil
        }
        return entry.revents
    }
}

/// The events pending on `fd` right now, without waiting (`poll` with a zero timeout).
func pendingEvents(_ fd: Int32, events: Int16) -> Int16 {
    var entry = pollfd(fd: fd, events: events, revents: 0)
    return poll(&entry, 1, 0) > 0 ? entry.revents : 0
}

/// Whether this process holds CAP_SYS_TIME (bit 25 of CapEff), i.e. may call `clock_settime(CLOCK_REALTIME)`.
let canSetRealtimeClock: Bool = {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
        let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
    else { return false }
    return mask & (1 << 25) != 0
}()

let hasSystemPressureFile = access("/proc/pressure/memory", R_OK | W_OK) == 0

/// Foundation's zones (ICU's copy of the time-zone database) as the wall-clock timer's rules, so the
/// timer's arithmetic is checked against an implementation that is not glibc's.
extension TimeZone: UTCOffsetRules {
    public func utcOffset(at instant: Int) -> Int {
        secondsFromGMT(for: Date(timeIntervalSince1970: Double(instant)))
    }
}
