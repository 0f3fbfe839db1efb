import AppLifecycle
import Foundation
import SystemdBusTesting
import Testing

@testable import AppLifecycleSystemd

#if canImport(Glibc)
    import Glibc
#endif

private func expectCode(
    _ code: HostSourceError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        try body()
        Issue.record("expected HostSourceError \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as HostSourceError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected HostSourceError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

@Suite("PressureStallTrigger")
struct PressureStallTriggerTests {
    @Test(.enabled(if: hasSystemPressureFile, "needs a writable /proc/pressure/memory (PSI)"))
    func someAndFullTriggersOnTheSystemFile() throws {
        let some = try PressureStallTrigger(kind: .some, path: PressureStallTrigger.systemPressureFile)
        defer { some.close() }
        let full = try PressureStallTrigger(
            kind: .full, stall: .milliseconds(100), path: PressureStallTrigger.systemPressureFile)
        defer { full.close() }
        #expect(some.triggerText == "some 150000 2000000")
        #expect(some.pollEvents == Int16(POLLPRI))
        // An installed trigger is quiet; a PSI fd without a trigger would report POLLERR|POLLPRI at once.
        #expect(pendingEvents(some.fileDescriptor, events: some.pollEvents) & Int16(POLLERR) == 0)
        #expect(pendingEvents(full.fileDescriptor, events: full.pollEvents) & Int16(POLLERR) == 0)

        #expect(try some.handleReadiness(Int16(POLLPRI)) == [.memoryWarning(.init(level: .low, source: "psi"))])
        #expect(try full.handleReadiness(Int16(POLLPRI)) == [.memoryWarning(.init(level: .critical, source: "psi"))])
        #expect(try some.handleReadiness(0) == [])
        expectCode(.sourceGone) { _ = try some.handleReadiness(Int16(POLLERR)) }
    }

    @Test(.enabled(if: hasSystemPressureFile, "needs a writable /proc/pressure/memory (PSI)"))
    func aPSIFileWithoutTriggerIsPermanentlyReady() throws {
        // Why MemoryPressureWatch writes a default trigger into a PSI file when $MEMORY_PRESSURE_WRITE is unset.
        let fd = open(PressureStallTrigger.systemPressureFile, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(pendingEvents(fd, events: Int16(POLLPRI)) & Int16(POLLERR) != 0)
    }

    @Test func invalidPathThrowsNotFound() {
        expectCode(.notFound) { _ = try PressureStallTrigger(path: "/nonexistent/memory.pressure") }
    }

    @Test func thresholdAboveWindowIsRejectedBeforeTheKernel() {
        expectCode(.invalidArgument) {
            _ = try PressureStallTrigger(
                stall: .seconds(3), window: .seconds(2), path: "/nonexistent")
        }
    }

    @Test(.enabled(if: hasSystemPressureFile, "needs a writable /proc/pressure/memory (PSI)"))
    func kernelRejectsATooShortWindow() {
        // The kernel accepts windows from 500 ms to 10 s.
        expectCode(.invalidArgument) {
            _ = try PressureStallTrigger(
                stall: .milliseconds(10), window: .milliseconds(100), path: PressureStallTrigger.systemPressureFile)
        }
    }

    @Test func discoveryPrefersTheOwnCgroupOnPureV2() {
        let mountInfo = """
            22 1 0:21 / /proc rw,nosuid - proc proc rw
            25 1 0:23 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
            """
        let path = PressureStallTrigger.cgroupPressureFile(
            procSelfCgroup: "0::/user.slice/user-1000.slice/app.service\n", mountInfo: mountInfo)
        #expect(path == "/sys/fs/cgroup/user.slice/user-1000.slice/app.service/memory.pressure")
        #expect(
            PressureStallTrigger.discoverPressureFile(procSelfCgroup: "0::/a.service\n", mountInfo: mountInfo) { _ in
                true
            }
                == "/sys/fs/cgroup/a.service/memory.pressure")
        // The file is missing (no memory controller delegated): fall back to the system file.
        #expect(
            PressureStallTrigger.discoverPressureFile(procSelfCgroup: "0::/a.service\n", mountInfo: mountInfo) { _ in
                false
            }
                == "/proc/pressure/memory")
    }

    @Test func discoveryUsesTheSystemFileOnHybridSystems() {
        // This machine's layout: cgroup v1 owns the memory controller, cgroup2 is mounted at .../unified.
        let cgroup = "4:memory:/process_api/x\n1:cpu:/\n0::/\n"
        let mountInfo = """
            35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
            41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
            """
        #expect(PressureStallTrigger.cgroupPressureFile(procSelfCgroup: cgroup, mountInfo: mountInfo) == nil)
        #expect(
            PressureStallTrigger.discoverPressureFile(procSelfCgroup: cgroup, mountInfo: mountInfo) { _ in true }
                == "/proc/pressure/memory")
    }

    @Test func mountInfoUnescapesMountPoints() {
        let entries = MountInfoEntry.parse("41 31 0:38 / /mnt/with\\040space rw shared:1 - cgroup2 cgroup2 rw\n")
        #expect(
            entries == [
                MountInfoEntry(major: 0, minor: 38, root: "/", mountPoint: "/mnt/with space", fileSystemType: "cgroup2")
            ])
    }
}

@Suite("MemoryPressureWatch")
struct MemoryPressureWatchTests {
    private let warning: [HostEvent] = [.memoryWarning(.init(level: .low, source: "memory-pressure-watch"))]

    @Test func configurationFromTheEnvironment() throws {
        #expect(try MemoryPressureWatch.configuration(from: [:]) == .notConfigured)
        #expect(try MemoryPressureWatch.configuration(from: ["MEMORY_PRESSURE_WATCH": "/dev/null"]) == .disabled)
        #expect(try MemoryPressureWatch.configuration(from: ["MEMORY_PRESSURE_WATCH": ""]) == .disabled)
        let write = Data("some 100000 2000000\0".utf8).base64EncodedString()
        #expect(
            try MemoryPressureWatch.configuration(from: [
                "MEMORY_PRESSURE_WATCH": "/sys/fs/cgroup/a.service/memory.pressure", "MEMORY_PRESSURE_WRITE": write,
            ]) == .watch(path: "/sys/fs/cgroup/a.service/memory.pressure", write: Array("some 100000 2000000\0".utf8)))
        expectCode(.invalidConfiguration) {
            _ = try MemoryPressureWatch.configuration(from: ["MEMORY_PRESSURE_WATCH": "relative/path"])
        }
        expectCode(.invalidConfiguration) {
            _ = try MemoryPressureWatch.configuration(from: ["MEMORY_PRESSURE_WATCH": "/a/../b"])
        }
        expectCode(.invalidConfiguration) {
            _ = try MemoryPressureWatch.configuration(from: [
                "MEMORY_PRESSURE_WATCH": "/x", "MEMORY_PRESSURE_WRITE": "%%%",
            ])
        }
    }

    @Test func devNullMeansOff() throws {
        guard case .disabled = try MemoryPressureWatch.setUp(environment: ["MEMORY_PRESSURE_WATCH": "/dev/null"]) else {
            Issue.record("expected .disabled")
            return
        }
        guard case .notConfigured = try MemoryPressureWatch.setUp(environment: [:]) else {
            Issue.record("expected .notConfigured")
            return
        }
    }

    @Test func fifoReportsEachWriteAndSurvivesWritersClosing() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let fifo = directory.appending("pressure.fifo")
        try #require(mkfifo(fifo, 0o600) == 0)
        guard case .watching(let watch) = try MemoryPressureWatch.setUp(environment: ["MEMORY_PRESSURE_WATCH": fifo])
        else {
            Issue.record("expected a running watch")
            return
        }
        defer { watch.close() }
        #expect(watch.kind == .fifo)
        #expect(watch.pollEvents == Int16(POLLIN))

        for round in 0..<2 {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            try #require(writer >= 0)
            _ = write(writer, "pressure \(round)\n", 11)
            close(writer)  // the writer goes away: no hang-up, since the watch holds a write end itself
            guard let revents = waitForReadiness(watch.fileDescriptor, events: watch.pollEvents) else { return }
            #expect(revents & Int16(POLLHUP) == 0)
            #expect(try watch.handleReadiness(revents) == warning)
            #expect(pendingEvents(watch.fileDescriptor, events: watch.pollEvents) == 0, "drained")
        }
    }

    @Test func socketReceivesTheWriteDataAndReportsPressureUntilHangUp() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("pressure.sock")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(listener, 4) == 0)

        let write = Array("full 100000 2000000\0".utf8)
        let watch = try MemoryPressureWatch(path: path, write: write)
        defer { watch.close() }
        #expect(watch.kind == .socket)
        #expect(watch.level == .critical, "a `full` trigger is critical")

        let peer = accept(listener, nil, nil)
        try #require(peer >= 0)
        var peerOpen = true
        defer { if peerOpen { close(peer) } }
        guard waitForReadiness(peer, events: Int16(POLLIN)) != nil else { return }
        var received = [UInt8](repeating: 0, count: 64)
        let n = read(peer, &received, received.count)
        #expect(Array(received.prefix(max(n, 0))) == write, "the decoded MEMORY_PRESSURE_WRITE was sent first")

        _ = Glibc.write(peer, "x", 1)
        guard let revents = waitForReadiness(watch.fileDescriptor, events: watch.pollEvents) else { return }
        #expect(
            try watch.handleReadiness(revents) == [
                .memoryWarning(.init(level: .critical, source: "memory-pressure-watch"))
            ])

        close(peer)
        peerOpen = false
        guard let hangUp = waitForReadiness(watch.fileDescriptor, events: watch.pollEvents) else { return }
        expectCode(.sourceGone) { _ = try watch.handleReadiness(hangUp) }
    }

    @Test(.enabled(if: hasSystemPressureFile, "needs a writable /proc/pressure/memory (PSI)"))
    func psiFileWithBase64Write() throws {
        let environment = [
            "MEMORY_PRESSURE_WATCH": "/proc/pressure/memory",
            "MEMORY_PRESSURE_WRITE": Data("some 150000 2000000\0".utf8).base64EncodedString(),
        ]
        guard case .watching(let watch) = try MemoryPressureWatch.setUp(environment: environment) else {
            Issue.record("expected a running watch")
            return
        }
        defer { watch.close() }
        #expect(watch.kind == .pressureFile)
        #expect(watch.pollEvents == Int16(POLLPRI))
        #expect(
            pendingEvents(watch.fileDescriptor, events: watch.pollEvents) & Int16(POLLERR) == 0, "trigger installed")
        #expect(try watch.handleReadiness(Int16(POLLPRI)) == warning)
        expectCode(.sourceGone) { _ = try watch.handleReadiness(Int16(POLLERR)) }
    }

    @Test(.enabled(if: hasSystemPressureFile, "needs a writable /proc/pressure/memory (PSI)"))
    func psiFileWithoutWriteGetsTheDefaultTrigger() throws {
        let watch = try MemoryPressureWatch(path: "/proc/pressure/memory", write: nil)
        defer { watch.close() }
        #expect(pendingEvents(watch.fileDescriptor, events: watch.pollEvents) & Int16(POLLERR) == 0)
    }

    @Test func regularFileOutsideProcAndCgroupfsIsRejected() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.appending("not-psi")
        try Data("x".utf8).write(to: URL(fileURLWithPath: path))
        expectCode(.unsupported) { _ = try MemoryPressureWatch(path: path, write: nil) }
        expectCode(.invalidConfiguration) { _ = try MemoryPressureWatch(path: directory.path, write: nil) }
        expectCode(.notFound) { _ = try MemoryPressureWatch(path: directory.appending("missing"), write: nil) }
    }
}

@Suite("MemoryWarningRateLimiter")
struct MemoryWarningRateLimiterTests {
    @Test func oneWarningPerIntervalUnlessMoreSevere() {
        var limiter = MemoryWarningRateLimiter(interval: .seconds(10))
        let t0 = ContinuousClock.now
        // (level, seconds after t0, delivered?, why)
        let script: [(MemoryWarning.Level, Int, Bool, String)] = [
            (.low, 0, true, "the first warning passes"),
            (.low, 1, false, "same level within the interval"),
            (.medium, 2, true, "more severe passes at once"),
            (.critical, 3, true, "more severe passes at once"),
            (.critical, 4, false, "equal severity waits"),
            (.low, 12, false, "the interval restarted at the critical warning"),
            (.low, 13, true, "10 s after the last delivered warning"),
            (.medium, 14, true, "more severe than the last delivered (low)"),
        ]
        for (level, seconds, expected, why) in script {
            let delivered = limiter.admit(level, at: t0 + .seconds(seconds))
            #expect(delivered == expected, "\(level) at +\(seconds) s: \(why)")
        }
        #expect(limiter.lastDelivered?.level == .medium)
    }

    @Test func injectedClockDrivesAdmit() {
        let start = ContinuousClock.now
        var limiter = MemoryWarningRateLimiter(interval: .seconds(5), now: { start })
        let first = limiter.admit(MemoryWarning(level: .critical, source: "psi"))
        let second = limiter.admit(MemoryWarning(level: .low, source: "low-memory-monitor"))
        #expect(first)
        #expect(!second)
    }
}
