import Synchronization

/// The clients a display-server fixture started (``SwaySession``, ``KWinSession``, ``X11Session``):
/// each stopped by its own pid, SIGTERM first and SIGKILL after 5 s, one at a time or all at once.
final class ChildProcessSet: Sendable {
    private let children = Mutex<[ChildProcess]>([])

    /// Keeps a started child, to be stopped by ``stopAll()`` at the latest.
    func add(_ child: ChildProcess) { children.withLock { $0.append(child) } }

    /// Stops one child and waits for it.
    func stop(_ child: ChildProcess) {
        child.terminateAndWait(escalatingAfter: .seconds(5))
        children.withLock { $0.removeAll { $0 === child } }
    }

    /// Stops every child kept, and waits for each; safe to call more than once.
    func stopAll() {
        let all = children.withLock { children in
            defer { children.removeAll() }
            return children
        }
        all.forEach { $0.terminateAndWait(escalatingAfter: .seconds(5)) }
    }
}
