import Glibc

/// Why ``AtomicFile/read(from:limit:)`` did not return a file's contents.
///
/// lifecycled's state files (the schedule, the push queue and registrations), the manifests,
/// `lifecycled.conf` and an app's push keys go through that one bounded read, so a file grown past
/// its limit (hand-edited, or filled by an attacker) is refused before it is loaded into memory.
///
/// Shaped like swift-service-lifecycle's `ServiceGroupError` (the project's one error shape): an
/// opaque ``code`` over a private enum (new codes are not a breaking change), a ``message`` that
/// says what a person can do about it, and the `errno` of a failed system call.
public struct FileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Compare with the static members (`error.code == .notFound`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case notFound = "not-found"
            case notRegularFile = "not-regular-file"
            case tooLarge = "too-large"
            case unreadable
        }

        private let base: Base

        private init(_ base: Base) { self.base = base }

        /// There is no file at the path.
        public static let notFound = Code(.notFound)
        /// The path names a directory, a FIFO, a device or a socket.
        public static let notRegularFile = Code(.notRegularFile)
        /// The file holds more bytes than the limit.
        public static let tooLarge = Code(.tooLarge)
        /// `open`, `fstat` or `read` failed; see ``FileReadError/errno``.
        public static let unreadable = Code(.unreadable)

        /// The code's name, as in logs: `too-large`.
        public var description: String { base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// The file asked for.
    public let path: String
    /// What went wrong and what to do about it.
    public let message: String
    /// The system's error number, when `open`, `fstat` or `read` failed.
    public let errno: Int32?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - path: The file asked for.
    ///   - message: What went wrong and what to do.
    ///   - errno: The system's error number, if any.
    public init(_ code: Code, path: String, _ message: String, errno: Int32? = nil) {
        self.code = code
        self.path = path
        self.message = message
        self.errno = errno
    }

    /// There is no file at `path`.
    static func notFound(path: String) -> FileReadError {
        FileReadError(.notFound, path: path, "\(path) does not exist", errno: ENOENT)
    }

    /// `path` names a directory, a FIFO, a device or a socket.
    static func notRegularFile(path: String) -> FileReadError {
        FileReadError(.notRegularFile, path: path, "\(path) is not a regular file; replace it with one")
    }

    /// The file holds `size` bytes, more than `limit`.
    static func tooLarge(path: String, size: Int, limit: Int) -> FileReadError {
        FileReadError(
            .tooLarge, path: path,
            "\(path) is \(size) bytes, larger than the \(limit)-byte limit; shorten it or remove it")
    }

    /// `open`, `fstat` or `read` failed with `errno`.
    static func unreadable(path: String, errno: Int32) -> FileReadError {
        FileReadError(
            .unreadable, path: path,
            "cannot read \(path): \(String(cString: strerror(errno))); check its permissions", errno: errno)
    }

    /// The message: what went wrong with which file and what to do.
    public var description: String { message }
}
