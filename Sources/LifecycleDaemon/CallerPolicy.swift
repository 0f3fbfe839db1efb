import DesktopIntegration
import FoundationEssentials
import Glibc
import SystemdBus

/// Who may call the daemon, and who a caller is.
///
/// The session bus is per user, but a system-wide bus (or a misconfigured one) can carry
/// other users' connections, so every method call is checked: the caller's uid, as the bus
/// daemon reports it from the kernel (`SO_PEERCRED`, not forgeable by the peer), must be the
/// daemon's own. Missing credentials are refused too. The checks are pure functions of the
/// credentials so they can be tested with injected values.
package struct CallerPolicy: Sendable {
    /// The uid every caller must have (the daemon's `getuid()`).
    let uid: uid_t

    /// Creates a policy for the daemon's user.
    ///
    /// - Parameters:
    ///   - uid: The uid callers must have; the daemon's real uid by default.
    package init(uid: uid_t = getuid()) {
        self.uid = uid
    }

    /// Accepts a caller of the daemon's uid, refuses anyone else with `AccessDenied`.
    ///
    /// - Parameters:
    ///   - credentials: The caller's credentials from the bus daemon, `nil` if unknown.
    ///   - member: The method called, for the message.
    /// - Throws: `org.freedesktop.DBus.Error.AccessDenied` with who was refused.
    func check(_ credentials: BusCredentials?, member: String) throws(BusError) {
        guard let credentials, let callerUID = credentials.uid else {
            throw DaemonError.accessDenied("\(member) refused: the caller's uid is unknown")
        }
        guard callerUID == uid else {
            throw DaemonError.accessDenied(
                "\(member) refused: caller \(credentials.uniqueName) has uid \(callerUID), lifecycled serves uid \(uid) only; call it as that user, or run a lifecycled of your own in your session"
            )
        }
    }

    /// Whether a caller's process is the launched app or in its process group.
    ///
    /// An app lifecycled launched runs in a process group of its own (the group id is its pid),
    /// so its helpers (a shell script's `gdbus call`) may register for it, and nobody else.
    ///
    /// - Parameters:
    ///   - callerPID: The caller's pid from its credentials.
    ///   - appPID: The pid of the process lifecycled launched.
    ///   - processGroup: How to read a pid's process group (`getpgid` by default; injectable for tests).
    static func isSameApp(callerPID: pid_t, appPID: pid_t, processGroup: (pid_t) -> pid_t = { getpgid($0) }) -> Bool {
        callerPID == appPID || processGroup(callerPID) == appPID
    }

    /// The name of a caller's executable: the basename of `/proc/PID/exe`, or `nil`.
    ///
    /// Used as `sourceApplication` for a caller that is not a registered app.
    ///
    /// - Parameters:
    ///   - pid: The caller's pid.
    static func executableName(of pid: pid_t) -> String? {
        CallerExecutable.name(of: pid)
    }
}
