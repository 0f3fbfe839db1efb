import Glibc

/// This process's local time zone, read from the system's time-zone database by glibc:
/// `localtime_r` after `tzset` (`$TZ` when set, else `/etc/localtime`).
///
/// This is how lifecycled computes local midnight and DST transitions without Foundation's ICU
/// (which costs about 10 MiB of RSS). glibc reads the zone once; call ``reload(localtimePath:environment:)`` after the system
/// zone changed (the localtime watch or timedated said so), and it reads `/etc/localtime` again.
public struct SystemLocalTime: UTCOffsetRules {
    /// The zone's name: the `zoneinfo/` part of `/etc/localtime`'s link, `$TZ`, or `/etc/timezone`.
    public let identifier: String

    /// Reads the zone now (`tzset`).
    ///
    /// The offsets always come from glibc, that is from this process's own `$TZ` and
    /// `/etc/localtime`; the parameters only decide the ``identifier`` reported with them (tests
    /// pass others to check how the name is found).
    ///
    /// - Parameters:
    ///   - localtimePath: The system zone link the name is read from.
    ///   - environment: Where `$TZ` is looked up for the name.
    public init(localtimePath: String = "/etc/localtime", environment: [String: String] = SystemLocalTime.environment) {
        tzset()
        // $TZ wins over /etc/localtime, for glibc as here.
        if let tz = environment["TZ"] {
            // An empty $TZ is UTC to glibc.
            identifier = TimeZoneWatcher.identifier(forTZ: tz) ?? "UTC"
        } else {
            identifier = TimeZoneWatcher.snapshot(of: localtimePath, environment: environment).identifier
        }
    }

    /// `tm_gmtoff` of `localtime_r`.
    ///
    /// - Parameters:
    ///   - instant: Seconds since the Unix epoch.
    public func utcOffset(at instant: Int) -> Int {
        var time = time_t(instant)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return 0 }
        return parts.tm_gmtoff
    }

    /// Makes glibc read the zone again: `tzset` re-reads `/etc/localtime` when the file changed.
    ///
    /// - Parameters:
    ///   - localtimePath: The system zone link.
    ///   - environment: Where `$TZ` is looked up.
    /// - Returns: The zone as it is now.
    public static func reload(
        localtimePath: String = "/etc/localtime", environment: [String: String] = SystemLocalTime.environment
    ) -> SystemLocalTime {
        SystemLocalTime(localtimePath: localtimePath, environment: environment)
    }

    /// The process environment (`$TZ` only matters here).
    public static var environment: [String: String] {
        guard let tz = getenv("TZ") else { return [:] }
        return ["TZ": String(cString: tz)]
    }
}
