import AppLifecycle
import Glibc

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
