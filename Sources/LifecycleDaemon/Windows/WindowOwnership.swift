import AppLifecycleSystemd
import Glibc

/// Which hosted app a top-level window belongs to.
///
/// Where the source gives the window's pid (X11's `_NET_WM_PID`), the pid decides: the app whose
/// launched process it is, whose process group it is in, or whose cgroup holds it; a pid that
/// belongs to no hosted app means a window of some other program, which is ignored even if its
/// class matches. Without a pid (Wayland), the window's app id or `WM_CLASS` is matched against
/// each app's window classes: its manifest id and its `startupWMClass` (the desktop entry's
/// `StartupWMClass`), compared without case, as X11 class names are capitalised (`XTerm`).
struct WindowOwnership: Sendable {
    /// A hosted app that may own windows.
    struct Candidate: Sendable, Hashable {
        /// The app id.
        var id: String
        /// The pid of its launched process, or of its registration, if any.
        var processID: pid_t?
        /// Its launch's cgroup directory (a path under the cgroup2 mount), if it has one.
        var cgroupDirectory: String?
        /// The names its windows' app id or class may have (lowercased on creation).
        var windowClasses: Set<String>

        /// Creates a candidate.
        init(id: String, processID: pid_t?, cgroupDirectory: String?, windowClasses: [String]) {
            self.id = id
            self.processID = processID
            self.cgroupDirectory = cgroupDirectory
            self.windowClasses = Set((windowClasses + [id]).map { $0.lowercased() })
        }
    }

    /// The hosted apps, in the registry's order (the first match wins).
    var candidates: [Candidate]
    /// The cgroup2 mount point, to turn `/proc/PID/cgroup` paths into directories.
    var cgroup2MountPoint: String?
    /// The unified cgroup path of a pid (`/proc/PID/cgroup`), injectable for tests.
    var cgroupOf: @Sendable (pid_t) -> String? = { ProcFS.unifiedCgroup(of: $0) }
    /// Whether a pid is the app's process or in its process group, injectable for tests.
    var isSameApp: @Sendable (_ windowPID: pid_t, _ appPID: pid_t) -> Bool = {
        CallerPolicy.isSameApp(callerPID: $0, appPID: $1)
    }

    /// The id of the app that owns `window`, or `nil` for a window of a program lifecycled does not host.
    ///
    /// - Parameters:
    ///   - window: The window.
    func owner(of window: TopLevelWindow) -> String? {
        if let pid = window.processID, pid > 0 {
            if let app = candidates.first(where: { $0.processID.map { isSameApp(pid, $0) } ?? false }) {
                return app.id
            }
            if let path = cgroupOf(pid), let mount = cgroup2MountPoint {
                let directory = mount + (path == "/" ? "" : path)
                if let app = candidates.first(where: { candidate in
                    guard let cgroup = candidate.cgroupDirectory else { return false }
                    return directory == cgroup || directory.hasPrefix(cgroup + "/")
                }) {
                    return app.id
                }
            }
            return nil
        }
        let names = [window.appID, window.instanceName].compactMap { $0?.lowercased() }.filter { !$0.isEmpty }
        return candidates.first { !$0.windowClasses.isDisjoint(with: names) }?.id
    }

    /// The windows of each app that owns at least one, in the order the source reported them.
    ///
    /// - Parameters:
    ///   - windows: Every window the source reports.
    func windowsByApp(_ windows: [TopLevelWindow]) -> [String: [TopLevelWindow]] {
        var result: [String: [TopLevelWindow]] = [:]
        for window in windows {
            guard let id = owner(of: window) else { continue }
            result[id, default: []].append(window)
        }
        return result
    }
}
