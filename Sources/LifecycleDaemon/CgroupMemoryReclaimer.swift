import FoundationEssentials
import Glibc
import SystemdBus

/// Takes memory back from a frozen app's cgroup through cgroup v2's `memory.reclaim` (Linux ≥ 5.19).
///
/// Writing a byte count to `<cgroup>/memory.reclaim` makes the kernel reclaim that much from the
/// cgroup (file pages dropped or written back, anonymous pages swapped out) without waking a
/// task: the write returns once that much was reclaimed, or fails with `EAGAIN` when less could
/// be (no swap for anonymous memory, pages locked). The file exists only where the memory
/// controller is enabled for the cgroup (its parent's `cgroup.subtree_control` lists `memory`)
/// on a kernel that has it; cgroup v1 and hybrid layouts have no such file for the apps.
///
/// One ``reclaim(directory:)`` asks for the cgroup's whole `memory.current` and measures
/// `memory.current` again afterwards: what the kernel actually freed, whatever the write said.
/// The write blocks for as long as the kernel reclaims, so it runs on a ``DetachedThread``, never
/// on the main actor or a loop thread. The file access is injectable (``FileAccess``) so that
/// tests can play `EAGAIN`, `ENOENT`, `EINVAL` and partial reclaim on any machine.
struct CgroupMemoryReclaimer: Sendable {
    /// The file operations the reclaimer uses; ``system`` is the real one.
    struct FileAccess: Sendable {
        /// Whether a path exists.
        var exists: @Sendable (String) -> Bool
        /// A small file's text, or `nil` when it cannot be read.
        var read: @Sendable (String) -> String?
        /// Writes a text in one `write(2)`: `0`, or the `errno` of the `open` or the `write`.
        var write: @Sendable (_ path: String, _ text: String) -> Int32
        /// Creates a directory (mode 0755): `0`, `EEXIST` when it is there already, or the `errno`.
        var makeDirectory: @Sendable (String) -> Int32 = { path in mkdir(path, 0o755) == 0 ? 0 : errno }

        /// The real files.
        static let system = FileAccess(
            exists: { access($0, F_OK) == 0 },
            read: { ProcFS.read($0) },
            write: { path, text in
                let fd = open(path, O_WRONLY | O_CLOEXEC)
                guard fd >= 0 else { return errno }
                defer { close(fd) }
                let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
                return written == text.utf8.count ? 0 : (written < 0 ? errno : EIO)
            })
    }

    /// How the write to `memory.reclaim` ended.
    enum Outcome: Sendable, Hashable {
        /// The kernel reclaimed all that was asked (or the cgroup held nothing to reclaim).
        case complete
        /// `EAGAIN`: the kernel reclaimed less than was asked.
        case partial
        /// No `memory.current` or no `memory.reclaim` (`ENOENT`): no memory controller on the
        /// app's cgroup, cgroup v1, or a kernel older than 5.19.
        case unavailable
        /// Any other failure: `EINVAL` (a kernel that rejects the request), `EBUSY`, no thread.
        case failed(errno: Int32)
    }

    /// What one reclaim did.
    struct Reclaim: Sendable, Hashable {
        /// How the write ended.
        var outcome: Outcome
        /// `memory.current` before the write, if it could be read.
        var bytesBefore: UInt64?
        /// `memory.current` after the write, if it could be read.
        var bytesAfter: UInt64?

        /// What the cgroup holds less after the write than before (0 when unknown or it grew).
        var reclaimedBytes: UInt64 {
            guard let bytesBefore, let bytesAfter, bytesBefore > bytesAfter else { return 0 }
            return bytesBefore - bytesAfter
        }

        /// Whether the kernel took the request and freed memory (or the cgroup held none): the
        /// app need not be purged below the critical level.
        var relievedPressure: Bool {
            switch outcome {
            case .complete: return true
            case .partial: return reclaimedBytes > 0
            case .unavailable, .failed: return false
            }
        }
    }

    /// The file operations.
    let files: FileAccess

    /// Creates a reclaimer.
    ///
    /// - Parameters:
    ///   - files: The file operations (``FileAccess/system`` outside tests).
    init(files: FileAccess = .system) { self.files = files }

    /// Whether the cgroups created under `parent` get `memory.reclaim`: the parent has the file
    /// itself (the memory controller reaches it on a kernel ≥ 5.19) and passes the controller on
    /// (its `cgroup.subtree_control` lists `memory`).
    ///
    /// - Parameters:
    ///   - parent: ``AppCgroupPlacement/parentDirectory``; `nil`: no per-app cgroups, so no.
    func isAvailable(under parent: String?) -> Bool {
        guard let parent, files.exists(parent + "/memory.reclaim"),
            let controllers = files.read(parent + "/cgroup.subtree_control")
        else { return false }
        return controllers.split(whereSeparator: \.isWhitespace).contains("memory")
    }

    /// Reclaims as much as the kernel can from one cgroup, on a thread of its own.
    ///
    /// - Parameters:
    ///   - directory: The app's cgroup directory (``HostedApp/cgroupDirectory``).
    /// - Returns: How it ended and `memory.current` before and after.
    func reclaim(directory: String) async -> Reclaim {
        await withCheckedContinuation { (continuation: CheckedContinuation<Reclaim, Never>) in
            let started = DetachedThread.start { [self] in
                continuation.resume(returning: reclaimBlocking(directory: directory))
            }
            if started != 0 { continuation.resume(returning: Reclaim(outcome: .failed(errno: started))) }
        }
    }

    /// The blocking part of ``reclaim(directory:)``: read `memory.current`, ask for all of it,
    /// read it again.
    ///
    /// - Parameters:
    ///   - directory: The cgroup directory.
    func reclaimBlocking(directory: String) -> Reclaim {
        guard let before = currentBytes(directory) else { return Reclaim(outcome: .unavailable) }
        guard before > 0 else { return Reclaim(outcome: .complete, bytesBefore: 0, bytesAfter: 0) }
        let outcome: Outcome
        switch files.write(directory + "/memory.reclaim", "\(before)") {
        case 0: outcome = .complete
        case EAGAIN: outcome = .partial
        case ENOENT: outcome = .unavailable
        case let error: outcome = .failed(errno: error)
        }
        return Reclaim(outcome: outcome, bytesBefore: before, bytesAfter: currentBytes(directory))
    }

    /// The cgroup's `memory.current`, or `nil`.
    private func currentBytes(_ directory: String) -> UInt64? {
        files.read(directory + "/memory.current")
            .flatMap { $0.split(whereSeparator: \.isWhitespace).first.flatMap { UInt64($0) } }
    }
}

extension CgroupMemoryReclaimer.Reclaim {
    /// A reclaim that read nothing.
    ///
    /// - Parameters:
    ///   - outcome: How it ended.
    init(outcome: CgroupMemoryReclaimer.Outcome) { self.init(outcome: outcome, bytesBefore: nil, bytesAfter: nil) }
}
