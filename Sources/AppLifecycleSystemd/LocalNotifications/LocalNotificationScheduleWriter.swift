import AppLifecycle
import FoundationEssentials
import Logging
import SystemdBus

/// Writes a schedule file as a group commit, off the main actor.
///
/// ``persist(_:)`` returns once what the schedule holds at the call is on disk. The snapshot is
/// taken on the main actor (cheap: arrays are copied on write); encoding, the atomic write and its
/// `fsync` (milliseconds on a disk) run on a detached thread, so firings and method calls are not
/// held up. Changes made while a write is on its way are written by the next one, which their
/// callers wait for: a burst of changes shares one write.
@MainActor
public final class LocalNotificationScheduleWriter {
    /// What to write: the notifications and the rejected entries, or `nil` to write nothing.
    public typealias Snapshot =
        @MainActor () -> (
            notifications: [ScheduledLocalNotification], rejected: [(entry: UserInfoValue, reason: String)]
        )?

    /// The file.
    public let url: URL
    private let logger: Logger
    private var task: Task<Void, Never>?
    private var unsaved = false

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - url: The schedule file.
    ///   - logger: Where a failed write is reported.
    public init(url: URL, logger: Logger) {
        self.url = url
        self.logger = logger
    }

    /// Returns once the schedule as `snapshot` gives it now is written (or its write failed, which is logged).
    public func persist(_ snapshot: @escaping Snapshot) async {
        unsaved = true
        if task == nil {
            task = Task { @MainActor in
                while unsaved {
                    unsaved = false
                    guard let (notifications, rejected) = snapshot() else { continue }
                    await write(notifications, rejected.map { Rejection(entry: $0.entry, reason: $0.reason) })
                }
                task = nil
            }
        }
        await task?.value
    }

    /// A rejected entry as a `Sendable` value for the writing thread.
    private struct Rejection: Sendable {
        var entry: UserInfoValue
        var reason: String
    }

    private func write(_ notifications: [ScheduledLocalNotification], _ rejected: [Rejection]) async {
        let (url, logger) = (self.url, self.logger)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let started = DetachedThread.start {
                do {
                    try LocalNotificationScheduleFile.save(
                        notifications, rejected: rejected.map { ($0.entry, $0.reason) }, to: url)
                } catch {
                    logger.error("local notifications: cannot save \(url.path): \(error)")
                }
                continuation.resume()
            }
            if started != 0 {
                logger.error("local notifications: no thread to save \(url.path) (errno \(started))")
                continuation.resume()
            }
        }
    }
}
