import Glibc
import Synchronization
import SystemdBus

/// The cgroup v2 freezer of one cgroup directory.
///
/// Freezing is asynchronous in the kernel: writing `1` to `cgroup.freeze` starts it, and the
/// `frozen` key of `cgroup.events` turns `1` when every task is frozen. The kernel signals each
/// change of `cgroup.events` as an inotify `IN_MODIFY` (and a poll priority event), so
/// ``watch(until:loop:completion:)`` waits on an inotify watch of the event loop (sd-event's own):
/// no polling, no sleeping.
struct CgroupFreezer: Sendable, Hashable {
    /// The cgroup's directory in the cgroup2 mount.
    let directory: String

    /// Creates the freezer of a cgroup directory.
    ///
    /// - Parameters:
    ///   - directory: The cgroup's absolute directory, for example `/sys/fs/cgroup/app-1.scope`.
    init(directory: String) { self.directory = directory }

    /// Asks the kernel to freeze (`1`) or thaw (`0`) the cgroup.
    ///
    /// - Parameters:
    ///   - frozen: Whether to freeze.
    /// - Throws: ``AppProcessError`` with ``AppProcessError/Code/freezerFailed``.
    func request(frozen: Bool) throws(AppProcessError) {
        try Self.write(frozen ? "1" : "0", to: directory + "/cgroup.freeze")
    }

    /// Whether `cgroup.events` says the cgroup is frozen, or `nil` if it cannot be read.
    var isFrozen: Bool? {
        ProcFS.read(directory + "/cgroup.events").flatMap(Self.frozen(fromEvents:))
    }

    /// Parses the `frozen` key of `cgroup.events` (`populated 1\nfrozen 0\n`).
    ///
    /// - Parameters:
    ///   - events: The file's text.
    static func frozen(fromEvents events: String) -> Bool? {
        flag("frozen", inEvents: events)
    }

    /// Parses a `0`/`1` key of `cgroup.events` (`populated`, `frozen`); `nil` if it is missing.
    ///
    /// - Parameters:
    ///   - events: The file's text.
    static func flag(_ key: String, inEvents events: String) -> Bool? {
        for line in events.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2 && fields[0] == key { return fields[1] == "1" }
        }
        return nil
    }

    /// Moves a process into a cgroup (writes its pid to `cgroup.procs`).
    ///
    /// The same operation a systemd scope unit performs on the processes it is given; a
    /// process the app forks before the move stays behind, so call it right after spawning.
    ///
    /// - Parameters:
    ///   - directory: The cgroup directory.
    /// - Throws: ``AppProcessError`` with ``AppProcessError/Code/freezerFailed``.
    static func move(_ pid: pid_t, into directory: String) throws(AppProcessError) {
        try write("\(pid)", to: directory + "/cgroup.procs")
    }

    /// Calls `completion` once `cgroup.events` shows `frozen` equal to the target.
    ///
    /// Checks once right after the watch is in place (the change may already have happened),
    /// then on every inotify event. Call on the loop thread; `completion` runs on it.
    ///
    /// - Parameters:
    ///   - frozen: The state to wait for.
    ///   - loop: The event loop that holds the inotify watch.
    ///   - completion: Called once with success, or with the failure to read the file.
    /// - Returns: The watch, to cancel it early (for example when the process exits).
    /// - Throws: ``AppProcessError`` if inotify cannot be set up.
    func watch(
        until frozen: Bool, loop: EventLoop,
        completion: @escaping @Sendable (Result<Void, AppProcessError>) -> Void
    ) throws(AppProcessError) -> FreezerWatch {
        let watch = FreezerWatch()
        let check: @Sendable () -> Void = { [self] in
            switch isFrozen {
            case frozen?: if watch.finish() { completion(.success(())) }
            case nil:
                if watch.finish() {
                    completion(.failure(AppProcessError(.freezerFailed, "cannot read \(directory)/cgroup.events")))
                }
            default: break
            }
        }
        do {
            let token = try loop.addInotifyOnLoop(path: directory + "/cgroup.events", mask: UInt32(IN_MODIFY)) { _, _ in
                check()
            }
            watch.attach(token)
        } catch {
            throw AppProcessError(.freezerFailed, "cannot watch \(directory)/cgroup.events: \(error)")
        }
        check()
        return watch
    }

    private static func write(_ value: String, to path: String) throws(AppProcessError) {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw AppProcessError(.freezerFailed, "open \(path)", errno: errno) }
        defer { close(fd) }
        let written = value.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard written == value.utf8.count else {
            throw AppProcessError(.freezerFailed, "write '\(value)' to \(path)", errno: errno)
        }
    }
}

/// One inotify watch on a `cgroup.events` file (see ``CgroupFreezer/watch(until:loop:completion:)``).
///
/// The watch is sd-event's (`sd_event_add_inotify`): ``finish()`` cancels it and reports whether
/// this call was the one that finished it, so the completion runs exactly once.
final class FreezerWatch: Sendable {
    private struct State {
        var token: EventSourceToken?
        var finished = false
    }

    private let state = Mutex<State>(State())

    /// Keeps the loop source's token, so ``finish()`` can cancel it.
    ///
    /// - Parameters:
    ///   - token: The token of the inotify watch.
    func attach(_ token: EventSourceToken) {
        let cancelNow = state.withLock { state -> Bool in
            if state.finished { return true }
            state.token = token
            return false
        }
        if cancelNow { token.cancel() }
    }

    /// Cancels the watch; returns whether this call did it (the first one).
    @discardableResult
    func finish() -> Bool {
        let taken = state.withLock { state -> EventSourceToken?? in
            if state.finished { return nil }
            state.finished = true
            defer { state.token = nil }
            return .some(state.token)
        }
        guard let token = taken else { return false }
        token?.cancel()
        return true
    }
}
