import Glibc

/// Why ``AtomicFile/read(from:limit:)`` did not return a file's contents.
///
/// Each case says what a person can do about it in its ``description``. lifecycled's state files
/// (the schedule, the push queue and registrations), the manifests, `lifecycled.conf` and an app's
/// push keys go through that one bounded read, so a file grown past its limit (hand-edited, or
/// filled by an attacker) is refused before it is loaded into memory.
public enum FileReadError: Error, Hashable, Sendable, CustomStringConvertible {
    /// There is no file at the path.
    case notFound(path: String)
    /// The path names a directory, a FIFO, a device or a socket.
    case notRegularFile(path: String)
    /// The file holds more than `limit` bytes; `size` is what `fstat` reported.
    case tooLarge(path: String, size: Int, limit: Int)
    /// `open`, `fstat` or `read` failed with this errno.
    case unreadable(path: String, errno: Int32)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "\(path) does not exist"
        case .notRegularFile(let path):
            return "\(path) is not a regular file; replace it with one"
        case .tooLarge(let path, let size, let limit):
            return "\(path) is \(size) bytes, larger than the \(limit)-byte limit; shorten it or remove it"
        case .unreadable(let path, let code):
            return "cannot read \(path): \(String(cString: strerror(code))); check its permissions"
        }
    }
}
