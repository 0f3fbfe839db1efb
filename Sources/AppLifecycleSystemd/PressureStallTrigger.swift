import AppLifecycle
import Synchronization
import SystemdBus

#if canImport(Glibc)
    import Glibc
#endif

/// A PSI (pressure stall information) memory trigger: `POLLPRI` when tasks stalled on memory too long.
///
/// The trigger file is the own cgroup's `memory.pressure` on a pure cgroup v2 system, else the system-wide
/// `/proc/pressure/memory` (see ``discoverPressureFile(procSelfCgroup:mountInfo:fileExists:)``). The file is
/// opened `O_RDWR | O_NONBLOCK | O_CLOEXEC` and the trigger line (`"some 150000 2000000"`) is written in one
/// `write`, including the trailing NUL byte, as the kernel's PSI documentation requires. The kernel then
/// reports `POLLPRI` at most once per window while the stall exceeds the threshold; the `poll` itself
/// consumes the event, so nothing is read. `POLLERR` means the file went away (its cgroup was removed).
///
/// One object is one trigger line: a `some` trigger (some tasks stalled) reports
/// `AppLifecycle/MemoryWarning/Level/low`, a `full` trigger (all non-idle tasks stalled) reports
/// `AppLifecycle/MemoryWarning/Level/critical`; the bridge creates both. Unprivileged processes on newer
/// kernels may only use windows that are multiples of 2 s, hence the 2 s default window; the kernel accepts
/// windows from 500 ms to 10 s and a threshold no larger than the window.
public final class PressureStallTrigger: ReadinessSource {
    /// Which PSI line the trigger watches.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// At least one task stalled on memory: reported as `AppLifecycle/MemoryWarning/Level/low`.
        case some
        /// All non-idle tasks stalled on memory at once: reported as `AppLifecycle/MemoryWarning/Level/critical`.
        case full

        /// The warning level this kind reports.
        public var level: MemoryWarning.Level {
            switch self {
            case .some: return .low
            case .full: return .critical
            }
        }
    }

    /// The system-wide PSI memory file.
    public static let systemPressureFile = "/proc/pressure/memory"

    /// `"psi"`.
    public let name = "psi"
    /// `POLLPRI`.
    public let pollEvents = Int16(POLLPRI)
    /// Which PSI line this trigger watches.
    public let kind: Kind
    /// The trigger file in use.
    public let path: String
    /// How long tasks must stall within one window.
    public let stall: Duration
    /// The window.
    public let window: Duration
    private let descriptor: Mutex<Int32>

    /// Opens the trigger file and installs the trigger.
    ///
    /// - Parameters:
    ///   - kind: `some` (→ low) or `full` (→ critical).
    ///   - stall: How long tasks must stall within one window; 150 ms by default.
    ///   - window: The window; 2 s by default.
    ///   - path: The PSI file; `nil` discovers the own cgroup's file or `/proc/pressure/memory`.
    /// - Throws: ``HostSourceError``: ``HostSourceError/Code/notFound`` for a missing file (no PSI),
    ///   ``HostSourceError/Code/permissionDenied``, ``HostSourceError/Code/invalidArgument`` when the kernel
    ///   rejects the thresholds, ``HostSourceError/Code/unsupported`` when PSI is compiled in but disabled.
    public init(
        kind: Kind = .some,
        stall: Duration = .milliseconds(150),
        window: Duration = .seconds(2),
        path: String? = nil
    ) throws {
        let path = path ?? Self.discoverPressureFile()
        self.kind = kind
        self.path = path
        self.stall = stall
        self.window = window
        guard stall > .zero, window > .zero, stall <= window else {
            throw HostSourceError(
                code: .invalidArgument, source: "psi",
                message:
                    "threshold \(stall) must be positive and at most the window \(window)"
            )
        }
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            throw HostSourceError(errno: errno, source: "psi", message: "open \(path)")
        }
        let trigger = Self.triggerLine(kind: kind, stall: stall, window: window)
        if let error = KernelInterfaces.writeAll(fd, Array(trigger.utf8) + [0]) {
            _ = Glibc.close(fd)
            throw HostSourceError(errno: error, source: "psi", message: "write trigger '\(trigger)' to \(path)")
        }
        self.descriptor = Mutex(fd)
    }

    deinit {
        close()
    }

    /// The trigger line written to the file, without the NUL byte.
    public var triggerText: String { Self.triggerLine(kind: kind, stall: stall, window: window) }

    /// The kernel's trigger line, `<kind> <stall µs> <window µs>`.
    private static func triggerLine(kind: Kind, stall: Duration, window: Duration) -> String {
        "\(kind.rawValue) \(stall.saturatingMicroseconds) \(window.saturatingMicroseconds)"
    }

    /// The trigger file's descriptor, or `-1` after ``close()``.
    public var fileDescriptor: Int32 { descriptor.withLock { $0 } }

    /// Maps `POLLPRI` to a memory warning of this trigger's level.
    ///
    /// - Parameters:
    ///   - revents: The events the loop saw.
    /// - Returns: One `.memoryWarning` with source `"psi"` on `POLLPRI`, else nothing.
    /// - Throws: ``HostSourceError/Code/sourceGone`` on `POLLERR` (the PSI file went away).
    public func handleReadiness(_ revents: Int16) throws -> [HostEvent] {
        if revents & Int16(POLLERR) != 0 {
            throw HostSourceError(
                code: .sourceGone, source: name, message: "POLLERR on \(path): the PSI file went away")
        }
        guard revents & Int16(POLLPRI) != 0 else { return [] }
        return [.memoryWarning(MemoryWarning(level: kind.level, source: name))]
    }

    /// Closes the trigger file, which removes the trigger; idempotent.
    public func close() {
        descriptor.withLock { fd in
            if fd >= 0 { _ = Glibc.close(fd) }
            fd = -1
        }
    }

    // MARK: - Discovery

    /// The PSI memory file for this process.
    ///
    /// Like `sd_event_add_memory_pressure`: on a pure cgroup v2 system (the only line of `/proc/self/cgroup`
    /// is `0::/path`) the own cgroup's `memory.pressure` under the cgroup2 mount, if it exists; on a hybrid or
    /// legacy system (a v1 hierarchy owns the memory controller) or if the file is missing,
    /// ``systemPressureFile``.
    ///
    /// - Parameters:
    ///   - procSelfCgroup: The contents of `/proc/self/cgroup`; read from the system if `nil`.
    ///   - mountInfo: The contents of `/proc/self/mountinfo`; read from the system if `nil`.
    ///   - fileExists: Whether a path exists; `access(F_OK)` by default.
    /// - Returns: The path to open.
    public static func discoverPressureFile(
        procSelfCgroup: String? = nil,
        mountInfo: String? = nil,
        fileExists: (String) -> Bool = { access($0, F_OK) == 0 }
    ) -> String {
        guard let cgroup = procSelfCgroup ?? KernelInterfaces.readText("/proc/self/cgroup"),
            let mounts = mountInfo ?? KernelInterfaces.readText("/proc/self/mountinfo"),
            let candidate = cgroupPressureFile(procSelfCgroup: cgroup, mountInfo: mounts),
            fileExists(candidate)
        else { return systemPressureFile }
        return candidate
    }

    /// The own cgroup's `memory.pressure` path on a pure cgroup v2 system, without checking that it exists.
    ///
    /// - Parameters:
    ///   - procSelfCgroup: The contents of `/proc/self/cgroup`.
    ///   - mountInfo: The contents of `/proc/self/mountinfo`.
    /// - Returns: The path, or `nil` on a hybrid/legacy system or without a cgroup2 mount.
    public static func cgroupPressureFile(procSelfCgroup: String, mountInfo: String) -> String? {
        let lines = procSelfCgroup.split(separator: "\n").filter { !$0.isEmpty }
        guard lines.count == 1, lines[0].hasPrefix("0::") else { return nil }
        let cgroupPath = String(lines[0].dropFirst(3))
        guard cgroupPath.hasPrefix("/"), !cgroupPath.split(separator: "/").contains("..") else { return nil }
        guard let mount = MountInfoEntry.parse(mountInfo).first(where: { $0.fileSystemType == "cgroup2" }) else {
            return nil
        }
        // The mount's root is normally "/"; inside a cgroup namespace the path is relative to it already.
        var base = mount.mountPoint
        while base.hasSuffix("/") && base.count > 1 { base.removeLast() }
        let relative = cgroupPath == "/" ? "" : cgroupPath
        return (base == "/" ? "" : base) + relative + "/memory.pressure"
    }
}
