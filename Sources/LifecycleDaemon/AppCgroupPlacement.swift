import FoundationEssentials
import Glibc
import Logging
import SystemdBus

/// Where lifecycled puts each launched app: a cgroup v2 directory of its own, so that
/// suspension uses the cgroup freezer, or the daemon's own cgroup (suspension by `SIGSTOP`).
///
/// With a parent directory, every launch gets `<parent>/app-<id>-<launch>`: created before the
/// spawn, the app moved into it right after (``AppProcess/launch(manifest:launchOptions:environment:baseEnvironment:cgroupDirectory:loop:logger:onExit:)``),
/// and removed once the app has exited. No controller is enabled, so the daemon may stay in the
/// parent (cgroup v2's no-internal-processes rule only concerns controllers).
///
/// ``Mode/automatic`` uses the daemon's own cgroup as the parent when it is a cgroup v2 cgroup
/// other than the root and the daemon may create directories in it: under systemd that is the
/// unit's cgroup with `Delegate=yes` (as in `dist/systemd/user/lifecycled.service`). When that
/// cgroup is offered the memory controller (the user manager delegates `memory`), the daemon
/// moves itself into a leaf of its own, `<parent>/lifecycled` (cgroup v2 puts no process beside
/// a controller's children), and enables `memory` for the apps' cgroups, which is what gives
/// them `memory.reclaim` (``enableMemoryController(in:pid:files:)``). The unit's cgroup, and
/// with it systemd's `$MEMORY_PRESSURE_WATCH` and `systemctl status`, still hold the daemon.
package struct AppCgroupPlacement: Sendable {
    /// How the parent directory is chosen.
    package enum Mode: Sendable, Hashable {
        /// The daemon's own cgroup, when it is delegated (writable) and not the root.
        case automatic
        /// Never: apps stay in the daemon's cgroup and are suspended with `SIGSTOP`.
        case off
        /// This directory (an absolute path inside the cgroup2 mount).
        case under(String)
    }

    /// The directory per-app cgroups are created in; `nil` places none.
    let parentDirectory: String?
    /// Where failed cgroup operations are told: the daemon's (``init(mode:logger:)``).
    private var logger = Logger.discarding

    /// Resolves the parent directory for a mode on this machine.
    ///
    /// - Parameters:
    ///   - mode: How to choose it.
    ///   - movesIntoLeaf: Whether the daemon may move itself into its leaf to enable the memory
    ///     controller for the apps (``enableMemoryController(in:pid:files:)``; lifecycled's main only).
    ///   - logger: Where failed cgroup operations are told.
    init(mode: Mode, movesIntoLeaf: Bool = false, logger: Logger) {
        self.init(
            mode: mode, ownCgroup: ProcFS.unifiedCgroup(of: nil), mountPoint: ProcFS.cgroup2MountPoint(),
            isWritableDirectory: { access($0, W_OK | X_OK) == 0 && access($0 + "/cgroup.freeze", F_OK) == 0 })
        self.logger = logger
        if mode == .automatic, movesIntoLeaf, let parentDirectory {
            switch Self.enableMemoryController(in: parentDirectory, pid: getpid()) {
            case .enabled(let leaf):
                logger.info("the apps' cgroups get the memory controller (memory.reclaim); lifecycled runs in \(leaf)")
            case .alreadyEnabled, .notOffered:
                break
            case .failed(let step, let error):
                logger.warning(
                    "the apps' cgroups get no memory controller, so frozen apps' memory is not reclaimed before apps are ended under memory pressure: \(step): \(String(cString: strerror(error)))"
                )
            }
        }
    }

    /// The daemon's own leaf in its unit's cgroup, once the apps' cgroups get a controller.
    static let leafName = "lifecycled"

    /// What ``enableMemoryController(in:pid:files:)`` did.
    enum MemoryControllerSetup: Equatable {
        /// The daemon moved into this leaf and the parent passes `memory` on.
        case enabled(leaf: String)
        /// The parent passed `memory` on already.
        case alreadyEnabled
        /// The parent is not offered `memory` (not delegated, cgroup v1's memory, or none).
        case notOffered
        /// A step failed with this `errno`; the daemon is back in the parent.
        case failed(step: String, errno: Int32)
    }

    /// Enables the memory controller for the cgroups created under `parent`, the daemon's own.
    ///
    /// cgroup v2's no-internal-processes rule: a cgroup that passes a controller on to its
    /// children holds no process itself. So the daemon first moves into `<parent>/lifecycled`,
    /// then writes `+memory` to the parent's `cgroup.subtree_control`; if that fails, it moves
    /// back, leaving things as they were.
    ///
    /// - Parameters:
    ///   - parent: The daemon's cgroup directory, the apps' cgroups' parent.
    ///   - pid: The daemon's process id (every thread moves with it).
    ///   - files: The file operations (``CgroupMemoryReclaimer/FileAccess/system`` outside tests).
    /// - Returns: What was done.
    static func enableMemoryController(
        in parent: String, pid: Int32, files: CgroupMemoryReclaimer.FileAccess = .system
    ) -> MemoryControllerSetup {
        func lists(_ file: String) -> Bool {
            files.read(parent + "/" + file)?.split(whereSeparator: \.isWhitespace).contains("memory") ?? false
        }
        guard lists("cgroup.controllers") else { return .notOffered }
        if lists("cgroup.subtree_control") { return .alreadyEnabled }
        let leaf = parent + "/" + leafName
        let made = files.makeDirectory(leaf)
        guard made == 0 || made == EEXIST else { return .failed(step: "mkdir \(leaf)", errno: made) }
        let moved = files.write(leaf + "/cgroup.procs", "\(pid)")
        guard moved == 0 else { return .failed(step: "move lifecycled into \(leaf)", errno: moved) }
        let enabled = files.write(parent + "/cgroup.subtree_control", "+memory")
        guard enabled == 0 else {
            _ = files.write(parent + "/cgroup.procs", "\(pid)")
            return .failed(step: "enable memory in \(parent)/cgroup.subtree_control", errno: enabled)
        }
        return .enabled(leaf: leaf)
    }

    /// Resolves the parent directory from the facts ``init(mode:logger:)`` reads.
    ///
    /// - Parameters:
    ///   - mode: How to choose it.
    ///   - ownCgroup: The daemon's cgroup v2 path (the `0::` line of `/proc/self/cgroup`).
    ///   - mountPoint: Where cgroup2 is mounted, if it is.
    ///   - isWritableDirectory: Whether a cgroup directory can take children and has the
    ///     freezer (`cgroup.freeze`, kernel ≥ 5.2, absent in the root cgroup).
    init(mode: Mode, ownCgroup: String?, mountPoint: String?, isWritableDirectory: (String) -> Bool) {
        switch mode {
        case .off:
            parentDirectory = nil
        case .under(let directory):
            parentDirectory = directory
        case .automatic:
            guard let mount = mountPoint, let own = ownCgroup, own.hasPrefix("/"), own != "/" else {
                parentDirectory = nil
                return
            }
            // In its own leaf already (`DelegateSubgroup=lifecycled` on systemd ≥ 254, or a
            // move by an earlier start in this cgroup): the apps go beside it, in the unit's cgroup.
            let unit = own.hasSuffix("/\(Self.leafName)") ? String(own.dropLast(Self.leafName.count + 1)) : own
            guard unit != "" else {
                parentDirectory = nil
                return
            }
            let directory = (mount.hasSuffix("/") ? String(mount.dropLast()) : mount) + unit
            parentDirectory = isWritableDirectory(directory) ? directory : nil
        }
    }

    /// Creates the cgroup for one launch, or returns `nil` (logged) when it cannot.
    ///
    /// - Parameters:
    ///   - appID: The app.
    ///   - launchID: The daemon's number for this launch (unique for the daemon's lifetime).
    /// - Returns: The new directory, or `nil` when there is no parent or `mkdir` failed.
    func makeDirectory(appID: String, launchID: Int) -> String? {
        guard let parentDirectory else { return nil }
        // Launch numbers restart with each daemon: a directory of the same name may be left by a
        // previous daemon, still holding that daemon's app. An empty one is reused; a populated
        // one never is (freezing or killing the new launch would hit the old app), so the name
        // gets a suffix instead.
        for attempt in 1...16 {
            let directory = "\(parentDirectory)/app-\(appID)-\(launchID)" + (attempt == 1 ? "" : ".\(attempt)")
            if mkdir(directory, 0o755) == 0 { return directory }
            guard errno == EEXIST else {
                logger.warning(
                    "cannot create the cgroup \(directory), \(appID) is suspended with SIGSTOP: \(String(cString: strerror(errno)))"
                )
                return nil
            }
            let events = ProcFS.read(directory + "/cgroup.events")
            if events.flatMap({ CgroupFreezer.flag("populated", inEvents: $0) }) == false { return directory }
        }
        logger.warning(
            "every cgroup name for \(appID) launch \(launchID) is taken by running processes; it is suspended with SIGSTOP"
        )
        return nil
    }

    /// Removes a launch's cgroup once its app has exited.
    ///
    /// The app's main process is gone, but processes it started in a new session may remain:
    /// like systemd's `KillMode=control-group`, they are killed (`cgroup.kill`, kernel ≥ 5.14)
    /// and the directory removed once empty. Retries for up to a second while the kernel
    /// finishes the kills; a directory still busy after that is logged and left.
    ///
    /// - Parameters:
    ///   - directory: The directory ``makeDirectory(appID:launchID:)`` returned.
    func removeDirectory(_ directory: String) async {
        for attempt in 0..<20 {
            if rmdir(directory) == 0 || errno == ENOENT { return }
            guard errno == EBUSY else { break }
            if attempt == 0 {
                let fd = open(directory + "/cgroup.kill", O_WRONLY | O_CLOEXEC)
                if fd >= 0 {
                    _ = "1".withCString { write(fd, $0, 1) }
                    close(fd)
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        logger.warning("cannot remove the cgroup \(directory): \(String(cString: strerror(errno)))")
    }
}
