import AppLifecycle
import FoundationEssentials
import Glibc
import Logging
import SystemdBus

/// Writes a schedule file as a group commit, off the main actor.
///
/// ``persist(_:)`` returns once what the schedule holds at the call is on disk, or says why it is
/// not. The snapshot is taken on the main actor (cheap: arrays are copied on write); encoding, the
/// atomic write and its `fsync` (milliseconds on a disk) run on a detached thread, so firings and
/// method calls are not held up. Changes made while a write is on its way are written by the next
/// one, which their callers wait for: a burst of changes shares one write.
@MainActor
public final class LocalNotificationScheduleWriter {
    /// What to write, or why the file must not be written now.
    public typealias Snapshot = @MainActor () -> Result<LocalNotificationScheduleFile.Contents, Failure>

    /// Why a write did not happen.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, for a log line or an error reply.
        public var description: String
        /// Whether the device is full (`ENOSPC`, `EDQUOT`): freeing space is what helps.
        public var isOutOfSpace: Bool

        /// A failure.
        public init(_ description: String, isOutOfSpace: Bool = false) {
            self.description = description
            self.isOutOfSpace = isOutOfSpace
        }
    }

    /// The file.
    public let url: URL
    private let logger: Logger
    private var task: Task<Failure?, Never>?
    private var unsaved = false
    /// The outcome of the last write: `nil` when it succeeded.
    public private(set) var lastFailure: Failure?

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - url: The schedule file.
    ///   - logger: Where a failed write is reported.
    public init(url: URL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Returns once the schedule as `snapshot` gives it now is written and fsynced (`nil`), or
    /// with why it is not (logged too).
    ///
    /// A caller whose change was made before this call is durable when it returns `nil`: the last
    /// write of the group started after every change its callers made.
    @discardableResult
    public func persist(_ snapshot: @escaping Snapshot) async -> Failure? {
        unsaved = true
        if task == nil {
            task = Task { @MainActor in
                var outcome: Failure?
                while unsaved {
                    unsaved = false
                    switch snapshot() {
                    case .success(let contents): outcome = await write(contents)
                    case .failure(let failure): outcome = failure
                    }
                }
                task = nil
                lastFailure = outcome
                return outcome
            }
        }
        return await task?.value ?? lastFailure
    }

    private func write(_ contents: LocalNotificationScheduleFile.Contents) async -> Failure? {
        let (url, logger) = (self.url, self.logger)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Failure?, Never>) in
            let started = DetachedThread.start {
                do {
                    try LocalNotificationScheduleFile.save(contents, to: url)
                    continuation.resume(returning: nil)
                } catch {
                    logger.error("local notifications: cannot save \(url.path): \(error)")
                    let text = "\(error)"
                    let full =
                        text.contains(String(cString: strerror(ENOSPC)))
                        || text.contains(String(cString: strerror(EDQUOT)))
                    continuation.resume(returning: Failure("cannot save \(url.path): \(text)", isOutOfSpace: full))
                }
            }
            if started != 0 {
                logger.error("local notifications: no thread to save \(url.path) (errno \(started))")
                continuation.resume(returning: Failure("no thread to save \(url.path) (errno \(started))"))
            }
        }
    }
}
