import AppLifecycle
import Foundation
import Glibc
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Collects an app's exit status from its onExit callback.
final class ExitCollector: Sendable {
    let stream: AsyncStream<AppExitStatus>
    private let continuation: AsyncStream<AppExitStatus>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: AppExitStatus.self)
    }

    var onExit: @Sendable (AppExitStatus) -> Void {
        { [continuation] status in
            continuation.yield(status)
            continuation.finish()
        }
    }

    /// The exit status (the suite's time limit is the hang guard).
    func wait() async -> AppExitStatus? {
        for await status in stream { return status }
        return nil
    }
}

/// Launches an app, runs `body`, and always stops the app by its own pid (through the
/// supervisor's pidfd and process group, SIGKILL at once) and waits for it to be reaped.
func withApp<T>(
    _ manifest: AppManifest, launchOptions: LaunchOptions = LaunchOptions(), environment: [String: String] = [:],
    cgroupDirectory: String? = nil, isolation: isolated (any Actor)? = #isolation,
    _ body: (AppProcess, ExitCollector, EventLoop) async throws -> T
) async throws -> T {
    let loop = try EventLoop(name: "lifecycled-test")
    defer { loop.shutdown() }
    let exits = ExitCollector()
    let process = try AppProcess.launch(
        manifest: manifest, launchOptions: launchOptions, environment: environment,
        cgroupDirectory: cgroupDirectory, loop: loop, logger: Logger(label: "lifecycled-test"), onExit: exits.onExit)
    do {
        let result = try await body(process, exits, loop)
        await stop(process, exits)
        return result
    } catch {
        await stop(process, exits)
        throw error
    }
}

private func stop(_ process: AppProcess, _ exits: ExitCollector) async {
    if process.exitStatus == nil {
        process.terminate(policy: TerminationPolicy(deadline: .zero, grace: .zero))
        _ = await exits.wait()
    }
}

/// Waits until a line arrives on a FIFO, watching it with the event loop (no polling).
///
/// Open the FIFO (this does, non-blocking) before the writer starts.
final class FIFOReader: Sendable {
    private let fd: Int32
    private let loop: EventLoop

    init(path: String, loop: EventLoop) throws {
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw TestFailure("open fifo: \(String(cString: strerror(errno)))") }
        self.loop = loop
    }

    deinit { close(fd) }

    /// The first line written to the FIFO.
    func line() async throws -> String {
        let buffer = Mutex<[UInt8]>([])
        let token = Mutex<EventSourceToken?>(nil)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            let done = Mutex(false)
            let fd = self.fd
            let accepted = loop.perform { [loop] in
                do {
                    let watch = try loop.addIOOnLoop(fd: fd, events: EventLoop.IOEvents.readable) { _ in
                        var chunk = [UInt8](repeating: 0, count: 256)
                        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                        if count > 0 { buffer.withLock { $0 += chunk[0..<count] } }
                        let line = buffer.withLock { bytes -> String? in
                            guard let newline = bytes.firstIndex(of: 10) else { return nil }
                            return String(decoding: bytes[..<newline], as: UTF8.self)
                        }
                        // A line, or end of file (the writer closed) without one.
                        guard line != nil || count == 0 else { return }
                        guard
                            done.withLock({ d in
                                defer { d = true }
                                return !d
                            })
                        else { return }
                        token.withLock { $0?.cancel() }
                        if let line {
                            continuation.resume(returning: line)
                        } else {
                            continuation.resume(throwing: TestFailure("FIFO closed without a line"))
                        }
                    }
                    token.withLock { $0 = watch }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            if !accepted { continuation.resume(throwing: TestFailure("the event loop has shut down")) }
        }
    }
}

/// Builds a manifest for a test executable.
func testManifest(_ executable: String, _ arguments: [String] = [], id: String = "org.example.Test") throws
    -> AppManifest
{
    try AppManifest(id: id, executable: executable, arguments: arguments)
}
