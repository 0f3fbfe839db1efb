import Glibc

/// Why an operation on a hosted app's process failed.
///
/// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`), like
/// ``ManifestError``: an opaque ``code`` over a private enum, a message, and the `errno` when a
/// system call was the cause.
struct AppProcessError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is. Compare with the static members (`error.code == .notRunning`).
    struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case spawnFailed = "spawn-failed"
            case pidfdUnavailable = "pidfd-unavailable"
            case invalidEnvironment = "invalid-environment"
            case notRunning = "not-running"
            case signalFailed = "signal-failed"
            case freezerFailed = "freezer-failed"
            case notConfirmed = "not-confirmed"
            case superseded
            case loopShutDown = "loop-shut-down"
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// `posix_spawn` failed (the executable vanished, is not executable, resources).
        static let spawnFailed = Code(.spawnFailed)
        /// The kernel has no pidfd support, or pidfd_open failed.
        static let pidfdUnavailable = Code(.pidfdUnavailable)
        /// An environment entry given by the caller is not a valid `NAME=value`.
        static let invalidEnvironment = Code(.invalidEnvironment)
        /// The process has already exited.
        static let notRunning = Code(.notRunning)
        /// Sending a signal failed.
        static let signalFailed = Code(.signalFailed)
        /// Writing the cgroup freezer or watching its events failed.
        static let freezerFailed = Code(.freezerFailed)
        /// The process did not reach the requested state (the kernel reported otherwise).
        static let notConfirmed = Code(.notConfirmed)
        /// A newer request (resume after suspend, or the reverse) superseded this one.
        static let superseded = Code(.superseded)
        /// The event loop has shut down.
        static let loopShutDown = Code(.loopShutDown)

        /// The code's stable name, as in logs: `spawn-failed`.
        var description: String { base.rawValue }
    }

    /// What kind of failure it is.
    var code: Code
    /// A sentence for people.
    var message: String
    /// The `errno` of the failing system call, if there was one.
    var errno: Int32?

    /// Creates a process error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure it is.
    ///   - message: A sentence for people.
    ///   - errno: The `errno` of the failing call, if any.
    init(_ code: Code, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.errno = errno
    }

    /// `message: strerror [code]`.
    var description: String {
        let reason = errno.map { ": " + String(cString: strerror($0)) } ?? ""
        return "\(message)\(reason) [\(code)]"
    }
}
