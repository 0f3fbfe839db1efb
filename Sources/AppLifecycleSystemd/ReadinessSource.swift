import AppLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// A kernel event source that owns one file descriptor and turns its readiness into host events.
///
/// Every source the bridge reads from the kernel (a timerfd, an inotify instance, a PSI trigger, a
/// `$MEMORY_PRESSURE_WATCH` FIFO or socket) conforms to this protocol, so that any event loop can drive it:
/// the loop registers ``fileDescriptor`` for ``pollEvents`` (level-triggered, as `sd_event_add_io` and
/// `poll(2)` do), and whenever the kernel reports readiness it calls ``handleReadiness(_:)`` on the loop
/// thread with the reported events. A source never waits, never polls and never spawns a thread.
///
/// The contract, which every conforming type in this module keeps:
/// - The descriptor is non-blocking and close-on-exec, and it does not change for the life of the source
///   (a source that must re-open something keeps the same descriptor, for example by re-adding inotify
///   watches). After ``close()`` it reads as `-1`.
/// - ``handleReadiness(_:)`` consumes the readiness it was called for (it reads, drains or re-arms), so a
///   level-triggered loop does not spin. It may return no events: a spurious wake-up, a change that turned
///   out not to be significant, or a source that only acts (the watchdog).
/// - ``handleReadiness(_:)`` throws ``HostSourceError`` with code ``HostSourceError/Code/sourceGone`` when the
///   descriptor will never be useful again (`POLLERR` on a PSI file whose cgroup was removed, a hung-up
///   socket, a removed directory). The loop then unregisters the descriptor and calls ``close()``. Any other
///   thrown error is a failure of this one readiness; the loop logs it and may keep the source.
/// - Sources are `Sendable`: their mutable state is behind a `Mutex`, so the bridge may create a source on
///   one thread and hand it to the loop thread.
///
/// `POLLIN` and `POLLPRI` have the same values as `EPOLLIN` and `EPOLLPRI`, so ``pollEvents`` can be passed to
/// `sd_event_add_io` or `epoll_ctl` unchanged.
public protocol ReadinessSource: AnyObject, Sendable {
    /// A short name for logs: `"timerfd"`, `"localtime-inotify"`, `"psi"`, `"memory-pressure-watch"`, `"watchdog"`.
    var name: String { get }
    /// The descriptor the loop waits on, or `-1` after ``close()``.
    var fileDescriptor: Int32 { get }
    /// The events to wait for: `POLLIN` or `POLLPRI`.
    var pollEvents: Int16 { get }
    /// Turns a readiness report into host events and re-arms the source.
    ///
    /// Called on the loop thread each time the kernel reports readiness on ``fileDescriptor``.
    ///
    /// - Parameters:
    ///   - revents: The events the kernel reported (`poll(2)`'s `revents`, or the epoll events).
    /// - Returns: The host events this readiness means, in the order they happened; often one, possibly none.
    /// - Throws: ``HostSourceError``; ``HostSourceError/Code/sourceGone`` means the loop should drop the source.
    func handleReadiness(_ revents: Int16) throws -> [HostEvent]
    /// Closes the descriptor; idempotent.
    ///
    /// The loop must have unregistered the descriptor before, since the number may be reused at once.
    func close()
}

/// Why a kernel event source could not start or stopped working.
///
/// Shaped like swift-service-lifecycle's errors: an extensible struct with static codes, so new codes are not a
/// breaking change. A source that cannot start throws one of these from its initializer; the bridge logs
/// ``description`` (one clear line) and falls back to the next source.
public struct HostSourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure happened.
    ///
    /// Compare with the static members (`error.code == .notFound`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case notFound = "not-found"
            case permissionDenied = "permission-denied"
            case invalidArgument = "invalid-argument"
            case unsupported
            case invalidConfiguration = "invalid-configuration"
            case sourceGone = "source-gone"
            case systemCallFailed = "system-call-failed"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// The file, directory or socket does not exist (`ENOENT`).
        public static let notFound = Code(.notFound)
        /// The process may not open or configure the source (`EPERM`, `EACCES`).
        public static let permissionDenied = Code(.permissionDenied)
        /// The kernel rejected the request (`EINVAL`), for example a PSI window it does not allow.
        public static let invalidArgument = Code(.invalidArgument)
        /// The kernel or the system lacks the feature: no PSI, no cgroup v2, no timerfd, not a PSI file.
        public static let unsupported = Code(.unsupported)
        /// A setting from outside (an environment variable, a path) is malformed.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The descriptor will never report anything useful again (hang-up, `POLLERR`, removed watch).
        public static let sourceGone = Code(.sourceGone)
        /// Another system call failed; see ``HostSourceError/errno``.
        public static let systemCallFailed = Code(.systemCallFailed)

        /// The code as a short kebab-case string.
        public var description: String { base.rawValue }
    }

    /// What kind of failure happened.
    public var code: Code
    /// The name of the source (``ReadinessSource/name``) that failed.
    public var source: String
    /// What the source tried to do, in words (`"open /proc/pressure/memory"`).
    public var message: String
    /// The `errno` the failing call set, when a system call failed.
    public var errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure happened.
    ///   - source: The name of the failing source.
    ///   - message: What the source tried to do.
    ///   - errno: The `errno` of the failing call, if any.
    public init(code: Code, source: String, message: String, errno: Int32? = nil) {
        self.code = code
        self.source = source
        self.message = message
        self.errno = errno
    }

    /// Creates an error from a failed system call, choosing the code from the `errno`.
    ///
    /// `ENOENT` becomes ``Code/notFound``, `EPERM`/`EACCES` ``Code/permissionDenied``, `EINVAL`
    /// ``Code/invalidArgument``, `EOPNOTSUPP`/`ENOSYS`/`ENOTTY` ``Code/unsupported``, anything else
    /// ``Code/systemCallFailed``.
    ///
    /// - Parameters:
    ///   - errno: The `errno` the call set.
    ///   - source: The name of the failing source.
    ///   - message: What the source tried to do.
    public init(errno: Int32, source: String, message: String) {
        let code: Code
        switch errno {
        case ENOENT: code = .notFound
        case EPERM, EACCES: code = .permissionDenied
        case EINVAL: code = .invalidArgument
        case EOPNOTSUPP, ENOSYS, ENOTTY: code = .unsupported
        default: code = .systemCallFailed
        }
        self.init(code: code, source: source, message: message, errno: errno)
    }

    /// One log line: source, what failed, the `errno` name and text, and the code.
    public var description: String {
        var line = "\(source): \(message)"
        if let errno {
            line += ": \(String(cString: strerror(errno))) (errno \(errno))"
        }
        return line + " [\(code)]"
    }
}
