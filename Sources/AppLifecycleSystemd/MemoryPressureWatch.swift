import AppLifecycle
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// systemd's memory pressure service protocol: `$MEMORY_PRESSURE_WATCH` and `$MEMORY_PRESSURE_WRITE`.
///
/// Implements the client side the way `sd_event_add_memory_pressure` (systemd ≥ 254) does:
/// - `$MEMORY_PRESSURE_WATCH` unset → ``Setup/notConfigured`` (the bridge uses ``PressureStallTrigger``);
///   empty or `/dev/null` → ``Setup/disabled``: the service manager explicitly turned monitoring off, which is
///   not an error; a relative or non-normalized path → ``HostSourceError/Code/invalidConfiguration``.
/// - `$MEMORY_PRESSURE_WRITE`, if set, is Base64 (it may encode a trailing NUL); it is decoded and written to
///   the descriptor right after opening or connecting.
/// - The path names a **regular file**: it must live on procfs or cgroupfs (a PSI file; else
///   ``HostSourceError/Code/unsupported``, where sd-event says `ENOTTY`). It is opened `O_RDWR` and watched
///   for `POLLPRI`; nothing is ever read.
/// - A **FIFO** or **character device**: watched for `POLLIN`; every readiness drains the queued bytes and
///   reports one warning.
/// - An **`AF_UNIX` socket**: a `SOCK_STREAM` socket is connected to it (the protocol's documented type;
///   `SOCK_SEQPACKET` is tried only when the listener rejects a stream with `EPROTOTYPE`), watched for
///   `POLLIN`, drained on every readiness.
/// - A directory → ``HostSourceError/Code/invalidConfiguration``; anything else → unsupported.
///
/// Two deliberate differences from sd-event, both to avoid wake-ups that mean nothing:
/// - A PSI file with `$MEMORY_PRESSURE_WRITE` unset gets systemd's default trigger
///   (``defaultTrigger``, `"some 200000 2000000"` plus NUL): a PSI file without a trigger reports
///   `POLLPRI | POLLERR` permanently. (systemd itself always sets both variables together.)
/// - A FIFO is opened `O_RDWR | O_NONBLOCK` and nothing is written into it: the process holding a write
///   end itself means a writer closing the FIFO (`echo 1 > fifo`) never turns it into a permanent hang-up,
///   so the FIFO keeps working for every later writer; and bytes written into it would be read back by this
///   very watch as a false pressure event.
///
/// Hang-up: a socket whose peer closed (EOF, `POLLHUP`, `POLLERR`) or a PSI file reporting `POLLERR` throws
/// ``HostSourceError/Code/sourceGone``, after reporting data that arrived with the EOF; the bridge drops the
/// source, as sd-event disables it.
///
/// Every readiness reports `.memoryWarning(level:source: "memory-pressure-watch")`. The protocol has one
/// degree of pressure; the level is `AppLifecycle/MemoryWarning/Level/critical` when the trigger written is
/// a `full` line, else `AppLifecycle/MemoryWarning/Level/low`.
public final class MemoryPressureWatch: ReadinessSource {
    /// What the environment asks for.
    public enum Configuration: Sendable, Hashable {
        /// `$MEMORY_PRESSURE_WATCH` is not set.
        case notConfigured
        /// `$MEMORY_PRESSURE_WATCH` is empty or `/dev/null`: memory pressure handling is explicitly off.
        case disabled
        /// Watch this absolute path and write these bytes (decoded `$MEMORY_PRESSURE_WRITE`, `nil` if unset).
        case watch(path: String, write: [UInt8]?)
    }

    /// The result of setting up from the environment.
    public enum Setup: Sendable {
        /// `$MEMORY_PRESSURE_WATCH` is not set; use another memory source.
        case notConfigured
        /// Memory pressure handling is explicitly turned off; use no memory-pressure source at all.
        case disabled
        /// The watch is set up.
        case watching(MemoryPressureWatch)
    }

    /// What kind of inode the path names.
    public enum Kind: String, Sendable, Hashable {
        /// A PSI file on procfs or cgroupfs; `POLLPRI`.
        case pressureFile = "psi-file"
        /// A FIFO; `POLLIN`, drained.
        case fifo
        /// A character device; `POLLIN`, drained.
        case characterDevice = "character-device"
        /// A connected `AF_UNIX` socket; `POLLIN`, drained.
        case socket
    }

    /// systemd's default trigger (`MEMORY_PRESSURE_DEFAULT_TYPE/THRESHOLD/WINDOW`): 200 ms per 2 s window.
    public static let defaultTrigger = "some 200000 2000000"
    /// The `source` of the warnings this watch reports.
    public static let warningSource = "memory-pressure-watch"

    /// `"memory-pressure-watch"`.
    public let name = "memory-pressure-watch"
    /// The watched path.
    public let path: String
    /// What kind of inode the path names.
    public let kind: Kind
    /// `POLLPRI` for a PSI file, `POLLIN` otherwise.
    public let pollEvents: Int16
    /// The level each readiness reports.
    public let level: MemoryWarning.Level
    private struct State {
        var fd: Int32
        var peerClosed: Bool
    }
    private let state: Mutex<State>

    /// Reads the protocol's two environment variables.
    ///
    /// - Parameters:
    ///   - environment: The environment; the process environment by default.
    /// - Returns: What the environment asks for.
    /// - Throws: ``HostSourceError/Code/invalidConfiguration`` for a relative or non-normalized path or
    ///   invalid Base64.
    public static func configuration(
        from environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Configuration {
        guard let watch = environment["MEMORY_PRESSURE_WATCH"] else { return .notConfigured }
        if watch.isEmpty || watch == "/dev/null" { return .disabled }
        guard isNormalizedAbsolutePath(watch) else {
            throw HostSourceError(
                code: .invalidConfiguration, source: warningSource,
                message: "$MEMORY_PRESSURE_WATCH is not a normalized absolute path: \(watch)"
            )
        }
        guard let encoded = environment["MEMORY_PRESSURE_WRITE"] else { return .watch(path: watch, write: nil) }
        let trimmed = encoded.filter { !$0.isWhitespace }
        guard let data = Data(base64Encoded: trimmed) else {
            throw HostSourceError(
                code: .invalidConfiguration, source: warningSource,
                message: "$MEMORY_PRESSURE_WRITE is not valid Base64"
            )
        }
        return .watch(path: watch, write: Array(data))
    }

    /// Sets up the watch the environment asks for.
    ///
    /// - Parameters:
    ///   - environment: The environment; the process environment by default.
    /// - Returns: ``Setup/notConfigured``, ``Setup/disabled`` or the running watch.
    /// - Throws: ``HostSourceError`` if the configuration is invalid or the path cannot be watched.
    public static func setUp(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> Setup {
        switch try configuration(from: environment) {
        case .notConfigured: return .notConfigured
        case .disabled: return .disabled
        case .watch(let path, let write): return .watching(try MemoryPressureWatch(path: path, write: write))
        }
    }

    /// Opens or connects to `path` according to its inode type and writes `write` into it.
    ///
    /// - Parameters:
    ///   - path: An absolute path to a PSI file, a FIFO, a character device or an `AF_UNIX` socket.
    ///   - write: The bytes to write after opening; `nil` means none (a PSI file then gets ``defaultTrigger``).
    ///   - mountInfo: The contents of `/proc/self/mountinfo` for the PSI file check; read if `nil`.
    /// - Throws: ``HostSourceError`` with a clear message.
    public init(path: String, write: [UInt8]?, mountInfo: String? = nil) throws {
        let source = Self.warningSource
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw HostSourceError(errno: errno, source: source, message: "stat \(path)")
        }
        let fd: Int32
        let kind: Kind
        var bytes = write ?? []
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            kind = .pressureFile
            let mounts = MountInfoEntry.parse(mountInfo ?? KernelInterfaces.readText("/proc/self/mountinfo") ?? "")
            let device = MountInfoEntry.split(device: UInt64(info.st_dev))
            let fileSystem = mounts.last { $0.major == device.major && $0.minor == device.minor }?.fileSystemType
            guard let fileSystem, ["proc", "cgroup2"].contains(fileSystem) else {
                throw HostSourceError(
                    code: .unsupported, source: source,
                    message:
                        "\(path) is a regular file on \(fileSystem ?? "an unknown file system"), not a PSI file on procfs or cgroupfs"
                )
            }
            if write == nil { bytes = Array(Self.defaultTrigger.utf8) + [0] }
            fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        case S_IFIFO:
            kind = .fifo
            bytes = []  // see the type's discussion: never write into our own FIFO
            fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        case S_IFCHR:
            kind = .characterDevice
            fd = open(path, (bytes.isEmpty ? O_RDONLY : O_RDWR) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        case S_IFSOCK:
            kind = .socket
            fd = try Self.connect(path)
        case S_IFDIR:
            throw HostSourceError(
                code: .invalidConfiguration, source: source, message: "\(path) is a directory", errno: EISDIR)
        default:
            throw HostSourceError(
                code: .unsupported, source: source, message: "\(path) is neither a PSI file, a FIFO nor a socket")
        }
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: source, message: "open \(path)")
        }
        if let error = KernelInterfaces.writeAll(fd, bytes) {
            _ = Glibc.close(fd)
            throw HostSourceError(
                errno: error, source: source, message: "write $MEMORY_PRESSURE_WRITE (\(bytes.count) bytes) to \(path)")
        }
        self.path = path
        self.kind = kind
        self.pollEvents = kind == .pressureFile ? Int16(POLLPRI) : Int16(POLLIN)
        let written = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        self.level = written.hasPrefix("full") ? .critical : .low
        self.state = Mutex(State(fd: fd, peerClosed: false))
    }

    deinit {
        close()
    }

    /// The watched descriptor, or `-1` after ``close()``.
    public var fileDescriptor: Int32 { state.withLock { $0.fd } }

    /// Reports one warning per readiness, draining FIFOs and sockets.
    ///
    /// - Parameters:
    ///   - revents: The events the loop saw.
    /// - Returns: One `.memoryWarning` when pressure was signalled, else nothing.
    /// - Throws: ``HostSourceError/Code/sourceGone`` when the socket's peer hung up or the PSI file reports
    ///   `POLLERR`.
    public func handleReadiness(_ revents: Int16) throws -> [HostEvent] {
        let warning: [HostEvent] = [.memoryWarning(MemoryWarning(level: level, source: Self.warningSource))]
        return try state.withLock { state -> [HostEvent] in
            guard state.fd >= 0 else { return [] }
            if kind == .pressureFile {
                if revents & Int16(POLLERR) != 0 {
                    throw HostSourceError(
                        code: .sourceGone, source: name, message: "POLLERR on \(path): the PSI file went away")
                }
                return revents & Int16(POLLPRI) != 0 ? warning : []
            }
            if state.peerClosed {
                throw HostSourceError(code: .sourceGone, source: name, message: "\(path) hung up")
            }
            var received = 0
            var endOfFile = false
            var buffer = [UInt8](repeating: 0, count: Int(PIPE_BUF))
            while true {
                let n = buffer.withUnsafeMutableBytes { read(state.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    received += n
                    continue
                }
                if n == 0 {
                    endOfFile = true
                    break
                }
                if errno == EINTR { continue }
                if errno == EAGAIN { break }
                if kind == .socket, errno == ECONNRESET {
                    endOfFile = true
                    break
                }
                throw HostSourceError(errno: errno, source: name, message: "read \(path)")
            }
            let hangUp = revents & Int16(POLLHUP | POLLERR) != 0
            if kind == .socket && (endOfFile || hangUp) {
                guard received > 0 else {
                    throw HostSourceError(code: .sourceGone, source: name, message: "\(path) hung up")
                }
                state.peerClosed = true  // report this data now, drop the source on the next readiness
            }
            return received > 0 ? warning : []
        }
    }

    /// Closes the descriptor (for a socket: disconnects); idempotent.
    public func close() {
        state.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
            state.fd = -1
        }
    }

    // MARK: - Helpers

    static func isNormalizedAbsolutePath(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.contains("//") else { return false }
        if path == "/" { return true }
        if path.hasSuffix("/") { return false }
        return !path.split(separator: "/").contains { $0 == "." || $0 == ".." }
    }

    private static func connect(_ path: String) throws -> Int32 {
        let source = warningSource
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            throw HostSourceError(
                code: .invalidConfiguration, source: source,
                message: "socket path longer than \(capacity - 1) bytes: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        var lastError: Int32 = 0
        for type in [Int32(SOCK_STREAM.rawValue), Int32(SOCK_SEQPACKET.rawValue)] {
            let fd = socket(AF_UNIX, type | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                throw HostSourceError(errno: errno, source: source, message: "socket(AF_UNIX)")
            }
            // A blocking connect: on AF_UNIX it completes at once unless the listener's backlog is full.
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if result == 0 {
                let flags = fcntl(fd, F_GETFL)
                _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
                return fd
            }
            lastError = errno
            _ = Glibc.close(fd)
            if lastError != EPROTOTYPE { break }
        }
        throw HostSourceError(errno: lastError, source: source, message: "connect to \(path)")
    }
}
