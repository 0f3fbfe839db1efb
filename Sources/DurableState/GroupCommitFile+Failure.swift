import AppLifecycle
import FoundationEssentials
import Glibc

extension GroupCommitFile {
    /// Why a change is not on disk: the write failed (out of space is decided on the errno, never
    /// on the message's wording), or the contents could not be made.
    ///
    /// The project's one error shape (swift-service-lifecycle's `ServiceGroupError`): an opaque
    /// ``code`` over a private enum, a message, the `errno` of the failed call and the error
    /// underneath.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What kind of failure this is. Compare with the static members (`failure.code == .outOfSpace`).
        package struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Base: String, Sendable, Hashable {
                case outOfSpace = "out-of-space"
                case writeFailed = "write-failed"
                case notEncodable = "not-encodable"
                case notWritable = "not-writable"
            }

            private let base: Base

            private init(_ base: Base) { self.base = base }

            /// The write failed with `ENOSPC` or `EDQUOT`: freeing space is what fixes it.
            package static let outOfSpace = Code(.outOfSpace)
            /// The write failed for another reason (see ``Failure/errno``), or no thread could run it.
            package static let writeFailed = Code(.writeFailed)
            /// The contents could not be made (encoding failed).
            package static let notEncodable = Code(.notEncodable)
            /// The file may not be written now: its owner is stopping, or what is on disk is not
            /// something it may replace.
            package static let notWritable = Code(.notWritable)

            /// The code's name, as in logs: `out-of-space`.
            package var description: String { base.rawValue }
        }

        /// The kind of failure.
        package let code: Code
        /// What happened, for a log line or an error reply.
        package let message: String
        /// The `errno` of the failed call, if any.
        package let errno: Int32?
        /// The error underneath (the write's `ApplicationError`, the encoder's error), if any.
        package let underlying: (any Error)?

        /// Creates a failure.
        ///
        /// - Parameters:
        ///   - code: The kind of failure.
        ///   - message: What happened.
        ///   - errno: The `errno` of the failed call, if any.
        ///   - underlying: The error underneath, if any.
        package init(_ code: Code, _ message: String, errno: Int32? = nil, underlying: (any Error)? = nil) {
            self.code = code
            self.message = message
            self.errno = errno
            self.underlying = underlying
        }

        /// A failed write of `url` (an `ApplicationError` carries the errno).
        package init(saving url: URL, _ error: any Error) {
            let errno = (error as? ApplicationError)?.errno
            self.init(
                errno == ENOSPC || errno == EDQUOT ? .outOfSpace : .writeFailed, "cannot save \(url.path)",
                errno: errno, underlying: error)
        }

        /// `ENOSPC` or `EDQUOT`: freeing space is what fixes it.
        package var isOutOfSpace: Bool { code == .outOfSpace }

        /// The message, then the error underneath, or else the errno's text.
        package var description: String {
            if let underlying { return "\(message): \(underlying)" }
            guard let errno else { return message }
            return "\(message): \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }
}
