import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("Per-app cgroups: placement and the freezer through the daemon", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct AppCgroupPlacementTests {
    @Test("auto uses the daemon's own delegated cgroup, never the root or an unwritable one")
    func automaticResolution() {
        let writable: (String) -> Bool = { _ in true }
        #expect(
            AppCgroupPlacement(
                mode: .automatic,
                ownCgroup: "/user.slice/user-1000.slice/user@1000.service/app.slice/lifecycled.service",
                mountPoint: "/sys/fs/cgroup", isWritableDirectory: writable
            ).parentDirectory
                == "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/lifecycled.service")
        // The root cgroup has no freezer and is the whole machine's.
        #expect(
            AppCgroupPlacement(
                mode: .automatic, ownCgroup: "/", mountPoint: "/sys/fs/cgroup", isWritableDirectory: writable
            ).parentDirectory == nil)
        // Not delegated: no children are created.
        #expect(
            AppCgroupPlacement(
                mode: .automatic, ownCgroup: "/system.slice/x.service", mountPoint: "/sys/fs/cgroup",
                isWritableDirectory: { _ in false }
            ).parentDirectory == nil)
        // A cgroup v1-only system.
        #expect(
            AppCgroupPlacement(mode: .automatic, ownCgroup: nil, mountPoint: nil, isWritableDirectory: writable)
                .parentDirectory == nil)
        #expect(
            AppCgroupPlacement(
                mode: .automatic, ownCgroup: "/a", mountPoint: "/sys/fs/cgroup/unified/", isWritableDirectory: writable
            ).parentDirectory
                == "/sys/fs/cgroup/unified/a")
        #expect(
            AppCgroupPlacement(mode: .off, ownCgroup: "/a", mountPoint: "/sys/fs/cgroup", isWritableDirectory: writable)
                .parentDirectory == nil)
        #expect(
            AppCgroupPlacement(
                mode: .under("/sys/fs/cgroup/x"), ownCgroup: "/", mountPoint: "/sys/fs/cgroup",
                isWritableDirectory: writable
            ).parentDirectory
                == "/sys/fs/cgroup/x")
    }

    @Test("a daemon already in its leaf (DelegateSubgroup=lifecycled) puts the apps beside it, in the unit's cgroup")
    func automaticResolutionFromTheLeaf() {
        let unit = "/user.slice/user-1000.slice/user@1000.service/app.slice/lifecycled.service"
        #expect(
            AppCgroupPlacement(
                mode: .automatic, ownCgroup: unit + "/lifecycled", mountPoint: "/sys/fs/cgroup",
                isWritableDirectory: { _ in true }
            ).parentDirectory == "/sys/fs/cgroup" + unit)
        // A leaf right under the root is not a unit's cgroup.
        #expect(
            AppCgroupPlacement(
                mode: .automatic, ownCgroup: "/lifecycled", mountPoint: "/sys/fs/cgroup",
                isWritableDirectory: { _ in true }
            ).parentDirectory == nil)
    }

    @Test("the memory controller: offered → the daemon moves into its leaf, then +memory; a refusal moves it back")
    func memoryControllerForTheApps() {
        let parent = "/sys/fs/cgroup/app.slice/lifecycled.service"
        let fake = FakeCgroupFiles([
            parent + "/cgroup.controllers": "cpu io memory pids\n", parent + "/cgroup.subtree_control": "\n",
        ])
        #expect(
            AppCgroupPlacement.enableMemoryController(in: parent, pid: 42, files: fake.access)
                == .enabled(leaf: parent + "/lifecycled"))
        #expect(
            fake.log == [
                "mkdir \(parent)/lifecycled", "write \(parent)/lifecycled/cgroup.procs 42",
                "write \(parent)/cgroup.subtree_control +memory",
            ])
        // Already passed on: nothing is written.
        let enabled = FakeCgroupFiles([
            parent + "/cgroup.controllers": "memory pids", parent + "/cgroup.subtree_control": "memory",
        ])
        #expect(
            AppCgroupPlacement.enableMemoryController(in: parent, pid: 42, files: enabled.access) == .alreadyEnabled)
        #expect(enabled.log.isEmpty)
        // Not delegated (a hybrid machine's cgroup2 has no memory): nothing is written.
        let hybrid = FakeCgroupFiles([parent + "/cgroup.controllers": "hugetlb"])
        #expect(AppCgroupPlacement.enableMemoryController(in: parent, pid: 42, files: hybrid.access) == .notOffered)
        #expect(hybrid.log.isEmpty)
        // The kernel refuses (another process left in the unit's cgroup): the daemon goes back.
        let busy = FakeCgroupFiles(
            [parent + "/cgroup.controllers": "memory", parent + "/cgroup.subtree_control": ""],
            refusing: [parent + "/cgroup.subtree_control": EBUSY])
        #expect(
            AppCgroupPlacement.enableMemoryController(in: parent, pid: 42, files: busy.access)
                == .failed(step: "enable memory in \(parent)/cgroup.subtree_control", errno: EBUSY))
        #expect(busy.log.last == "write \(parent)/cgroup.procs 42")
    }

    @Test(
        "a leftover cgroup of the same name is reused only when empty; one with processes gets a new name",
        .enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func leftoverCgroups() throws {
        let parent = try FreezerFixture()
        defer { parent.remove() }
        let placement = AppCgroupPlacement(mode: .under(parent.path), logger: Logger(label: "lifecycled"))
        // Left by an earlier daemon, empty: reused.
        let empty = parent.path + "/app-org.example.Old-1"
        #expect(mkdir(empty, 0o755) == 0)
        defer { rmdir(empty) }
        #expect(placement.makeDirectory(appID: "org.example.Old", launchID: 1) == empty)
        // Left by an earlier daemon with its app still inside: never joined.
        let busy = parent.path + "/app-org.example.Busy-1"
        #expect(mkdir(busy, 0o755) == 0)
        defer { rmdir(busy) }
        let survivor = try ChildProcess.spawn("/bin/sleep", ["600"])
        defer { survivor.terminateAndWait() }
        try CgroupFreezer.move(survivor.pid, into: busy)
        defer { try? CgroupFreezer.move(survivor.pid, into: parent.path) }
        let fresh = placement.makeDirectory(appID: "org.example.Busy", launchID: 1)
        #expect(fresh == busy + ".2")
        if let fresh { rmdir(fresh) }
    }

    @Test("a missing parent directory falls back to SIGSTOP, and the app still launches")
    func unusableParentFallsBack() async throws {
        try await withDaemon(
            termination: TerminationPolicy(deadline: .milliseconds(100), grace: .milliseconds(500)),
            appCgroups: .under("/nonexistent-cgroup-parent"),
            setUp: { dir in
                try writeManifest(dir, id: "org.example.Test", executable: "/bin/sleep", arguments: ["600"])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name,
                [.string("org.example.Test"), UserInfoBusCodec.encode([:] as UserInfo)])
            let process = try #require(h.daemon.registry["org.example.Test"]?.process)
            #expect(process.suspensionMethod == .stopSignal)
        }
    }

    @Test(.enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func eachAppIsFrozenInItsOwnCgroupWhichIsRemovedWithItsStragglers() async throws {
        let parent = try FreezerFixture()
        defer { parent.remove() }
        let notes = "org.example.Notes"
        let leaver = "org.example.Leaver"
        var stragglerFile = ""
        try await withDaemon(
            appCgroups: .under(parent.path),
            setUp: { dir in
                try writeManifest(
                    dir, id: notes, executable: try writePythonApp(dir), arguments: [dir.path + "/notes.log"])
                stragglerFile = dir.path + "/straggler.pid"
                // Starts a process in a session of its own (out of reach of the process-group
                // kill), records its pid, then exits.
                let script = try writeScript(
                    dir, "leaver.sh",
                    """
                    setsid /bin/sleep 600 < /dev/null > /dev/null 2>&1 &
                    echo $! > "$1.tmp" && mv "$1.tmp" "$1"
                    """)
                try writeManifest(dir, id: leaver, executable: script, arguments: [stragglerFile])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(notes), UserInfoBusCodec.encode([:] as UserInfo)])
            try await h.client.log.waitForState(notes, .active)
            let pid = try #require(h.pid(notes))
            let cgroup = parent.path + "/app-\(notes)-1"
            #expect(h.daemon.registry[notes]?.process?.suspensionMethod == .freezer(cgroupDirectory: cgroup))
            #expect(ProcFS.read(cgroup + "/cgroup.procs")?.split(separator: "\n").contains(Substring("\(pid)")) == true)

            try await h.client.call(
                LifecycledProtocol.Method.simulate.name, [.string("sleep"), UserInfoBusCodec.encode([:] as UserInfo)])
            #expect(try await h.waitForSleepRelease() == "all-suspended")
            #expect(CgroupFreezer(directory: cgroup).isFrozen == true)
            // Frozen, not job-control stopped: the app's parent sees no stop.
            #expect(processState(pid) != "T")

            try await h.client.call(
                LifecycledProtocol.Method.simulate.name, [.string("wake"), UserInfoBusCodec.encode([:] as UserInfo)])
            try await h.client.log.waitForState(notes, .active)
            #expect(CgroupFreezer(directory: cgroup).isFrozen == false)

            try await h.client.call(LifecycledProtocol.Method.terminate.name, [.string(notes)])
            #expect(h.exits.first { $0.id == notes }?.status == .exited(code: 0))
            #expect(access(cgroup, F_OK) != 0, "\(cgroup) was not removed")

            // An app that leaves a process behind in a new session: killed with its cgroup.
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string(leaver), UserInfoBusCodec.encode([:] as UserInfo)])
            #expect(try await h.waitForExit(leaver) == .exited(code: 0))
            let straggler = try #require(
                pid_t(logLines(stragglerFile).first ?? ""), "the straggler's pid was not recorded")
            let state = processState(straggler)
            #expect(
                state == nil || state == "Z",
                "the straggler \(straggler) survived its app (state \(String(describing: state)))")
            #expect(access(parent.path + "/app-\(leaver)-2", F_OK) != 0)
            if state != nil && state != "Z" { kill(straggler, SIGKILL) }
        }
    }
}

/// cgroup files in memory: what was read is given, what was written is logged in order.
private final class FakeCgroupFiles: Sendable {
    private let state: Mutex<(files: [String: String], log: [String])>
    private let refusing: [String: Int32]

    init(_ files: [String: String], refusing: [String: Int32] = [:]) {
        state = Mutex((files, []))
        self.refusing = refusing
    }

    var log: [String] { state.withLock { $0.log } }

    var access: CgroupMemoryReclaimer.FileAccess {
        var access = CgroupMemoryReclaimer.FileAccess(
            exists: { path in self.state.withLock { $0.files[path] != nil } },
            read: { path in self.state.withLock { $0.files[path] } },
            write: { path, text in
                self.state.withLock { $0.log.append("write \(path) \(text)") }
                return self.refusing[path] ?? 0
            })
        access.makeDirectory = { path in
            self.state.withLock { $0.log.append("mkdir \(path)") }
            return 0
        }
        return access
    }
}
