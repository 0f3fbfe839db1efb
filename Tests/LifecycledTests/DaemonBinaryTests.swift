import AppLifecycle
import AppLifecycleMain
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledClient
import LifecycledProtocol
import LifecycledTestSupport
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

/// The built `lifecycled`, started as a child of the test and stopped by its own pid.
final class SpawnedDaemon: Sendable {
    let process: Process
    private let exits: AsyncStream<Int32>

    /// Starts `executable`; its standard error goes to `standardErrorPath` when given, else to the test's.
    init(_ executable: String, _ arguments: [String], standardErrorPath: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        if let standardErrorPath {
            guard FileManager.default.createFile(atPath: standardErrorPath, contents: nil),
                let log = FileHandle(forWritingAtPath: standardErrorPath)
            else { throw TestFailure("cannot create \(standardErrorPath)") }
            process.standardError = log
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = {
            continuation.yield($0.terminationStatus)
            continuation.finish()
        }
        exits = stream
        try process.run()
        self.process = process
    }

    /// The exit status (the suite's time limit is the hang guard).
    func exitStatus() async -> Int32? {
        for await status in exits { return status }
        return nil
    }

    /// SIGKILL to its own pid if it still runs (the cleanup of a failed test).
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}

/// The built `lifecycled` on a private bus, with its own apps and state directories, and a client
/// that follows its name: what the tests of the binary share. ``close()`` stops the bus and removes
/// the directories; each ``start()``ed daemon is the test's to kill by its pid.
final class BinaryDaemonRig {
    let binary: String
    let bus: PrivateBus
    let directory: TemporaryDirectory
    let client: DaemonTestClient
    let tracker: NameOwnerTracker
    /// `lifecycled`'s command line (extra arguments last).
    let arguments: [String]

    init(prefix: String, extraArguments: [String] = []) async throws {
        binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built; run `swift build` first")
        bus = try PrivateBus()
        directory = try TemporaryDirectory(prefix: prefix)
        do {
            try FileManager.default.createDirectory(atPath: appsDirectory(directory), withIntermediateDirectories: true)
            client = try await DaemonTestClient(address: bus.address, name: "binary-client")
            tracker = try await client.connection.trackNameOwner(LifecycledProtocol.busName)
        } catch {
            bus.stop()
            directory.remove()
            throw error
        }
        arguments =
            [
                "--address", bus.address, "--apps-directory", appsDirectory(directory), "--no-host-sources",
                "--state-directory", directory.path + "/daemon-state",
            ] + extraArguments
    }

    /// Starts lifecycled and waits until it owns its name.
    ///
    /// - Parameter standardErrorPath: Where its log goes, for a test that reads it; else the test's output.
    func start(standardErrorPath: String? = nil) async throws -> SpawnedDaemon {
        let daemon = try SpawnedDaemon(binary, arguments, standardErrorPath: standardErrorPath)
        guard await eventually({ tracker.currentOwner != nil }) else {
            daemon.kill()
            throw TestFailure("lifecycled did not take its name")
        }
        return daemon
    }

    func close() {
        client.close()
        bus.stop()
        directory.remove()
    }
}

@Suite("lifecycled binary", .serialized, .timeLimit(.minutes(2)))
struct DaemonBinaryTests {
    @Test func ownsTheNameRefusesASecondInstanceAndStopsOnSIGTERM() async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "lifecycled"), "lifecycled is not built; run `swift build` first")
        let binary = products + "/lifecycled"
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        try writeManifest(
            dir, id: "org.example.Polite", executable: try writePythonApp(dir), arguments: [dir.path + "/polite.log"])

        let client = try await DaemonTestClient(address: bus.address, name: "binary-client")
        defer { client.close() }
        let owners = ChangeSignal()
        let tracker = try await client.connection.trackNameOwner(LifecycledProtocol.busName)
        let watch = try await tracker.addOwnerChangeHandler { _ in owners.signal() }
        defer { watch.cancel() }

        let arguments = [
            "--address", bus.address, "--apps-directory", appsDirectory(dir), "--enable-simulate", "--no-host-sources",
            "--state-directory", dir.path + "/daemon-state",
        ]
        let daemon = try SpawnedDaemon(binary, arguments)
        defer { daemon.kill() }
        try await owners.wait(for: "lifecycled to own its name") { tracker.currentOwner != nil }

        let second = try await runTool(binary, arguments)
        #expect(second.status == 1)
        #expect(
            second.stderr.contains("another lifecycled already owns org.applifecycle.Lifecycled1"), "\(second.stderr)")
        // It names the process that owns the name and what to do (issue 20: errors a person can act on).
        #expect(
            second.stderr.contains("(process \(daemon.process.processIdentifier), connection :"), "\(second.stderr)")
        #expect(second.stderr.contains("systemctl --user stop lifecycled"))
        // An unreachable bus is explained, without the "--address" advice it was given.
        let absentBus = "unix:path=\(dir.path)/no-bus"
        let unreachable = try await runTool(binary, ["--address", absentBus, "--no-host-sources"])
        #expect(unreachable.status == 1)
        #expect(
            unreachable.stderr.contains(
                "lifecycled: cannot connect to the D-Bus address \(absentBus): no such socket; check the address"),
            "\(unreachable.stderr)")
        #expect(!unreachable.stderr.contains("or name the bus with --address"))
        // A state directory it cannot write stops it before it acknowledges anything it could not keep.
        let file = try dir.write("a-file", "")
        let stateless = try await runTool(
            binary, ["--address", bus.address, "--no-host-sources", "--state-directory", file + "/state"])
        #expect(stateless.status == 1)
        #expect(
            stateless.stderr.contains(
                "lifecycled: cannot keep state in \(file)/state: it does not exist and cannot be made (Not a directory); give --state-directory a directory"
            ), "\(stateless.stderr)")
        let usage = try await runTool(binary, ["--bogus"])
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("Unknown option '--bogus'"), "\(usage.stderr)")
        let cgroups = try await runTool(binary, ["--app-cgroups", "relative/dir"])
        #expect(cgroups.status == 2)
        #expect(
            cgroups.stderr.contains("--app-cgroups must be auto, off or an absolute cgroup2 directory"),
            "\(cgroups.stderr)")
        let source = try await runTool(binary, ["--host-source", "weather"])
        #expect(source.status == 2)
        #expect(
            source.stderr.contains("--host-source 'weather' is not a host source (logind,")
                && source.stderr.contains("device-conditions"), "\(source.stderr)")
        let both = try await runTool(binary, ["--host-source", "logind", "--no-host-sources"])
        #expect(both.status == 2)
        #expect(both.stderr.contains("contradict each other"), "\(both.stderr)")

        // It hosts: an app launched through it, then SIGTERM ends the app and the daemon.
        try await client.call(LifecycledProtocol.Method.launch.name, [.string("org.example.Polite"), encodeInfo([:])])
        try await client.log.waitForState("org.example.Polite", .active)
        kill(daemon.process.processIdentifier, SIGTERM)
        #expect(await daemon.exitStatus() == 0)
        try await client.log.waitForState("org.example.Polite", .notRunning)
        // The command went to the app alone; the app logs every command it gets.
        #expect(logLines(dir.path + "/polite.log").contains { $0.hasPrefix("terminate") })
        #expect(client.log.commands("org.example.Polite").isEmpty)
        try await owners.wait(for: "the name to be released") { tracker.currentOwner == nil }
    }

    /// A daemon without its bus serves nobody: it must not stay up as an active unit. It stops
    /// its apps and exits 1, so that `Restart=on-failure` starts it again.
    @Test func whenItsBusDiesItTerminatesItsAppsAndExitsWithStatusOne() async throws {
        let rig = try await BinaryDaemonRig(prefix: "lifecycled-tests")
        defer { rig.close() }
        let (bus, dir, client) = (rig.bus, rig.directory, rig.client)
        try writeManifest(
            dir, id: "org.example.Polite", executable: try writePythonApp(dir), arguments: [dir.path + "/polite.log"])
        let daemon = try await rig.start()
        defer { daemon.kill() }
        try await client.call(LifecycledProtocol.Method.launch.name, [.string("org.example.Polite"), encodeInfo([:])])
        try await client.log.waitForState("org.example.Polite", .active)
        let apps = try await client.call(LifecycledProtocol.Method.listApps.name)
        let entry = try #require(
            apps.first?.arrayValue?.first { $0.structValue?.first?.stringValue == "org.example.Polite" })
        let appPID = try #require(entry.structValue?[3].uint32Value.flatMap { pid_t(exactly: $0) })
        defer { if !processHasEnded(appPID) { kill(appPID, SIGKILL) } }

        bus.stop()
        #expect(await daemon.exitStatus() == 1)
        // lifecycled reaped it before exiting: the app's pid is gone (or a zombie of a non-reaping init).
        #expect(processHasEnded(appPID))
    }
}

/// Whether a pid no longer names a running process (gone, or a zombie waiting for its parent).
func processHasEnded(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    // The state follows the command name's closing parenthesis.
    guard let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}

@Suite("lifecycled installed as a D-Bus service", .serialized, .timeLimit(.minutes(2)))
struct DaemonActivationTests {
    @MainActor final class Delegate: ApplicationDelegate {
        func applicationDidBecomeActive(_ application: Application) {}
    }

    @MainActor
    @Test(
        "an app in automatic mode chooses lifecycled when it is only activatable, starts it with RegisterApp and registers once"
    )
    func automaticModeActivatesTheDaemon() async throws {
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let services = try TemporaryDirectory(prefix: "dbus-services")
        defer { services.remove() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        let bus = try PrivateBus(serviceDirectory: services.path)
        defer { bus.stop() }
        let client = try await DaemonTestClient(address: bus.address, name: "activation-client")
        defer { client.close() }
        try installLifecycledService(
            in: services, binary: binary, busAddress: bus.address, appsDirectory: appsDirectory(dir))
        try await client.connection.reloadBusConfiguration()
        try await client.connection.stoppingActivatedServices([LifecycledProtocol.busName]) {
            try await activateThroughAnApp(bus: bus, client: client)
        }
    }

    /// The fleet as an operator starts it: `lifecyclectl activate` (here its `Launch` call) is what
    /// D-Bus-activates lifecycled; the bus hands the call over the moment lifecycled owns its name,
    /// and counter-app, launched for it, registers for remote notifications at once. It gets its
    /// device token (through the broker) rather than `no-push-distributor`.
    @MainActor
    @Test func anAppLaunchedByTheCallThatActivatesLifecycledRegistersForRemoteNotifications() async throws {
        let binary = try #require(BuiltProducts.path(of: "lifecycled"), "lifecycled is not built")
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        let rig = try await FleetRig()
        let services = try TemporaryDirectory(prefix: "dbus-services")
        defer { services.remove() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        let launcher = try writeScript(
            dir, "counter.sh",
            "XDG_STATE_HOME=\(dir.path)/xdg exec \(products)/counter-app --host lifecycled --state-directory \(dir.path)/counter-state >>\(dir.path)/counter.log 2>&1"
        )
        try writeManifest(dir, id: "org.example.Counter", executable: launcher)
        let bus = try PrivateBus(serviceDirectory: services.path)
        defer { bus.stop() }
        let client = try await DaemonTestClient(address: bus.address, name: "activation-client")
        defer { client.close() }
        try installLifecycledService(
            in: services, binary: binary, busAddress: bus.address, appsDirectory: appsDirectory(dir),
            arguments: ["--config", rig.configurationPath])
        try await client.connection.reloadBusConfiguration()
        try await client.connection.stoppingActivatedServices([LifecycledProtocol.busName]) {
            #expect(try await client.connection.nameOwner(LifecycledProtocol.busName) == nil)
            try await client.call(
                LifecycledProtocol.Method.launch.name,
                [.string("org.example.Counter"), UserInfoBusCodec.encode(UserInfo())])
            let token = dir.path + "/counter-state/device-token.json"
            #expect(
                await eventually(hangGuard: .seconds(30)) { FileManager.default.fileExists(atPath: token) },
                "\(logLines(dir.path + "/counter.log").suffix(8))")
            #expect(
                !callbacks(dir.path + "/counter.log").contains {
                    $0.contains("didFailToRegisterForRemoteNotifications")
                })
        }
    }

    @MainActor private func activateThroughAnApp(bus: PrivateBus, client: DaemonTestClient) async throws {
        let decision = await HostSelection.automatic.decide(environment: [:], sessionBus: .address(bus.address))
        #expect(decision.host == .lifecycled)
        #expect(decision.reason.contains("activatable"), "\(decision)")
        #expect(try await client.connection.nameOwner(LifecycledProtocol.busName) == nil)

        let id = "org.example.Activating"
        let host = LifecycledHost(
            configuration: .init(
                appID: id, busAddress: .address(bus.address), environment: [:], handlesTerminationSignals: false))
        defer { host.stop() }
        let delegate = Delegate()
        let app = Application(
            delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
            configuration: .init(applicationIdentifier: id, isStateRestorationEnabled: false))
        await host.prepare(app)
        let owner = try #require(try await client.connection.nameOwner(LifecycledProtocol.busName))
        #expect(host.status.isHosted)
        #expect(host.status.snapshot.daemonOwner == owner)

        app.launch(options: host.launchOptions)
        try await client.log.waitForState(id, .active)
        await host.flush()
        // The owner change the activation caused is not taken for a new daemon to register with again.
        #expect(host.status.snapshot.registrations == 1)
        #expect(host.status.isHosted)
    }
}
