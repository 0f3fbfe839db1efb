import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// A file rewritten as a group commit, off the main actor: the one writer of the state files the
/// project keeps (lifecycled's push queue and registrations, the app's push keys and endpoint).
/// ``persist(_:afterWrite:)`` returns once
/// the contents `snapshot` gives at the call (or later) are on disk (`AtomicFile`: fsync, rename,
/// fsync of the directory). Changes made while a write is on its way share the next write, so a
/// burst of pushes costs one or two fsyncs, not one each.
///
/// A caller waits for the first write that holds its change, not for the group to drain: under a
/// steady stream of changes, the writes follow one another and each caller is answered after its
/// own. What must happen the moment a change is durable (a push's `Message`, once its handed-over
/// mark is on disk) goes in `afterWrite`, which runs on the writer's thread right after the write,
/// before any hop back to the main actor.
@MainActor
package final class GroupCommitFile {
    package let url: URL
    private let logger: Logger
    /// Changes asked for so far (each ``persist(_:afterWrite:)`` call is one).
    private var requested = 0
    /// Callers waiting for a write that holds their change.
    private var waiters: [Waiter] = []
    /// How the next write reads the contents: the last caller's (each caller snapshots the same state).
    private var snapshot: (@MainActor () -> Data)?
    private var writing = false

    private struct Waiter {
        let change: Int
        let afterWrite: (@Sendable () -> Void)?
        let continuation: CheckedContinuation<Bool, Never>
    }

    package init(url: URL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Returns once what `snapshot` returns now is written: `true`, or `false` when the write failed (logged).
    ///
    /// - Parameters:
    ///   - snapshot: The file's contents as they are when the write starts (main actor).
    ///   - afterWrite: Runs on the writer's thread once a write holding this change succeeded.
    @discardableResult
    package func persist(_ snapshot: @escaping @MainActor () -> Data, afterWrite: (@Sendable () -> Void)? = nil) async
        -> Bool
    {
        requested += 1
        let change = requested
        self.snapshot = snapshot
        return await withCheckedContinuation { continuation in
            waiters.append(Waiter(change: change, afterWrite: afterWrite, continuation: continuation))
            if !writing {
                writing = true
                Task { @MainActor in await writeWhileWaited() }
            }
        }
    }

    private func writeWhileWaited() async {
        while !waiters.isEmpty, let snapshot {
            // Everything asked for up to here is in this snapshot.
            let covered = requested
            let data = snapshot()
            let batch = waiters.filter { $0.change <= covered }
            waiters.removeAll { $0.change <= covered }
            let succeeded = await write(data, afterWrite: batch.compactMap(\.afterWrite))
            for waiter in batch { waiter.continuation.resume(returning: succeeded) }
            // The callers just answered run before the next snapshot is encoded.
            await Task.yield()
        }
        writing = false
    }

    private func write(_ data: Data, afterWrite hooks: [@Sendable () -> Void]) async -> Bool {
        let (url, logger) = (self.url, self.logger)
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let started = DetachedThread.start {
                do {
                    try AtomicFile.write(data, to: url)
                    for hook in hooks { hook() }
                    continuation.resume(returning: true)
                } catch {
                    logger.info("cannot save \(url.path): \(error)")
                    continuation.resume(returning: false)
                }
            }
            if started != 0 {
                logger.info("no thread to save \(url.path) (errno \(started))")
                continuation.resume(returning: false)
            }
        }
    }
}
