import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
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
package final class LocalNotificationScheduleWriter {
    /// What to write, or why the file must not be written now.
    package typealias Snapshot = @MainActor () -> Result<LocalNotificationScheduleFile.Contents, Failure>

    /// Why a write did not happen.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What went wrong, for a log line or an error reply.
        package var description: String
        /// Whether the device is full (`ENOSPC`, `EDQUOT`): freeing space is what helps.
        package var isOutOfSpace: Bool

        /// A failure.
        package init(_ description: String, isOutOfSpace: Bool = false) {
            self.description = description
            self.isOutOfSpace = isOutOfSpace
        }

        /// The failure of a save that threw `error`: out of space when its `ApplicationError.errno`
        /// is `ENOSPC` or `EDQUOT` (the errno, not the message's wording, which depends on the C library's locale).
        ///
        /// - Parameters:
        ///   - url: The file that was being saved.
        ///   - error: What the save threw.
        package init(saving url: URL, _ error: any Error) {
            let code = (error as? ApplicationError)?.errno
            self.init("cannot save \(url.path): \(error)", isOutOfSpace: code == ENOSPC || code == EDQUOT)
        }
    }

    /// Saves the contents to the file (``LocalNotificationScheduleFile/save(_:to:)`` unless a test
    /// gives another); runs on a thread of its own and may block.
    package typealias Save = @Sendable (LocalNotificationScheduleFile.Contents, URL) throws -> Void

    /// The file.
    package let url: URL
    private let logger: Logger
    private let save: Save
    private var task: Task<Failure?, Never>?
    private var unsaved = false
    /// The outcome of the last write: `nil` when it succeeded.
    package private(set) var lastFailure: Failure?

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - url: The schedule file.
    ///   - logger: Where a failed write is reported.
    ///   - save: What writes the file; a test may hold it to see what happens while a write is out.
    package init(
        url: URL, logger: Logger, save: @escaping Save = { try LocalNotificationScheduleFile.save($0, to: $1) }
    ) {
        self.url = url
        self.logger = logger
        self.save = save
    }

    /// Returns once the schedule as `snapshot` gives it now is written and fsynced (`nil`), or
    /// with why it is not (logged too).
    ///
    /// A caller whose change was made before this call is durable when it returns `nil`: the last
    /// write of the group started after every change its callers made.
    @discardableResult
    package func persist(_ snapshot: @escaping Snapshot) async -> Failure? {
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
        let (url, logger, save) = (self.url, self.logger, self.save)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Failure?, Never>) in
            let started = DetachedThread.start {
                do {
                    try save(contents, url)
                    continuation.resume(returning: nil)
                } catch {
                    logger.info("local notifications: cannot save \(url.path): \(error)")
                    continuation.resume(returning: Failure(saving: url, error))
                }
            }
            if started != 0 {
                logger.info("local notifications: no thread to save \(url.path) (errno \(started))")
                continuation.resume(returning: Failure("no thread to save \(url.path) (errno \(started))"))
            }
        }
    }
}
