import AppLifecycle
import FoundationEssentials
import Logging
import Synchronization
import SystemdBus

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
/// The watches are sd-event's (`sd_event_add_inotify`, through `SystemdBus.EventLoop`), on the loop
/// given to ``start(on:logger:report:)``. After any relevant event the file watch is added again on
/// whatever inode the path names now (and the old one cancelled), so watching survives replacement.
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
public final class TimeZoneWatcher: Sendable {
    /// What the path resolved to at one moment; two equal snapshots mean no significant change.
    public struct Snapshot: Sendable, Hashable {
        /// The time zone identifier (`"Europe/Berlin"`).
        public var identifier: String
        /// The zone file's bytes, or `nil` when the path is missing or dangling.
        public var contents: [UInt8]?
    }

    private struct State {
        var snapshot: Snapshot
        var directoryWatch: EventSourceToken?
        var fileWatch: EventSourceToken?
        var closed = false
    }

    /// The inotify mask on the file itself, as PID 1 uses it, plus `IN_DELETE_SELF`.
    static let fileMask: UInt32 =
        UInt32(IN_ATTRIB | IN_MOVE_SELF | IN_CLOSE_WRITE | IN_DELETE_SELF) | UInt32(IN_DONT_FOLLOW)
    /// The inotify mask on the directory.
    static let directoryMask: UInt32 = UInt32(IN_CREATE | IN_MOVED_TO) | UInt32(IN_ONLYDIR)

    /// `"localtime-inotify"`.
    public let name = "localtime-inotify"
    /// The watched path (`/etc/localtime` by default).
    public let path: String
    private let directory: String
    private let baseName: String
    private let environment: [String: String]
    private let state: Mutex<State>

    /// Records the current zone; ``start(on:logger:report:)`` starts watching.
    ///
    /// - Parameters:
    ///   - path: The localtime file; tests pass a file in a temporary directory.
    ///   - environment: Where `$TZ` is looked up for the fallback identifier.
    /// - Throws: ``HostSourceError`` if the directory is missing or not a directory. A missing file
    ///   is fine: the directory watch reports when it appears.
    public init(
        path: String = "/etc/localtime",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        let url = URL(fileURLWithPath: path)
        self.path = path
        self.directory = url.deletingLastPathComponent().path
        self.baseName = url.lastPathComponent
        self.environment = environment
        var info = stat()
        guard stat(directory, &info) == 0 else {
            throw HostSourceError(errno: errno, source: "localtime-inotify", message: "watch directory \(directory)")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw HostSourceError(errno: ENOTDIR, source: "localtime-inotify", message: "watch directory \(directory)")
        }
        self.state = Mutex(State(snapshot: Self.snapshot(of: path, environment: environment)))
    }

    deinit {
        close()
    }

    /// The identifier of the zone last seen.
    public var currentIdentifier: String { state.withLock { $0.snapshot.identifier } }

    /// Starts watching the path and its directory on a loop; suspends until the watches are in place.
    ///
    /// - Parameters:
    ///   - loop: The loop whose sd-event holds the watches; `report` runs on its thread.
    ///   - logger: Where a removed directory (the end of the watch) is logged.
    ///   - report: Receives each real change as a `significantTimeChange(.timeZone)` event.
    /// - Throws: ``HostSourceError`` if the directory cannot be watched; `BusError` if the loop has
    ///   shut down.
    public func start(
        on loop: EventLoop, logger: Logger, report: @escaping @Sendable (HostEvent) -> Void
    ) async throws {
        try await loop.run { [self] in
            let directoryWatch: EventSourceToken
            do {
                directoryWatch = try loop.addInotifyOnLoop(path: directory, mask: Self.directoryMask) {
                    [weak self] mask, entry in
                    self?.directoryChanged(mask: mask, entry: entry, loop: loop, logger: logger, report: report)
                }
            } catch let error as BusError {
                throw HostSourceError(
                    errno: error.errno != 0 ? error.errno : EIO, source: "localtime-inotify",
                    message: "watch directory \(directory)")
            }
            let closed = state.withLock { state -> Bool in
                if !state.closed { state.directoryWatch = directoryWatch }
                return state.closed
            }
            if closed {
                directoryWatch.cancel()
                return
            }
            watchFile(on: loop, report: report)
        }
    }

    /// Stops watching; idempotent. The watches are cancelled on the loop thread.
    public func close() {
        let (directoryWatch, fileWatch) = state.withLock { state in
            state.closed = true
            defer {
                state.directoryWatch = nil
                state.fileWatch = nil
            }
            return (state.directoryWatch, state.fileWatch)
        }
        directoryWatch?.cancel()
        fileWatch?.cancel()
    }

    /// Watches the inode the path names now (nothing when it is missing), instead of the one before.
    /// Loop thread.
    private func watchFile(on loop: EventLoop, report: @escaping @Sendable (HostEvent) -> Void) {
        let fileWatch = try? loop.addInotifyOnLoop(path: path, mask: Self.fileMask) { [weak self] _, _ in
            self?.changed(on: loop, report: report)
        }
        let (previous, closed) = state.withLock { state -> (EventSourceToken?, Bool) in
            guard !state.closed else { return (nil, true) }
            defer { state.fileWatch = fileWatch }
            return (state.fileWatch, false)
        }
        previous?.cancel()
        if closed { fileWatch?.cancel() }
    }

    /// An event on the directory. Loop thread.
    private func directoryChanged(
        mask: UInt32, entry: String, loop: EventLoop, logger: Logger, report: @escaping @Sendable (HostEvent) -> Void
    ) {
        if mask & UInt32(IN_IGNORED) != 0 {
            logger.info("\(name) stopped: directory \(directory) was removed; time-zone changes are no longer seen")
            close()
            return
        }
        if mask & UInt32(IN_Q_OVERFLOW) != 0 || entry == baseName { changed(on: loop, report: report) }
    }

    /// Something about the path may have changed: follow its inode, and report a different zone. Loop thread.
    private func changed(on loop: EventLoop, report: @escaping @Sendable (HostEvent) -> Void) {
        watchFile(on: loop, report: report)
        let snapshot = Self.snapshot(of: path, environment: environment)
        let isNew = state.withLock { state -> Bool in
            guard !state.closed, snapshot != state.snapshot else { return false }
            state.snapshot = snapshot
            return true
        }
        guard isNew else { return }
        report(
            .significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: snapshot.identifier)))
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
