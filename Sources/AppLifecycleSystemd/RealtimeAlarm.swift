import FoundationEssentials
import Glibc
import Synchronization

/// One `CLOCK_REALTIME` timerfd armed at an absolute instant with `TFD_TIMER_CANCEL_ON_SET`:
/// what a schedule of local notifications sleeps on (no polling).
///
/// It goes off at the instant, at once when the machine resumes past it, and with a
/// ``Reading/clockSet`` when the wall clock is set (`clock_settime`, `date -s`, an NTP step), after
/// which the owner takes what is due and re-arms. A time-zone change does not touch the kernel
/// clock; the owner recomputes its instants and re-arms itself.
package final class RealtimeAlarm: Sendable {
    /// What reading the timer found.
    package enum Reading: Sendable, Equatable {
        /// The armed instant arrived.
        case expired
        /// The wall clock was set; the armed instant may now be past or far away.
        case clockSet
        /// Nothing (a spurious wake-up).
        case nothing
    }

    private let state: Mutex<Int32>

    /// Creates the timerfd, disarmed.
    ///
    /// - Throws: ``HostSourceError`` when `timerfd_create` fails.
    package init() throws {
        let fd = KernelInterfaces.timerCreate(clock: CLOCK_REALTIME)
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: "timerfd", message: "timerfd_create(CLOCK_REALTIME)")
        }
        state = Mutex(fd)
    }

    deinit { close() }

    /// The timerfd to poll for `POLLIN`, or -1 after ``close()``.
    package var fileDescriptor: Int32 { state.withLock { $0 } }

    /// Arms the alarm at an instant (seconds since the epoch, to the nanosecond), or disarms it for `nil`.
    /// An instant in the past goes off at once. Also clears a pending clock-set report.
    ///
    /// - Throws: ``HostSourceError`` when `timerfd_settime` fails.
    package func arm(at instant: Double?) throws {
        try state.withLock { fd in
            guard fd >= 0 else {
                throw HostSourceError(code: .sourceGone, source: "timerfd", message: "arm after close")
            }
            var value = timespec()
            if let instant, instant.isFinite {
                let clamped = min(max(instant, 0), Double(Int32.max) * 4)
                value.tv_sec = Int(clamped.rounded(.down))
                value.tv_nsec = Int((clamped - clamped.rounded(.down)) * 1_000_000_000)
            }
            // 0 disarms: an instant at or before the epoch is "now", one nanosecond after it.
            if instant != nil, value.tv_sec == 0, value.tv_nsec == 0 { value.tv_nsec = 1 }
            let flags = KernelInterfaces.timerAbsoluteTime | KernelInterfaces.timerCancelOnSet
            guard KernelInterfaces.timerSet(fd, flags: flags, value: value) == 0 else {
                throw HostSourceError(errno: errno, source: "timerfd", message: "timerfd_settime(\(instant ?? 0))")
            }
        }
    }

    /// Reads the timer after the loop saw it readable.
    ///
    /// - Throws: ``HostSourceError`` for a read error other than `EAGAIN`/`EINTR`/`ECANCELED`.
    package func read() throws -> Reading {
        try state.withLock { fd in
            guard fd >= 0 else { return .nothing }
            if KernelInterfaces.timerRead(fd) != nil { return .expired }
            let error = errno
            switch error {
            case ECANCELED: return .clockSet
            case EAGAIN, EINTR: return .nothing
            default: throw HostSourceError(errno: error, source: "timerfd", message: "read(timerfd)")
            }
        }
    }

    /// Closes the timerfd; idempotent.
    package func close() {
        state.withLock { fd in
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }
}
