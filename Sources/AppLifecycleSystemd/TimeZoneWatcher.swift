import AppLifecycle
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Watches `/etc/localtime` with inotify and reports real changes of the system time zone.
///
/// Watches the way systemd's PID 1 does, plus the directory so no replacement is missed:
/// - the file itself, without following the symlink (`IN_ATTRIB | IN_MOVE_SELF | IN_CLOSE_WRITE |
///   IN_DELETE_SELF | IN_DONT_FOLLOW`): a rewrite of a copied zone file, a link-count change when the link is
///   replaced or removed;
/// - its directory for `IN_CREATE | IN_MOVED_TO` of the name `localtime`: timedated and `ln -sf` write a
///   temporary symlink and `rename(2)` it over `/etc/localtime`, and a missing file can be created later.
///
/// After any relevant event the file watch is re-added on whatever inode the path names now (the old
/// watch is removed if it pointed at another inode), so watching survives replacement.
///
/// De-duplication rule: the watcher keeps a snapshot of the resolved time zone identifier **and** the bytes
/// of the zone file the path resolves to. It emits `AppLifecycle/SignificantTimeChange/Reason/timeZone`
/// only when either differs from the last snapshot. Re-linking or rewriting the same zone (same identifier,
/// same bytes) is not a significant change and emits nothing; a different zone, or the same name with
/// different rules (a copied file rewritten with new data), always emits. A removed `/etc/localtime` means
/// UTC to glibc, so it is reported as `"UTC"` (a remove-then-create sequence thus emits twice).
///
/// The identifier is the part of the symlink target after the last `zoneinfo/`
/// (`../usr/share/zoneinfo/Europe/Berlin` → `Europe/Berlin`). When the file is not such a symlink (a copy),
/// the identifier falls back to `$TZ` (without a leading `:`), then to Foundation's `TimeZone.current`.
public final class TimeZoneWatcher: ReadinessSource {
    /// What the path resolved to at one moment; two equal snapshots mean no significant change.
    public struct Snapshot: Sendable, Hashable {
        /// The time zone identifier (`"Europe/Berlin"`).
        public var identifier: String
        /// The zone file's bytes, or `nil` when the path is missing or dangling.
        public var contents: [UInt8]?
    }

    private struct State {
        var fd: Int32
        var directoryWatch: Int32
        var fileWatch: Int32
        var snapshot: Snapshot
    }

    /// The inotify mask on the file itself, as PID 1 uses it, plus `IN_DELETE_SELF`.
    static let fileMask: UInt32 =
        UInt32(IN_ATTRIB | IN_MOVE_SELF | IN_CLOSE_WRITE | IN_DELETE_SELF) | UInt32(IN_DONT_FOLLOW)
    /// The inotify mask on the directory.
    static let directoryMask: UInt32 = UInt32(IN_CREATE | IN_MOVED_TO) | UInt32(IN_ONLYDIR)

    /// `"localtime-inotify"`.
    public let name = "localtime-inotify"
    /// `POLLIN`.
    public let pollEvents = Int16(POLLIN)
    /// The watched path (`/etc/localtime` by default).
    public let path: String
    private let directory: String
    private let baseName: String
    private let environment: [String: String]
    private let state: Mutex<State>

    /// Starts watching `path` and its directory and records the current zone.
    ///
    /// - Parameters:
    ///   - path: The localtime file; tests pass a file in a temporary directory.
    ///   - environment: Where `$TZ` is looked up for the fallback identifier.
    /// - Throws: ``HostSourceError`` if inotify is unavailable or the directory cannot be watched. A missing
    ///   file is fine: the directory watch reports when it appears.
    public init(
        path: String = "/etc/localtime",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let url = URL(fileURLWithPath: path)
        self.path = path
        self.directory = url.deletingLastPathComponent().path
        self.baseName = url.lastPathComponent
        self.environment = environment
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: "localtime-inotify", message: "inotify_init1")
        }
        let directoryWatch = inotify_add_watch(fd, directory, Self.directoryMask)
        guard directoryWatch >= 0 else {
            let error = errno
            _ = Glibc.close(fd)
            throw HostSourceError(errno: error, source: "localtime-inotify", message: "watch directory \(directory)")
        }
        let fileWatch = inotify_add_watch(fd, path, Self.fileMask)  // -1 (ENOENT) is fine
        let snapshot = Self.snapshot(of: path, environment: environment)
        self.state = Mutex(State(fd: fd, directoryWatch: directoryWatch, fileWatch: fileWatch, snapshot: snapshot))
    }

    deinit {
        close()
    }

    /// The inotify descriptor, or `-1` after ``close()``.
    public var fileDescriptor: Int32 { state.withLock { $0.fd } }

    /// The time zone identifier as of the last change (or the start).
    public var currentIdentifier: String { state.withLock { $0.snapshot.identifier } }

    /// Reads all queued inotify events and reports a time zone change if the zone really changed.
    ///
    /// - Parameters:
    ///   - revents: The events the loop saw.
    /// - Returns: One `.significantTimeChange(.timeZone)` with the new identifier, or nothing.
    /// - Throws: ``HostSourceError`` with ``HostSourceError/Code/sourceGone`` if the directory itself went away.
    public func handleReadiness(_ revents: Int16) throws -> [HostEvent] {
        try state.withLock { state -> [HostEvent] in
            guard state.fd >= 0 else { return [] }
            var relevant = false
            var directoryGone = false
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(state.fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN { break }
                    throw HostSourceError(errno: errno, source: name, message: "read(inotify)")
                }
                if n == 0 { break }
                var offset = 0
                while offset + 16 <= n {
                    let (wd, mask, length) = buffer.withUnsafeBytes { raw in
                        (
                            raw.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                            raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                            Int(raw.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                        )
                    }
                    let nameBytes = buffer[(offset + 16)..<min(offset + 16 + length, n)]
                    let eventName = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    offset += 16 + length
                    if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                        relevant = true
                    } else if wd == state.directoryWatch {
                        if mask & UInt32(IN_IGNORED) != 0 { directoryGone = true }
                        if eventName == baseName { relevant = true }
                    } else if wd == state.fileWatch {
                        relevant = true
                        if mask & UInt32(IN_IGNORED) != 0 { state.fileWatch = -1 }
                    }
                }
            }
            if directoryGone {
                throw HostSourceError(code: .sourceGone, source: name, message: "directory \(directory) was removed")
            }
            guard relevant else { return [] }
            // Re-add the file watch on whatever inode the path names now.
            let newWatch = inotify_add_watch(state.fd, path, Self.fileMask)
            if state.fileWatch >= 0, newWatch != state.fileWatch {
                _ = inotify_rm_watch(state.fd, state.fileWatch)  // EINVAL if the kernel already dropped it
            }
            state.fileWatch = newWatch
            let snapshot = Self.snapshot(of: path, environment: environment)
            guard snapshot != state.snapshot else { return [] }
            state.snapshot = snapshot
            return [
                .significantTimeChange(
                    SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: snapshot.identifier))
            ]
        }
    }

    /// Closes the inotify descriptor (dropping all watches); idempotent.
    public func close() {
        state.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    // MARK: - Resolution

    /// The time zone identifier a `/etc/localtime` symlink target names: the part after the last `zoneinfo/`.
    ///
    /// - Parameters:
    ///   - linkTarget: The symlink's target as `readlink` returns it.
    /// - Returns: The identifier (`"Europe/Berlin"`), or `nil` if the target is not under a `zoneinfo` directory.
    public static func identifier(forLinkTarget linkTarget: String) -> String? {
        // The last "zoneinfo/" in the path (Swift's own String API: no Foundation).
        guard let range = linkTarget.ranges(of: "zoneinfo/").last else { return nil }
        let identifier = String(linkTarget[range.upperBound...])
        guard !identifier.isEmpty, !identifier.hasPrefix("/"), !identifier.split(separator: "/").contains("..") else {
            return nil
        }
        return identifier
    }

    /// The time zone identifier a `$TZ` value names, as glibc reads it: a leading `:` dropped, a path
    /// under a `zoneinfo` directory reduced to its identifier, anything else taken as it is.
    ///
    /// - Parameters:
    ///   - value: The value of `$TZ`.
    /// - Returns: The identifier, or `nil` when nothing is left (an empty `$TZ`, which glibc takes for UTC).
    public static func identifier(forTZ value: String) -> String? {
        let name = value.hasPrefix(":") ? String(value.dropFirst()) : value
        guard !name.isEmpty else { return nil }
        return identifier(forLinkTarget: name) ?? name
    }

    /// Resolves what `path` means now: the identifier and the zone file's bytes.
    ///
    /// - Parameters:
    ///   - path: The localtime path.
    ///   - environment: Where `$TZ` is looked up for the fallback.
    /// - Returns: The snapshot; `"UTC"` with no contents if the path does not exist.
    public static func snapshot(of path: String, environment: [String: String]) -> Snapshot {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return Snapshot(identifier: "UTC", contents: nil)
        }
        let contents = KernelInterfaces.readFile(path)
        if (info.st_mode & S_IFMT) == S_IFLNK, let target = readLink(path),
            let identifier = identifier(forLinkTarget: target)
        {
            return Snapshot(identifier: identifier, contents: contents)
        }
        return Snapshot(identifier: fallbackIdentifier(environment: environment), contents: contents)
    }

    private static func fallbackIdentifier(environment: [String: String]) -> String {
        if let tz = environment["TZ"], let identifier = identifier(forTZ: tz) { return identifier }
        // Debian's /etc/timezone names the zone when /etc/localtime is a copy, not a link.
        if let text = KernelInterfaces.readFile("/etc/timezone"),
            let name = String(decoding: text, as: UTF8.self).split(whereSeparator: \.isWhitespace).first
        {
            return String(name)
        }
        return "localtime"
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
