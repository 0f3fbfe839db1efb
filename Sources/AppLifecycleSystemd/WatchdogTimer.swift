import AppLifecycle
import Synchronization
import SystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// A `CLOCK_MONOTONIC` timerfd that pings the systemd watchdog at half the watchdog interval.
///
/// systemd kills a service with `WatchdogSec=` that does not send `WATCHDOG=1` within the interval
/// (`$WATCHDOG_USEC`). This source fires periodically at half that interval (as `sd_notify(3)` recommends)
/// and sends the ping from the loop thread, so a hung loop stops pinging and systemd notices. It reports no
/// host events. The timer is periodic, so it re-arms itself in the kernel; each readiness reads the expiration
/// count and pings once, however many periods passed.
public final class WatchdogTimer: ReadinessSource {
    /// `"watchdog"`.
    public let name = "watchdog"
    /// `POLLIN`.
    public let pollEvents = Int16(POLLIN)
    /// The time between two pings (half the watchdog interval).
    public let period: Duration
    private let ping: @Sendable () -> Void
    private let descriptor: Mutex<Int32>

    /// Creates a timer that calls `ping` every `period`.
    ///
    /// - Parameters:
    ///   - period: The time between pings; must be positive.
    ///   - ping: What to do on each period, on the loop thread.
    /// - Throws: ``HostSourceError`` if the timerfd cannot be created or armed, or the period is not positive.
    public init(period: Duration, ping: @escaping @Sendable () -> Void) throws {
        guard period > .zero else {
            throw HostSourceError(
                code: .invalidArgument, source: "watchdog", message: "period \(period) is not positive")
        }
        let fd = KernelInterfaces.timerCreate(clock: CLOCK_MONOTONIC)
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: "watchdog", message: "timerfd_create(CLOCK_MONOTONIC)")
        }
        var value = KernelInterfaces.timespecValue(of: period)
        if value.tv_sec == 0 && value.tv_nsec == 0 { value.tv_nsec = 1 }
        guard KernelInterfaces.timerSet(fd, flags: 0, value: value, interval: value) == 0 else {
            let error = errno
            _ = Glibc.close(fd)
            throw HostSourceError(errno: error, source: "watchdog", message: "timerfd_settime(\(period))")
        }
        self.period = period
        self.ping = ping
        self.descriptor = Mutex(fd)
    }

    /// Creates a timer that sends `WATCHDOG=1` through `notifier` at half its watchdog interval.
    ///
    /// - Parameters:
    ///   - notifier: The service manager notifier; its `SystemdBus/ServiceManagerNotifier/watchdogInterval`
    ///     decides the period.
    /// - Returns: `nil` if the watchdog is not enabled for this process.
    /// - Throws: ``HostSourceError`` if the timerfd cannot be created.
    public convenience init?(notifier: ServiceManagerNotifier) throws {
        guard let interval = notifier.watchdogInterval else { return nil }
        try self.init(period: interval / 2) {
            _ = try? notifier.watchdog()
        }
    }

    deinit {
        close()
    }

    /// The timerfd, or `-1` after ``close()``.
    public var fileDescriptor: Int32 { descriptor.withLock { $0 } }

    /// Reads the expiration count and pings once.
    ///
    /// - Parameters:
    ///   - revents: The events the loop saw.
    /// - Returns: Always empty: the watchdog reports no host events.
    /// - Throws: ``HostSourceError`` if reading the timerfd fails.
    public func handleReadiness(_ revents: Int16) throws -> [HostEvent] {
        let fd = fileDescriptor
        guard fd >= 0 else { return [] }
        guard KernelInterfaces.timerRead(fd) != nil else {
            if errno == EAGAIN || errno == EINTR { return [] }
            throw HostSourceError(errno: errno, source: name, message: "read(timerfd)")
        }
        ping()
        return []
    }

    /// Closes the timerfd; idempotent.
    public func close() {
        descriptor.withLock { fd in
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }
}
