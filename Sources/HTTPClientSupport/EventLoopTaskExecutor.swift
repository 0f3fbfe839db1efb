import NIOCore

/// A `TaskExecutor` that runs jobs on one NIO event loop.
///
/// ``HTTPClientConnection/withConnection(host:port:tls:timeout:isolation:_:)`` runs a nonisolated
/// caller's body with it as the task executor preference, so awaiting the connection's reads and
/// writes resumes on the connection's own loop: each request then costs the loop's wake-up on the
/// response and nothing more, instead of a hop from the concurrency pool to the loop for the
/// write and one back for the response (measured: the benchmark's push throughput).
final class EventLoopTaskExecutor: TaskExecutor {
    private let eventLoop: any EventLoop

    /// An executor on `eventLoop`.
    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
