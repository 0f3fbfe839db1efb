import AppLifecycle
import Foundation
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing
import UnixSignals

@testable import AppLifecycleSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A bound AF_UNIX datagram socket standing in for systemd's notify socket.
private struct NotifySocket {
    let directory: TemporaryDirectory
    let path: String
    let fd: Int32

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.appending("notify")
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            directory.remove()
            throw POSIXError(.init(rawValue: error) ?? .EIO)
        }
    }

    /// The next datagram, or nil (with an issue) if none arrives within the hang guard.
    func receive(sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        guard waitForReadiness(fd, events: Int16(POLLIN), sourceLocation: sourceLocation) != nil else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buffer, buffer.count, 0)
        guard n >= 0 else { return nil }
        return String(decoding: buffer[0..<n], as: UTF8.self)
    }

    func close() {
        Glibc.close(fd)
        directory.remove()
    }
}

/// The notifier reads an explicit environment here, never the process's: changing the process
/// environment while other tests' threads read it (sd_notify calls getenv) would be a data race.
/// The process-environment path through libsystemd's sd_notify is covered by the integration test
/// that runs lifecycle-example as a real process with a real $NOTIFY_SOCKET.
@Suite("ServiceManagerNotifier")
struct ServiceManagerTests {
    @Test func sendsEachStateToTheNotifySocket() throws {
        let socket = try NotifySocket()
        defer { socket.close() }
        let notifier = ServiceManagerNotifier(environment: ["NOTIFY_SOCKET": socket.path])
        #expect(notifier.isNotifySocketSet)
        let sent = try notifier.ready()
        #expect(sent)
        #expect(socket.receive() == "READY=1")
        try notifier.status("Serving 3 apps\nand more")
        #expect(socket.receive() == "STATUS=Serving 3 apps and more")
        try notifier.stopping()
        #expect(socket.receive() == "STOPPING=1")
        try notifier.extendTimeout(by: .seconds(5))
        #expect(socket.receive() == "EXTEND_TIMEOUT_USEC=5000000")
        try notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
    }

    @Test func withoutNotifySocketEverythingIsANoOp() throws {
        let notifier = ServiceManagerNotifier(environment: [:])
        #expect(!notifier.isNotifySocketSet)
        let sent = try notifier.ready()
        #expect(!sent)
    }

    @Test func watchdogIntervalFollowsWatchdogUsecAndPid() throws {
        #expect(
            ServiceManagerNotifier(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": String(getpid())])
                .watchdogInterval == .seconds(3))
        #expect(ServiceManagerNotifier(environment: ["WATCHDOG_USEC": "3000000"]).watchdogInterval == .seconds(3))
        #expect(
            ServiceManagerNotifier(environment: ["WATCHDOG_USEC": "3000000", "WATCHDOG_PID": String(getpid() + 1)])
                .watchdogInterval == nil,
            "meant for another process")
        let none = ServiceManagerNotifier(environment: [:])
        #expect(none.watchdogInterval == nil)
    }

    /// sd-event's own watchdog (`EventLoop.enableWatchdog`) reads the process environment, so this
    /// runs in a child process, which alone sets `$NOTIFY_SOCKET` and `$WATCHDOG_USEC`.
    @Test func theLoopPingsTheWatchdogAtOnceAndThenPeriodically() async {
        await #expect(processExitsWith: .success) {
            let loop = try EventLoop(name: "watchdog")
            defer { loop.shutdown() }
            guard try await loop.enableWatchdog() == false else { exit(10) }  // no $WATCHDOG_USEC: off
            let socket = try NotifySocket()
            defer { socket.close() }
            setenv("NOTIFY_SOCKET", socket.path, 1)
            setenv("WATCHDOG_USEC", "40000", 1)
            guard try await loop.enableWatchdog() else { exit(11) }
            for ping in 0..<3 {
                guard socket.receive() == "WATCHDOG=1" else { exit(Int32(20 + ping)) }
            }
        }
    }
}

@Suite("TerminationSignalWatcher")
struct TerminationSignalWatcherTests {
    /// The first element of `stream`, or nil if the hang guard (10 s) expires first.
    private func first(of stream: AsyncStream<HostEvent>) async -> HostEvent?? {
        await withTaskGroup(of: HostEvent??.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                return .some(await iterator.next())
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }

    @Test func sigtermBecomesTerminateSignal() async throws {
        let watcher = await TerminationSignalWatcher(trapping: [.sigterm])
        defer { watcher.cancel() }
        // The initializer returned after the handler was registered, so this SIGTERM is trapped.
        kill(getpid(), SIGTERM)
        let event = await first(of: watcher.events)
        #expect(event == .some(.terminate(.signal)))
    }

    @Test func cancelFinishesTheStream() async {
        let watcher = await TerminationSignalWatcher(trapping: [.sigusr2])
        watcher.cancel()
        let event = await first(of: watcher.events)
        #expect(event == .some(nil), "the stream finished")
    }
}
