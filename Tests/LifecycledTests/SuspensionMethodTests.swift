import Testing

@testable import LifecycleDaemon

@Suite("Suspension method and /proc parsing")
struct SuspensionMethodTests {
    private let always: (String) -> Bool = { _ in true }

    @Test func freezerOnlyForAnAppInACgroupOfItsOwn() {
        #expect(
            SuspensionMethod.select(
                appCgroup: "/user.slice/app-notes.scope", daemonCgroup: "/user.slice/lifecycled.service",
                cgroup2MountPoint: "/sys/fs/cgroup", hasFreezeFile: always)
                == .freezer(cgroupDirectory: "/sys/fs/cgroup/user.slice/app-notes.scope"))
        // Same cgroup as the daemon: freezing it would freeze the daemon.
        #expect(
            SuspensionMethod.select(
                appCgroup: "/user.slice/lifecycled.service", daemonCgroup: "/user.slice/lifecycled.service",
                cgroup2MountPoint: "/sys/fs/cgroup", hasFreezeFile: always) == .stopSignal)
        // The root cgroup has no cgroup.freeze; this machine's hybrid layout puts everything there.
        #expect(
            SuspensionMethod.select(
                appCgroup: "/", daemonCgroup: "/", cgroup2MountPoint: "/sys/fs/cgroup/unified", hasFreezeFile: always)
                == .stopSignal)
        #expect(
            SuspensionMethod.select(appCgroup: "/a", daemonCgroup: "/b", cgroup2MountPoint: nil, hasFreezeFile: always)
                == .stopSignal)
        #expect(
            SuspensionMethod.select(
                appCgroup: nil, daemonCgroup: "/b", cgroup2MountPoint: "/sys/fs/cgroup", hasFreezeFile: always)
                == .stopSignal)
        var asked: [String] = []
        #expect(
            SuspensionMethod.select(
                appCgroup: "/a", daemonCgroup: "/b", cgroup2MountPoint: "/sys/fs/cgroup/unified/",
                hasFreezeFile: {
                    asked.append($0)
                    return false
                }) == .stopSignal)
        #expect(asked == ["/sys/fs/cgroup/unified/a/cgroup.freeze"])
    }

    @Test func thisProcessWithoutADelegatedCgroupUsesSIGSTOP() {
        let own = ProcFS.unifiedCgroup(of: nil)
        #expect(
            SuspensionMethod.select(
                appCgroup: own, daemonCgroup: own, cgroup2MountPoint: ProcFS.cgroup2MountPoint(), hasFreezeFile: always)
                == .stopSignal)
    }

    @Test func procParsers() {
        #expect(ProcFS.state(fromStat: "1234 (my (odd) app) T 1 1234 1234 0 -1") == "T")
        #expect(ProcFS.state(fromStat: "garbage") == nil)
        #expect(ProcFS.residentPages(fromStatm: "5000 321 100 10 0 200 0\n") == 321)
        #expect(ProcFS.residentPages(fromStatm: "5000") == nil)
        #expect(
            ProcFS.unifiedCgroup(fromProcCgroup: "6:freezer:/\n1:name=systemd:/x\n0::/user.slice/a.scope\n")
                == "/user.slice/a.scope")
        #expect(ProcFS.unifiedCgroup(fromProcCgroup: "6:freezer:/\n") == nil)
        let mountinfo = """
            25 30 0:22 / /sys/fs/cgroup rw,nosuid - tmpfs tmpfs rw
            34 25 0:30 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw
            """
        #expect(ProcFS.cgroup2MountPoint(fromMountinfo: mountinfo) == "/sys/fs/cgroup/unified")
        #expect(CgroupFreezer.frozen(fromEvents: "populated 1\nfrozen 1\n") == true)
        #expect(CgroupFreezer.frozen(fromEvents: "populated 1\nfrozen 0\n") == false)
        #expect(CgroupFreezer.frozen(fromEvents: "populated 1\n") == nil)
    }

    @Test func environmentPutsTheLifecycleVariablesLast() throws {
        let env = try AppProcess.environment(
            base: ["PATH": "/bin", "LIFECYCLE_APP_ID": "stale"], appID: "org.example.A",
            launchOptions: [.sourceApplication: .string("org.example.B")], extra: ["PATH": "/custom"])
        #expect(env["PATH"] == "/custom")
        #expect(env["LIFECYCLE_APP_ID"] == "org.example.A")
        #expect(
            env["LIFECYCLE_LAUNCH_OPTIONS"] == #"{"UIApplicationLaunchOptionsSourceApplicationKey":"org.example.B"}"#)
    }
}
