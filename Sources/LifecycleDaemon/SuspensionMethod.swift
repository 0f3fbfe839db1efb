/// How the supervisor suspends a hosted app's process.
///
/// The cgroup v2 freezer is preferred: it freezes every process of the cgroup at once,
/// invisibly to the app (no `SIGCHLD`, no job-control state a shell parent could undo), and
/// the kernel reports completion in `cgroup.events`. It is only safe when the app has a
/// cgroup *of its own*: freezing a cgroup shared with the daemon would freeze the daemon.
/// Otherwise `SIGSTOP` is sent to the app's process group and the stop confirmed by the
/// `T` state in `/proc/PID/stat`. ``select(appCgroup:daemonCgroup:cgroup2MountPoint:hasFreezeFile:)``
/// makes the choice once, at launch, and ``AppProcess/suspensionMethod`` records it.
enum SuspensionMethod: Sendable, Hashable, CustomStringConvertible {
    /// Write `1` to `cgroup.freeze` in this directory (its absolute path in the cgroup2 mount).
    case freezer(cgroupDirectory: String)
    /// Send `SIGSTOP` to the process group; `SIGCONT` resumes.
    case stopSignal

    /// Chooses the method for an app.
    ///
    /// The freezer is chosen only when all hold: the cgroup2 hierarchy is mounted; the app's
    /// cgroup v2 path is known, is not the root, and differs from the daemon's (so it was
    /// delegated to the app); and that cgroup has a `cgroup.freeze` file (kernel ≥ 5.2,
    /// not the root cgroup). On a cgroup v1 or hybrid system where apps stay in the daemon's
    /// cgroup, this is `stopSignal`.
    ///
    /// - Parameters:
    ///   - appCgroup: The app's cgroup v2 path (the `0::` line of `/proc/PID/cgroup`).
    ///   - daemonCgroup: The daemon's cgroup v2 path.
    ///   - cgroup2MountPoint: Where cgroup2 is mounted, if it is.
    ///   - hasFreezeFile: Whether a path exists and is writable (checked on `<dir>/cgroup.freeze`).
    static func select(
        appCgroup: String?, daemonCgroup: String?, cgroup2MountPoint: String?,
        hasFreezeFile: (String) -> Bool
    ) -> SuspensionMethod {
        guard let mount = cgroup2MountPoint, let app = appCgroup, app.hasPrefix("/"), app != "/",
            app != daemonCgroup
        else { return .stopSignal }
        let directory = (mount.hasSuffix("/") ? String(mount.dropLast()) : mount) + app
        return hasFreezeFile(directory + "/cgroup.freeze") ? .freezer(cgroupDirectory: directory) : .stopSignal
    }

    /// `freezer(<dir>)` or `SIGSTOP`.
    var description: String {
        switch self {
        case .freezer(let directory): return "freezer(\(directory))"
        case .stopSignal: return "SIGSTOP"
        }
    }
}
