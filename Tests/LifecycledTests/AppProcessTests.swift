import AppLifecycle
import Foundation
import Glibc
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

@Suite("App process supervision", .serialized, .timeLimit(.minutes(1)))
struct AppProcessTests {
    @Test func exitCallbackReportsTheStatusAndTheLifecycleEnvironmentArrives() async throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        let app = try dir.script("app.sh", #"env > "$1"; exit 7"#)
        var options = LaunchOptions()
        options.url = URL(string: "notes://open/42")
        options.sourceApplication = "org.example.Mail"
        let envFile = dir.path + "/env.txt"
        let status = try await withApp(
            testManifest(app, [envFile], id: "org.example.EnvApp"), launchOptions: options,
            environment: ["EXTRA_VAR": "extra value", "LIFECYCLE_APP_ID": "org.example.Impostor"]
        ) { process, exits, _ in
            #expect(process.pid > 0)
            return await exits.wait()
        }
        #expect(status == .exited(code: 7))
        let env = try String(contentsOfFile: envFile, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(env.contains("LIFECYCLE_APP_ID=org.example.EnvApp"))
        #expect(env.contains("EXTRA_VAR=extra value"))
        let optionsLine = try #require(env.first { $0.hasPrefix("LIFECYCLE_LAUNCH_OPTIONS=") })
        let decoded = try UserInfo(json: String(optionsLine.dropFirst("LIFECYCLE_LAUNCH_OPTIONS=".count)))
        #expect(LaunchOptions(userInfo: decoded) == options)
    }

    @Test func exitBySignalIsReported() async throws {
        let status = try await withApp(testManifest("/bin/sleep", ["600"])) { process, exits, _ in
            #expect(process.exitStatus == nil)
            process.terminate(policy: TerminationPolicy(deadline: .zero, grace: .seconds(30)))
            return await exits.wait()
        }
        #expect(status == .signaled(signal: SIGTERM, coreDumped: false))
    }

    @Test func suspendReallyStopsTheProcessAndResumeContinuesIt() async throws {
        try await withApp(testManifest("/bin/sleep", ["600"])) { process, _, _ in
            #expect(process.suspensionMethod == .stopSignal)
            try await process.suspend()
            #expect(ProcFS.state(of: process.pid) == "T")
            #expect(process.isSuspended)
            try await process.suspend()  // already suspended: succeeds at once
            try await process.resume()
            let state = try #require(ProcFS.state(of: process.pid))
            #expect(state == "S" || state == "R", "state \(state)")
            #expect(!process.isSuspended)
            #expect((process.residentBytes ?? 0) > 0)
        }
    }

    @Test func suspendingAnExitedAppFails() async throws {
        try await withApp(testManifest("/bin/true")) { process, exits, _ in
            #expect(await exits.wait() == .exited(code: 0))
            let error = await #expect(throws: AppProcessError.self) { try await process.suspend() }
            #expect(error?.code == .notRunning)
            #expect(process.residentBytes == nil)
        }
    }

    @Test func hungAppGetsSIGTERMAfterTheDeadlineThenSIGKILLAfterTheGrace() async throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        let fifo = try dir.fifo("ready")
        // The ignored SIGTERM survives the exec, so the sleep ignores it too.
        let app = try dir.script("hung.sh", #"trap '' TERM; echo ready > "$1"; exec /bin/sleep 600"#)
        let steps = Mutex<[TerminationPolicy.Step]>([])
        let status = try await withApp(testManifest(app, [fifo])) { process, exits, loop in
            let reader = try FIFOReader(path: fifo, loop: loop)
            #expect(try await reader.line() == "ready")
            process.terminate(policy: TerminationPolicy(deadline: .milliseconds(200), grace: .milliseconds(200))) {
                step in
                steps.withLock { $0.append(step) }
            }
            return await exits.wait()
        }
        #expect(steps.withLock { $0 } == [.sentTerminate, .sentKill])
        #expect(status == .signaled(signal: SIGKILL, coreDumped: false))
    }

    @Test func suspendedAppIsContinuedBeforeSIGTERMSoItsHandlerRuns() async throws {
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        let fifo = try dir.fifo("ready")
        let app = try dir.script(
            "graceful.sh",
            """
            trap 'exit 3' TERM
            echo ready > "$1"
            while :; do /bin/sleep 1 & wait $!; done
            """)
        let steps = Mutex<[TerminationPolicy.Step]>([])
        let status = try await withApp(testManifest(app, [fifo])) { process, exits, loop in
            let reader = try FIFOReader(path: fifo, loop: loop)
            #expect(try await reader.line() == "ready")
            try await process.suspend()
            #expect(ProcFS.state(of: process.pid) == "T")
            process.terminate(policy: TerminationPolicy(deadline: .zero, grace: .seconds(30))) { step in
                steps.withLock { $0.append(step) }
            }
            return await exits.wait()
        }
        // exit 3 comes from the shell's own TERM handler, which only runs once it is continued.
        #expect(status == .exited(code: 3))
        #expect(steps.withLock { $0 } == [.sentTerminate])
    }

    @Test func appThatExitsBeforeTheDeadlineGetsNoSignal() async throws {
        let steps = Mutex<[TerminationPolicy.Step]>([])
        let status = try await withApp(testManifest("/bin/true")) { process, exits, _ in
            process.terminate(policy: TerminationPolicy(deadline: .seconds(30), grace: .seconds(30))) { step in
                steps.withLock { $0.append(step) }
            }
            return await exits.wait()
        }
        #expect(status == .exited(code: 0))
        #expect(steps.withLock { $0 }.isEmpty)
    }

    @Test func invalidEnvironmentIsRejectedBeforeSpawning() throws {
        let loop = try EventLoop(name: "lifecycled-test")
        defer { loop.shutdown() }
        #expect(throws: AppProcessError.self) {
            _ = try AppProcess.launch(
                manifest: testManifest("/bin/true"), environment: ["BAD=NAME": "x"], loop: loop,
                logger: Logger(label: "test")
            ) {
                _ in
            }
        }
    }

    @Test(.enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func freezerPathFreezesAndThawsADelegatedCgroup() async throws {
        let cgroup = try FreezerFixture()
        defer { cgroup.remove() }
        try await withApp(testManifest("/bin/sleep", ["600"]), cgroupDirectory: cgroup.path) { process, _, _ in
            #expect(process.suspensionMethod == .freezer(cgroupDirectory: cgroup.path))
            try await process.suspend()
            #expect(CgroupFreezer(directory: cgroup.path).isFrozen == true)
            try await process.resume()
            #expect(CgroupFreezer(directory: cgroup.path).isFrozen == false)
        }
    }

    @Test(.enabled(if: FreezerFixture.available, "needs a writable cgroup2 mount (root, cgroup v2 or hybrid)"))
    func spawningIntoACgroupStartsTheAppThereAndReportsExecFailures() async throws {
        let cgroup = try FreezerFixture()
        defer { cgroup.remove() }
        // An fd the daemon leaks (no O_CLOEXEC) must not reach the app.
        let leaked = open("/dev/zero", O_RDONLY)
        #expect(leaked >= 3)
        defer { close(leaked) }
        // The child's setup matches posix_spawn's: own process group, stdin from /dev/null.
        try await withApp(testManifest("/bin/sleep", ["600"]), cgroupDirectory: cgroup.path) { process, _, _ in
            #expect(ProcFS.read(cgroup.path + "/cgroup.procs")?.split(separator: "\n") == [Substring("\(process.pid)")])
            #expect(getpgid(process.pid) == process.pid)
            let fds = "/proc/\(process.pid)/fd"
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/0")) == "/dev/null")
            // (sleep itself may briefly hold the locale archive open while it starts.)
            let targets = ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).filter {
                (Int($0) ?? 0) >= 3
            }.compactMap {
                try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)
            }
            #expect(!targets.contains("/dev/zero"), "\(targets)")
            #expect(!targets.contains { $0.hasPrefix("pipe:") || $0.hasPrefix("socket:") }, "\(targets)")
        }
        let loop = try EventLoop(name: "lifecycled-test")
        defer { loop.shutdown() }
        // An executable file whose interpreter is missing: passes the manifest check, fails at exec.
        let directory = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { directory.remove() }
        let script = try directory.write("bad-interpreter.sh", "#!/nonexistent/interpreter\n")
        chmod(script, 0o755)
        let missing = try testManifest(script)
        do throws(AppProcessError) {
            _ = try AppProcess.launch(
                manifest: missing, cgroupDirectory: cgroup.path, loop: loop, logger: Logger(label: "test")
            ) { _ in }
            Issue.record("launching a missing executable succeeded")
        } catch {
            #expect(error.code == .spawnFailed)
            #expect("\(error)".contains("No such file"), "\(error)")
        }
        // The failed child was reaped and left the cgroup empty.
        #expect(ProcFS.read(cgroup.path + "/cgroup.procs")?.isEmpty == true)
    }
}

/// A child cgroup of the cgroup2 mount's root, for the freezer test; removed (empty) afterwards.
struct FreezerFixture {
    let path: String

    static let available: Bool = {
        guard let fixture = try? FreezerFixture() else { return false }
        fixture.remove()
        return true
    }()

    init() throws {
        guard let mount = ProcFS.cgroup2MountPoint() else { throw TestFailure("no cgroup2 mount") }
        path = "\(mount)/lifecycled-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(path, 0o755) == 0 else { throw TestFailure("mkdir \(path): \(String(cString: strerror(errno)))") }
        guard access(path + "/cgroup.freeze", W_OK) == 0 else {
            rmdir(path)
            throw TestFailure("no cgroup.freeze")
        }
    }

    func remove() { rmdir(path) }
}

@Suite("an app's environment")
struct AppEnvironmentTests {
    @Test func theDaemonsOwnSystemdVariablesAreNotInherited() throws {
        let base = [
            "HOME": "/home/u", "STATE_DIRECTORY": "/home/u/.local/state/lifecycled", "NOTIFY_SOCKET": "/run/x",
            "WATCHDOG_USEC": "30000000", "JOURNAL_STREAM": "8:1234", "XDG_ACTIVATION_TOKEN": "spent",
        ]
        let environment = try AppProcess.environment(
            base: base, appID: "org.example.A", launchOptions: LaunchOptions(), extra: ["XDG_ACTIVATION_TOKEN": "fresh"]
        )
        #expect(environment["HOME"] == "/home/u" && environment["JOURNAL_STREAM"] == "8:1234")
        #expect(environment["STATE_DIRECTORY"] == nil && environment["NOTIFY_SOCKET"] == nil)
        #expect(environment["WATCHDOG_USEC"] == nil)
        // A token for this launch (a banner click) is passed; the daemon's own is not.
        #expect(environment["XDG_ACTIVATION_TOKEN"] == "fresh")
        #expect(
            try AppProcess.environment(base: base, appID: "org.example.A", launchOptions: LaunchOptions(), extra: [:])[
                "XDG_ACTIVATION_TOKEN"] == nil)
    }
}
