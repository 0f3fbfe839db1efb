import Glibc

/// Why an operation on a hosted app's process failed.
///
/// An extensible struct with static codes, like ``ManifestError``; `errno` is kept when a
/// system call was the cause.
struct AppProcessError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure it is.
    struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name.
        var rawValue: String

        /// Creates a code from its stable name.
        ///
        /// - Parameters:
        ///   - rawValue: The name.
        init(rawValue: String) { self.rawValue = rawValue }

        /// `posix_spawn` failed (the executable vanished, is not executable, resources).
        static let spawnFailed = Code(rawValue: "spawn-failed")
        /// The kernel has no pidfd support, or pidfd_open failed.
        static let pidfdUnavailable = Code(rawValue: "pidfd-unavailable")
        /// An environment entry given by the caller is not a valid `NAME=value`.
        static let invalidEnvironment = Code(rawValue: "invalid-environment")
        /// The process has already exited.
        static let notRunning = Code(rawValue: "not-running")
        /// Sending a signal failed.
        static let signalFailed = Code(rawValue: "signal-failed")
        /// Writing the cgroup freezer or watching its events failed.
        static let freezerFailed = Code(rawValue: "freezer-failed")
        /// The process did not reach the requested state (the kernel reported otherwise).
        static let notConfirmed = Code(rawValue: "not-confirmed")
        /// A newer request (resume after suspend, or the reverse) superseded this one.
        static let superseded = Code(rawValue: "superseded")
        /// The event loop has shut down.
        static let loopShutDown = Code(rawValue: "loop-shut-down")

        /// The stable name.
        var description: String { rawValue }
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
