import FoundationEssentials
import Glibc

/// Readers for the `/proc` and cgroup files the supervisor looks at.
///
/// The parsers are pure functions over the file text, so they are unit-tested on fixed
/// strings; the readers only add the file access.
enum ProcFS {
    /// The scheduler state letter of a process (`R`, `S`, `D`, `T`, `t`, `Z`, …), from `/proc/PID/stat`.
    ///
    /// - Returns: `nil` when the process is gone or the file cannot be parsed.
    static func state(of pid: pid_t) -> Character? {
        read("/proc/\(pid)/stat").flatMap(state(fromStat:))
    }

    /// Parses the state letter of a `/proc/PID/stat` line.
    ///
    /// The second field, `comm`, is in parentheses and may itself contain spaces and `)`, so
    /// the state is the first non-space character after the *last* `)`.
    ///
    /// - Parameters:
    ///   - stat: The text of `/proc/PID/stat`.
    static func state(fromStat stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// The resident set size of a process in bytes, from `/proc/PID/statm` (pages × page size).
    ///
    /// - Returns: `nil` when the process is gone or the file cannot be parsed.
    static func residentBytes(of pid: pid_t) -> UInt64? {
        guard let text = read("/proc/\(pid)/statm"), let pages = residentPages(fromStatm: text) else { return nil }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Parses the resident page count (the second field) of `/proc/PID/statm`.
    ///
    /// - Parameters:
    ///   - statm: The text of `/proc/PID/statm`.
    static func residentPages(fromStatm statm: String) -> UInt64? {
        let fields = statm.split(whereSeparator: { $0 == " " || $0 == "\n" })
        return fields.count >= 2 ? UInt64(fields[1]) : nil
    }

    /// The cgroup v2 path of a process (the `0::` line of `/proc/PID/cgroup`), like `/user.slice/app.scope`.
    ///
    /// - Parameters:
    ///   - pid: The process, or `nil` for this process (`/proc/self/cgroup`).
    static func unifiedCgroup(of pid: pid_t?) -> String? {
        read("/proc/\(pid.map(String.init) ?? "self")/cgroup").flatMap(unifiedCgroup(fromProcCgroup:))
    }

    /// Parses the cgroup v2 path from the text of `/proc/PID/cgroup`.
    ///
    /// - Parameters:
    ///   - text: The file's text (one `hierarchy-id:controllers:path` line per hierarchy).
    static func unifiedCgroup(fromProcCgroup text: String) -> String? {
        text.split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
    }

    /// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on hybrid systems).
    static func cgroup2MountPoint() -> String? {
        read("/proc/self/mountinfo").flatMap(cgroup2MountPoint(fromMountinfo:))
    }

    /// Parses the first cgroup2 mount point from the text of `/proc/self/mountinfo`.
    ///
    /// Each line is `id parent major:minor root mountpoint options [optional…] - fstype source super`;
    /// the filesystem type follows the ` - ` separator.
    ///
    /// - Parameters:
    ///   - text: The file's text.
    static func cgroup2MountPoint(fromMountinfo text: String) -> String? {
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count > 4, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count,
                fields[dash + 1] == "cgroup2"
            else { continue }
            return String(fields[4])
        }
        return nil
    }

    /// Reads a small text file whole, or returns `nil`.
    ///
    /// - Parameters:
    ///   - path: The file.
    static func read(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}
