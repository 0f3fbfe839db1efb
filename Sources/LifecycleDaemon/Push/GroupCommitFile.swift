import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// A file rewritten as a group commit, off the main actor: ``persist(_:)`` returns once the
/// contents `snapshot` gives at the call (or later) are on disk (`AtomicFile`: fsync, rename,
/// fsync of the directory). Changes made while a write is on its way share the next write, so a
/// burst of pushes costs one or two fsyncs, not one each.
@MainActor
final class GroupCommitFile {
    let url: URL
    private let logger: Logger
    private var task: Task<Bool, Never>?
    private var unsaved = false
    private var lastWriteSucceeded = true

    init(url: URL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Returns once what `snapshot` returns now is written: `true`, or `false` when the write failed (logged).
    @discardableResult
    func persist(_ snapshot: @escaping @MainActor () -> Data) async -> Bool {
        unsaved = true
        if task == nil {
            task = Task { @MainActor in
                var succeeded = true
                while unsaved {
                    unsaved = false
                    succeeded = await write(snapshot())
                }
                task = nil
                return succeeded
            }
        }
        return await task?.value ?? lastWriteSucceeded
    }

    private func write(_ data: Data) async -> Bool {
        let (url, logger) = (self.url, self.logger)
        let succeeded = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let started = DetachedThread.start {
                do {
                    try AtomicFile.write(data, to: url)
                    continuation.resume(returning: true)
                } catch {
                    logger.error("cannot save \(url.path): \(error)")
                    continuation.resume(returning: false)
                }
            }
            if started != 0 {
                logger.error("no thread to save \(url.path) (errno \(started))")
                continuation.resume(returning: false)
            }
        }
        lastWriteSucceeded = succeeded
        return succeeded
    }
}
