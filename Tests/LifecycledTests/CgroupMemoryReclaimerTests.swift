import Dispatch
import Glibc
import Synchronization
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// A kernel's cgroup files as ``CgroupMemoryReclaimer`` sees them, played by the test: per app
/// (matched by its id in the cgroup's path) its `memory.current` before and after a reclaim and
/// what the write to `memory.reclaim` answers.
final class FakeReclaimFiles: Sendable {
    /// One app's cgroup.
    struct Cgroup: Sendable {
        /// `memory.current` now; `nil`: no such file (no memory controller).
        var current: UInt64?
        /// `memory.current` once a write was taken (answer 0 or `EAGAIN`).
        var afterReclaim: UInt64
        /// The write's answer: 0, or an errno.
        var answer: Int32
    }

    private struct State {
        var cgroups: [String: Cgroup]
        var writes: [(path: String, text: String)] = []
        var writesInFlight = 0
    }

    private let state: Mutex<State>
    /// When set, a write waits for it to be signalled (2 s at most), counted in ``writesInFlight``.
    let gate: DispatchSemaphore?
    /// The parent's `cgroup.subtree_control` (the availability probe).
    let subtreeControl: String

    init(_ cgroups: [String: Cgroup], subtreeControl: String = "cpu memory pids", gate: DispatchSemaphore? = nil) {
        state = Mutex(State(cgroups: cgroups))
        self.subtreeControl = subtreeControl
        self.gate = gate
    }

    /// The writes so far: path and text.
    var writes: [(path: String, text: String)] { state.withLock { $0.writes } }
    /// How many writes are under way now.
    var writesInFlight: Int { state.withLock { $0.writesInFlight } }

    private func key(_ path: String) -> String? {
        state.withLock { state in state.cgroups.keys.first { path.contains("/app-\($0)-") || path.hasPrefix("/\($0)/") }
        }
    }

    /// The file access to inject.
    var access: CgroupMemoryReclaimer.FileAccess {
        CgroupMemoryReclaimer.FileAccess(
            exists: { [self] path in path.hasSuffix("/memory.reclaim") && key(path) == nil },
            read: { [self] path in
                if path.hasSuffix("/cgroup.subtree_control") { return subtreeControl }
                guard path.hasSuffix("/memory.current"), let key = key(path) else { return nil }
                return state.withLock { $0.cgroups[key]?.current.map { "\($0)\n" } }
            },
            write: { [self] path, text in
                state.withLock {
                    $0.writes.append((path, text))
                    $0.writesInFlight += 1
                }
                // Bounded, so that writes run where they must not (the pool) end and the test fails, not hangs.
                _ = gate?.wait(timeout: .now() + .seconds(2))
                state.withLock { $0.writesInFlight -= 1 }
                guard path.hasSuffix("/memory.reclaim"), let key = key(path) else { return ENOENT }
                return state.withLock { state in
                    guard let cgroup = state.cgroups[key], cgroup.current != nil else { return ENOENT }
                    if cgroup.answer == 0 || cgroup.answer == EAGAIN {
                        state.cgroups[key]?.current = cgroup.afterReclaim
                    }
                    return cgroup.answer
                }
            })
    }
}

@Suite("cgroup v2 memory.reclaim of one cgroup", .timeLimit(.minutes(1)))
struct CgroupMemoryReclaimerTests {
    let mebibyte: UInt64 = 1 << 20

    @Test("the whole memory.current is asked for and the drop measured")
    func completeReclaim() async {
        let files = FakeReclaimFiles(["a": .init(current: 100 * mebibyte, afterReclaim: 10 * mebibyte, answer: 0)])
        let result = await CgroupMemoryReclaimer(files: files.access).reclaim(directory: "/a")
        #expect(files.writes.map(\.path) == ["/a/memory.reclaim"])
        #expect(files.writes.map(\.text) == ["\(100 * mebibyte)"])
        #expect(result.outcome == .complete)
        #expect(result.bytesBefore == 100 * mebibyte && result.bytesAfter == 10 * mebibyte)
        #expect(result.reclaimedBytes == 90 * mebibyte)
        #expect(result.relievedPressure)
    }

    @Test("EAGAIN is a partial reclaim: what was freed is measured and counts")
    func partialReclaim() async {
        let files = FakeReclaimFiles(["a": .init(current: 100 * mebibyte, afterReclaim: 60 * mebibyte, answer: EAGAIN)])
        let result = await CgroupMemoryReclaimer(files: files.access).reclaim(directory: "/a")
        #expect(result.outcome == .partial)
        #expect(result.reclaimedBytes == 40 * mebibyte)
        #expect(result.relievedPressure)
        // EAGAIN with nothing freed (no swap for anonymous memory): no relief.
        let stuck = FakeReclaimFiles(["a": .init(current: 100 * mebibyte, afterReclaim: 100 * mebibyte, answer: EAGAIN)]
        )
        let none = await CgroupMemoryReclaimer(files: stuck.access).reclaim(directory: "/a")
        #expect(none.outcome == .partial && none.reclaimedBytes == 0 && !none.relievedPressure)
    }

    @Test("ENOENT (no memory.reclaim) and no memory.current are unavailable; EINVAL a failure")
    func unavailableAndFailed() async {
        // A kernel before 5.19: memory.current, no memory.reclaim.
        let old = FakeReclaimFiles(["a": .init(current: 100 * mebibyte, afterReclaim: 0, answer: ENOENT)])
        let oldResult = await CgroupMemoryReclaimer(files: old.access).reclaim(directory: "/a")
        #expect(oldResult.outcome == .unavailable && oldResult.reclaimedBytes == 0 && !oldResult.relievedPressure)
        // No memory controller on the cgroup: nothing is written.
        let bare = FakeReclaimFiles(["a": .init(current: nil, afterReclaim: 0, answer: 0)])
        let bareResult = await CgroupMemoryReclaimer(files: bare.access).reclaim(directory: "/a")
        #expect(bareResult.outcome == .unavailable && bare.writes.isEmpty)
        let refused = FakeReclaimFiles(["a": .init(current: 100 * mebibyte, afterReclaim: 0, answer: EINVAL)])
        let refusedResult = await CgroupMemoryReclaimer(files: refused.access).reclaim(directory: "/a")
        #expect(refusedResult.outcome == .failed(errno: EINVAL) && !refusedResult.relievedPressure)
        #expect(refusedResult.reclaimedBytes == 0)
    }

    @Test("available only where the parent has memory.reclaim and passes the memory controller on")
    func availability() {
        let files = FakeReclaimFiles([:])
        #expect(CgroupMemoryReclaimer(files: files.access).isAvailable(under: "/parent"))
        #expect(!CgroupMemoryReclaimer(files: files.access).isAvailable(under: nil))
        let noMemory = FakeReclaimFiles([:], subtreeControl: "cpu pids memoryx")
        #expect(!CgroupMemoryReclaimer(files: noMemory.access).isAvailable(under: "/parent"))
        // The parent is itself an app-like path the fake says has no memory.reclaim.
        let missing = FakeReclaimFiles(["parent": .init(current: nil, afterReclaim: 0, answer: 0)])
        #expect(!CgroupMemoryReclaimer(files: missing.access).isAvailable(under: "/parent"))
    }

    @Test("the blocking writes run on threads of their own, off the main actor and the concurrency pool")
    @MainActor func writesAreOnThreadsOfTheirOwn() async {
        // More reclaims at once than the cooperative pool has threads (one per core): were the
        // writes on it (or on the main actor), they could not all be in the kernel at once.
        let count = 32
        let gate = DispatchSemaphore(value: 0)
        let files = FakeReclaimFiles(["a": .init(current: 8, afterReclaim: 0, answer: 0)], gate: gate)
        let reclaimer = CgroupMemoryReclaimer(files: files.access)
        let reclaims = (0..<count).map { _ in Task { await reclaimer.reclaim(directory: "/a") } }
        let allBlocked = await eventually { files.writesInFlight == count }
        for _ in 0..<count { gate.signal() }
        #expect(allBlocked, "fewer than \(count) writes were under way at once")
        for reclaim in reclaims { #expect(await reclaim.value.outcome == .complete) }
    }
}
