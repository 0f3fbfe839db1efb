/// How long a hosted app gets to end by itself before the daemon signals it.
///
/// ``AppProcess/terminate(policy:onStep:)`` waits ``deadline`` (the app was asked to end,
/// over the bus, and runs `applicationWillTerminate`), then sends `SIGTERM`, waits
/// ``grace`` and sends `SIGKILL`. The defaults follow iOS's ~5 s `applicationWillTerminate`
/// budget and systemd's habit of a short grace after `SIGTERM`; tests inject short ones.
package struct TerminationPolicy: Sendable, Hashable {
    /// How long the app may take to end by itself before `SIGTERM`.
    var deadline: Duration
    /// How long after `SIGTERM` before `SIGKILL`.
    var grace: Duration

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - deadline: How long before `SIGTERM` (default 5 s; `.zero` signals at once).
    ///   - grace: How long after `SIGTERM` before `SIGKILL` (default 2 s).
    package init(deadline: Duration = .seconds(5), grace: Duration = .seconds(2)) {
        self.deadline = deadline
        self.grace = grace
    }

    /// The step of the escalation that just happened.
    enum Step: Sendable, Hashable {
        /// The deadline passed: the process (continued first if stopped) was sent `SIGTERM`.
        case sentTerminate
        /// The grace passed too: the process was sent `SIGKILL`.
        case sentKill
    }
}
