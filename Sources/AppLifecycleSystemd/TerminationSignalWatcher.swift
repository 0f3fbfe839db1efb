import AppLifecycle
import Synchronization
import UnixSignals

/// Turns SIGTERM and SIGINT into `.terminate(.signal)` host events.
///
/// Uses swift-service-lifecycle's `UnixSignalsSequence`, which is event-driven (a Dispatch signal source):
/// no descriptor for the loop, no polling. The initializer returns only once the handlers are registered, so a
/// signal sent after it returns is never lost and never kills the process. Each signal yields one
/// `.terminate(.signal)`; the bridge decides what a second one means.
///
/// Only one handler per signal should exist in a process: if the app also runs a `ServiceGroup` with
/// `gracefulShutdownSignals`, trap the signals in one place only.
public final class TerminationSignalWatcher: Sendable {
    /// The trapped signals.
    public let signals: [UnixSignal]
    /// One `.terminate(.signal)` per signal received; finishes after ``cancel()``.
    public let events: AsyncStream<HostEvent>
    private let continuation: AsyncStream<HostEvent>.Continuation
    private let task: Mutex<Task<Void, Never>?>

    /// Traps `signals` and starts turning them into events.
    ///
    /// - Parameters:
    ///   - signals: The signals to trap; SIGTERM and SIGINT by default.
    public init(trapping signals: [UnixSignal] = [.sigterm, .sigint]) async {
        self.signals = signals
        let (events, continuation) = AsyncStream.makeStream(of: HostEvent.self, bufferingPolicy: .unbounded)
        self.events = events
        self.continuation = continuation
        let sequence = await UnixSignalsSequence(trapping: signals)
        let task = Task {
            for await _ in sequence {
                continuation.yield(.terminate(.signal))
            }
            continuation.finish()
        }
        self.task = Mutex(task)
        continuation.onTermination = { _ in task.cancel() }
    }

    deinit {
        cancel()
    }

    /// Stops listening and finishes ``events``; idempotent.
    public func cancel() {
        let task = self.task.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        continuation.finish()
    }
}
