import Foundation
import Glibc

/// What the benchmarks read of one process's `/proc/PID/stat`: its parent, process group and CPU time.
struct ProcessStat {
    /// The parent process (`ppid`).
    let parent: pid_t
    /// The process group (`pgrp`).
    let processGroup: pid_t
    /// User and system CPU time (`utime` + `stime`), in clock ticks.
    let cpuTicks: UInt64
    /// The CPU time of its children it has reaped (`cutime` + `cstime`), in clock ticks.
    let reapedChildrenTicks: UInt64

    /// Reads a process's stat line; `nil` when it is gone or the line is not one.
    init?(pid: pid_t) {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // After the command: state(0) ppid(1) pgrp(2) … utime(11) stime(12) cutime(13) cstime(14).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 14, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) else { return nil }
        self.parent = parent
        processGroup = group
        cpuTicks = (UInt64(fields[11]) ?? 0) + (UInt64(fields[12]) ?? 0)
        reapedChildrenTicks = (UInt64(fields[13]) ?? 0) + (UInt64(fields[14]) ?? 0)
    }
}
