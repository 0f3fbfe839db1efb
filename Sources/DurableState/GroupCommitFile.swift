import AppLifecycle
import FoundationEssentials
import Glibc
import Logging
import SystemdBus

/// A file rewritten as a group commit, off the main actor: the one writer of the state files the
/// project keeps (lifecycled's push queue and registrations and the schedule of local
/// notifications, an app's push keys and endpoint).
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
    private var snapshot: (@MainActor () -> Result<Data?, Failure>)?
    private var writing = false

    private struct Waiter {
        let change: Int
        let afterWrite: (@Sendable () -> Void)?
        let continuation: CheckedContinuation<Failure?, Never>
    }

    /// How the bytes reach the file; `AtomicFile.write` (fsync, rename, fsync of the directory)
    /// unless a test injects a failure.
    package typealias Write = @Sendable (Data, URL) throws -> Void

    private let writeFile: Write

    /// Creates the writer of one file.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - logger: Where failed writes are told (at info).
    ///   - write: How bytes reach the file.
    package init(url: URL, logger: Logger, write: @escaping Write = { try AtomicFile.write($0, to: $1) }) {
        self.url = url
        self.logger = logger
        self.writeFile = write
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
        await persistOrRemove({ .success(Optional(snapshot())) }, afterWrite: afterWrite) == nil
    }

    /// Like the other `persist`, for contents that are always there.
    @discardableResult
    package func persist(
        _ snapshot: @escaping @MainActor () -> Result<Data, Failure>, afterWrite: (@Sendable () -> Void)? = nil
    ) async -> Failure? {
        await persistOrRemove({ snapshot().map(Optional.some) }, afterWrite: afterWrite)
    }

    /// Returns once what `snapshot` returns now is on disk (`nil`), or with why not: the write
    /// failed, or `snapshot` could not make the contents (then nothing is written for this group).
    /// Contents of `nil` remove the file, in the same order as the writes: a removal can never be
    /// undone by a write that was already on its way.
    ///
    /// - Parameters:
    ///   - snapshot: The file's contents as they are when the write starts (`nil`: no file), or why there are none.
    ///   - afterWrite: Runs on the writer's thread once a write holding this change succeeded.
    @discardableResult
    package func persistOrRemove(
        _ snapshot: @escaping @MainActor () -> Result<Data?, Failure>, afterWrite: (@Sendable () -> Void)? = nil
    ) async -> Failure? {
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
            let contents = snapshot()
            let batch = waiters.filter { $0.change <= covered }
            waiters.removeAll { $0.change <= covered }
            let outcome: Failure?
            switch contents {
            case .success(let data): outcome = await write(data, afterWrite: batch.compactMap(\.afterWrite))
            case .failure(let failure): outcome = failure
            }
            for waiter in batch { waiter.continuation.resume(returning: outcome) }
            // The callers just answered run before the next snapshot is encoded.
            await Task.yield()
        }
        writing = false
    }

    private func write(_ data: Data?, afterWrite hooks: [@Sendable () -> Void]) async -> Failure? {
        let (url, logger, writeFile) = (self.url, self.logger, self.writeFile)
        do {
            try await BlockingPool.shared.run {
                if let data {
                    try writeFile(data, url)
                } else if unlink(url.path) != 0, errno != ENOENT {
                    throw ApplicationError(.io, "remove \(url.path)", errno: errno)
                }
                for hook in hooks { hook() }
            }
            return nil
        } catch {
            logger.info("cannot save \(url.path): \(error)")
            return Failure(saving: url, error)
        }
    }
}
