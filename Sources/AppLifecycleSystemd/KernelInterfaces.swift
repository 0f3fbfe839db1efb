import CLinuxSupport
import Glibc

/// Small wrappers over Linux interfaces that Swift's `Glibc` module does not export.
///
/// The timerfd calls come from `CLinuxSupport` (`<sys/timerfd.h>` is not part of the Glibc module map).
package enum KernelInterfaces {
    /// `TFD_TIMER_ABSTIME` from `<sys/timerfd.h>`.
    package static let timerAbsoluteTime: Int32 = cls_tfd_timer_abstime
    /// `TFD_TIMER_CANCEL_ON_SET` from `<sys/timerfd.h>`.
    package static let timerCancelOnSet: Int32 = cls_tfd_timer_cancel_on_set

    /// `timerfd_create(clock, TFD_CLOEXEC|TFD_NONBLOCK)`; sets `errno` and returns -1 on failure.
    package static func timerCreate(clock: clockid_t) -> Int32 {
        cls_timerfd_create(clock)
    }

    /// `timerfd_settime(fd, flags, &spec, NULL)`; returns 0 or -1 with `errno`.
    package static func timerSet(
        _ fd: Int32, flags: Int32, value: Glibc.timespec, interval: Glibc.timespec = Glibc.timespec()
    ) -> Int32 {
        cls_timerfd_settime(fd, flags, value, interval)
    }

    /// Reads a timerfd's 8-byte expiration count; `nil` with `errno` set when `read` failed.
    package static func timerRead(_ fd: Int32) -> UInt64? {
        var count: UInt64 = 0
        let n = withUnsafeMutableBytes(of: &count) { read(fd, $0.baseAddress, 8) }
        return n == 8 ? count : nil
    }

    /// The current `errno`.
    package static var lastError: Int32 { errno }

    /// Converts a duration to a `timespec`, clamping negatives to zero.
    package static func timespecValue(of duration: Duration) -> Glibc.timespec {
        let (seconds, attoseconds) = duration.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return Glibc.timespec() }
        return Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    }

    /// Reads a whole small file (procfs, sysfs, a zoneinfo file) up to `limit` bytes; `nil` if it cannot be read.
    package static func readFile(_ path: String, limit: Int = 1 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { _ = Glibc.close(fd) }
        var result: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 8192)
        while result.count < limit {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            result.append(contentsOf: buffer[0..<n])
        }
        return result
    }

    /// Reads a small text file; `nil` if it cannot be read.
    package static func readText(_ path: String) -> String? {
        readFile(path).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Writes all bytes to a descriptor in one `write` call, as PSI requires (a trigger is one write).
    ///
    /// - Returns: `nil` on success, else the `errno` (`EAGAIN` for a short write, which PSI never does).
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        if bytes.isEmpty { return nil }
        while true {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return errno
            }
            return n == bytes.count ? nil : EAGAIN
        }
    }
}

/// One line of `/proc/self/mountinfo` (proc(5)).
struct MountInfoEntry: Sendable, Hashable {
    /// The device major number of the mounted file system.
    var major: UInt32
    /// The device minor number.
    var minor: UInt32
    /// The directory in the mounted file system that is mounted here.
    var root: String
    /// Where it is mounted, with `\040`-style escapes decoded.
    var mountPoint: String
    /// The file system type (`proc`, `cgroup2`, `tmpfs`).
    var fileSystemType: String

    /// Parses the whole mountinfo text; malformed lines are skipped.
    package static func parse(_ text: String) -> [MountInfoEntry] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 7, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count, dash >= 6 else {
                return nil
            }
            let device = fields[2].split(separator: ":")
            guard device.count == 2, let major = UInt32(device[0]), let minor = UInt32(device[1]) else { return nil }
            return MountInfoEntry(
                major: major, minor: minor,
                root: unescape(fields[3]), mountPoint: unescape(fields[4]),
                fileSystemType: fields[dash + 1]
            )
        }
    }

    /// Decodes the octal escapes (`\040` space, `\011` tab, `\012` newline, `\134` backslash) mountinfo uses.
    package static func unescape(_ field: String) -> String {
        guard field.contains("\\") else { return field }
        var bytes: [UInt8] = []
        let source = Array(field.utf8)
        var i = 0
        while i < source.count {
            if source[i] == UInt8(ascii: "\\"), i + 3 < source.count,
                let value = UInt8(String(decoding: source[(i + 1)...(i + 3)], as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                i += 4
            } else {
                bytes.append(source[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The major and minor numbers of a `dev_t`, as glibc's `gnu_dev_major`/`gnu_dev_minor` compute them.
    package static func split(device: UInt64) -> (major: UInt32, minor: UInt32) {
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return (UInt32(truncatingIfNeeded: major), UInt32(truncatingIfNeeded: minor))
    }
}
