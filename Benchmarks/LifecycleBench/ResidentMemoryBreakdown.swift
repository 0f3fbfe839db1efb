import Foundation

/// Where a process's resident memory is, from /proc/PID/smaps: RSS per mapped file and
/// permission (`lifecycled r-xp` is the executable's code, `libc.so.6 r--p` a library's
/// read-only data, `[anon] rw-p` the heap and stacks), for `lifecycle-bench idle`.
struct ResidentMemoryBreakdown {
    /// One group of mappings: every mapping of one file with one set of permissions.
    struct Group {
        /// `<file name> <permissions>`, e.g. `libsystemd.so.0.35.0 r-xp`.
        let name: String
        /// Resident KiB.
        var rssKiB = 0
        /// Proportional set size in KiB (shared pages divided among their users).
        var pssKiB = 0
    }

    /// The groups, largest RSS first; those with nothing resident are left out.
    let groups: [Group]

    /// Reads /proc/PID/smaps.
    ///
    /// - Parameters:
    ///   - pid: The process.
    /// - Throws: If smaps cannot be read.
    init(pid: pid_t) throws {
        // Read to the end: /proc files report a size of 0, and a one-read String(contentsOfFile:) stops early.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var groups: [String: Group] = [:]
        var current: String?
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let first = fields.first else { continue }
            if first.contains("-"), fields.count >= 5, first.allSatisfy({ $0.isHexDigit || $0 == "-" }) {
                // A mapping's header: range, permissions, offset, device, inode, [path].
                let file = fields.count > 5 ? (fields[5].split(separator: "/").last.map(String.init) ?? "") : "[anon]"
                current = "\(file) \(fields[1])"
            } else if let current, fields.count >= 2, let kib = Int(fields[1]) {
                if first == "Rss:" { groups[current, default: Group(name: current)].rssKiB += kib }
                if first == "Pss:" { groups[current, default: Group(name: current)].pssKiB += kib }
            }
        }
        self.groups = groups.values.filter { $0.rssKiB > 0 }.sorted { ($0.rssKiB, $1.name) > ($1.rssKiB, $0.name) }
    }

    /// RSS in KiB per file, summed over its mappings: the executable against each library.
    var rssKiBByFile: [String: Int] {
        groups.reduce(into: [:]) { totals, group in
            totals[String(group.name.split(separator: " ").first ?? ""), default: 0] += group.rssKiB
        }
    }
}
