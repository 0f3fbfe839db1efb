import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledClient
import LifecycledProtocol
import LifecycledTestSupport
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

// The fixtures of the Daemon*Tests (no tests in this file; the name follows the Daemon*Tests
// pattern of the files this work owns): a LifecycleDaemon in-process on its own PrivateBus,
// a client connection that records the daemon's signals, fake apps played from a second
// connection, and script apps (/usr/bin/python3 with dbus-python, or /bin/sh) for launches.

/// Every signal lifecycled emitted, in bus order.
final class DaemonSignalLog: Sendable {
    private let signals = Mutex<[BusSignal]>([])
    let changes = ChangeSignal()

    func add(_ signal: BusSignal) {
        signals.withLock { $0.append(signal) }
        changes.signal()
    }

    var all: [BusSignal] { signals.withLock { $0 } }

    /// `from->to` of every StateChanged of an app, in order.
    func stateChanges(_ id: String) -> [String] {
        all.filter { $0.member == LifecycledProtocol.Signal.stateChanged.name && $0.arguments[0].stringValue == id }
            .map { "\($0.arguments[1].stringValue ?? "?")->\($0.arguments[2].stringValue ?? "?")" }
    }

    /// The commands sent to an app, in order.
    func commands(_ id: String) -> [String] {
        all.filter { $0.member == LifecycledProtocol.Signal.command.name && $0.arguments[0].stringValue == id }
            .map { $0.arguments[1].stringValue ?? "?" }
    }

    /// The userInfo of every `Notification` an app posted with this name, in order.
    func notifications(_ id: String, _ name: String) -> [UserInfo] {
        all.filter {
            $0.member == LifecycledProtocol.Signal.notification.name && $0.arguments[0].stringValue == id
                && $0.arguments[1].stringValue == name
        }.compactMap { try? UserInfoBusCodec.decodeUserInfo($0.arguments[2]) }
    }

    /// The position of the first signal matching `predicate`, if any.
    func index(where predicate: (BusSignal) -> Bool) -> Int? { all.firstIndex(where: predicate) }

    /// Waits (on the bus, not by polling) until `condition` holds on the log.
    func wait(for what: String, until condition: @escaping @Sendable (DaemonSignalLog) -> Bool) async throws {
        try await changes.wait(for: what, timeout: .seconds(30)) { [self] in condition(self) }
    }

    /// Waits until an app's StateChanged list ends with `state`.
    func waitForState(_ id: String, _ state: ApplicationState) async throws {
        try await wait(for: "\(id) to be \(state)") {
            $0.stateChanges(id).last?.hasSuffix("->\(state.rawValue)") == true
        }
    }
}

/// A D-Bus client of lifecycled with its own loop: calls, and the recorded signals.
final class DaemonTestClient: Sendable {
    let loop: EventLoop
    let connection: BusConnection
    let log = DaemonSignalLog()
    private let subscription: BusSubscription

    init(address: String, name: String) async throws {
        loop = try EventLoop(name: name)
        connection = try await BusConnection(.address(address), loop: loop, description: name, timeout: .seconds(10))
        let log = self.log
        subscription = try await connection.subscribe(
            sender: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: nil
        ) { log.add($0) }
    }

    @discardableResult
    func call(_ member: String, _ arguments: [BusValue] = []) async throws -> [BusValue] {
        try await connection.call(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, member: member, arguments: arguments, timeout: .seconds(30))
    }

    /// The D-Bus error name a call fails with, or `nil` if it succeeds.
    func errorName(_ member: String, _ arguments: [BusValue] = []) async -> String? {
        do {
            try await call(member, arguments)
            return nil
        } catch let error as BusError {
            return error.name
        } catch {
            return "\(error)"
        }
    }

    func property(_ name: String) async throws -> BusValue {
        try await connection.getProperty(
            destination: LifecycledProtocol.busName, path: LifecycledProtocol.objectPath,
            interface: LifecycledProtocol.interface, name: name)
    }

    /// Waits until the daemon has emitted everything it emitted before this call returns.
    func barrier() async throws {
        // The daemon answers in order after its earlier signals; the bus routes them in order.
        _ = try await call(LifecycledProtocol.Method.listApps.name)
    }

    func close() {
        subscription.cancel()
        connection.close()
        loop.shutdown()
    }
}

/// The daemon, its bus and its apps directory for one test.
@MainActor
final class DaemonHarness {
    let bus: PrivateBus
    let directory: TemporaryDirectory
    let daemon: LifecycleDaemon
    let client: DaemonTestClient
    /// Every signal the daemon emitted, as it handed it to the bus (``LifecycleDaemon/onSignalEmitted``).
    let emitted = DaemonSignalLog()
    private(set) var releases: [String] = []
    private(set) var exits: [(id: String, status: AppExitStatus)] = []
    let exitChanges = ChangeSignal()

    init(bus: PrivateBus, directory: TemporaryDirectory, daemon: LifecycleDaemon, client: DaemonTestClient) {
        self.bus = bus
        self.directory = directory
        self.daemon = daemon
        self.client = client
        daemon.onSleepLockReleased = { [weak self] reason in
            self?.releases.append(reason)
            self?.exitChanges.signal()
        }
        // In the daemon's own order, Commands included (the bus gives those to their app alone).
        daemon.onSignalEmitted = { [emitted] signal in emitted.add(signal) }
        daemon.onAppExit = { [weak self] id, status in
            self?.exits.append((id, status))
            self?.exitChanges.signal()
        }
    }

    /// The pid of a launched app, if it runs.
    func pid(_ id: String) -> pid_t? {
        daemon.registry[id]?.process.map(\.pid)
    }

    /// Waits until an app's process has exited, and returns how.
    func waitForExit(_ id: String) async throws -> AppExitStatus {
        try await exitChanges.wait(for: "\(id) to exit") { @MainActor [self] in exits.contains { $0.id == id } }
        return exits.first { $0.id == id }!.status
    }

    /// Waits until the sleep lock was released, and returns why.
    func waitForSleepRelease() async throws -> String {
        try await exitChanges.wait(for: "the sleep lock release") { @MainActor [self] in !releases.isEmpty }
        return releases[0]
    }

    /// Another client on the same bus.
    func newClient(_ name: String) async throws -> DaemonTestClient {
        try await DaemonTestClient(address: bus.address, name: name)
    }
}

/// The apps directory of a harness.
func appsDirectory(_ directory: TemporaryDirectory) -> String { directory.path + "/apps" }

/// Writes a manifest into the apps directory.
@discardableResult
func writeManifest(
    _ directory: TemporaryDirectory, id: String, executable: String, arguments: [String] = [], schemes: [String] = [],
    shortcutItems: [(type: String, title: String)] = [], extra: [String: Any] = [:]
) throws -> String {
    var object: [String: Any] = [
        "id": id, "name": id, "executable": executable, "arguments": arguments, "urlSchemes": schemes,
    ]
    object.merge(extra) { _, new in new }
    if !shortcutItems.isEmpty {
        object["shortcutItems"] = shortcutItems.map { ["type": $0.type, "localizedTitle": $0.title] }
    }
    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return try directory.write("apps/\(id).json", String(decoding: data, as: UTF8.self))
}

/// Runs a daemon on its own private bus for `body`; always shuts it down (every app it
/// launched is terminated by its pidfd and process group), closes the client, stops the bus.
/// `beforeStart` sees the bus before the daemon connects (to watch what its start does).
///
/// The default termination deadline is generous: cooperative test apps are Python processes
/// that a loaded 2-core CI machine may take a second or more to schedule. Tests about the
/// deadline itself pass a short policy with hung apps only.
@MainActor
func withDaemon<T>(
    simulate: Bool = true,
    termination: TerminationPolicy = TerminationPolicy(deadline: .seconds(5), grace: .milliseconds(500)),
    sleepDeadline: Duration? = .seconds(20),
    appCgroups: AppCgroupPlacement.Mode = .off,
    systemBus: BusConnection.Address = .system,
    fleetConfiguration: String? = nil,
    pushQueueCapacity: Int = PushQueue.defaultCapacity,
    configure: (inout DaemonConfiguration) -> Void = { _ in },
    setUp: (TemporaryDirectory) throws -> Void = { _ in },
    beforeStart: (PrivateBus) async throws -> Void = { _ in },
    _ body: (DaemonHarness) async throws -> T
) async throws -> T {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let directory = try TemporaryDirectory(prefix: "lifecycled-tests")
    defer { directory.remove() }
    try FileManager.default.createDirectory(atPath: appsDirectory(directory), withIntermediateDirectories: true)
    try setUp(directory)
    var configuration = DaemonConfiguration(
        busAddress: .address(bus.address), appsDirectories: [appsDirectory(directory)], simulationEnabled: simulate,
        bridgeSources: [], systemBus: systemBus, termination: termination, sleepDeadline: sleepDeadline,
        appCgroups: appCgroups,
        stateDirectory: directory.path + "/daemon-state",
        fleetConfigurationPath: fleetConfiguration ?? directory.path + "/no-lifecycled.conf",
        logger: Logger(label: "lifecycled"))
    configuration.pushQueueCapacity = pushQueueCapacity
    // The display servers of the machine running the tests are none of the daemon's business.
    configuration.lifecycle.windowSource = .off
    configure(&configuration)
    let daemon = LifecycleDaemon(configuration: configuration)
    try await beforeStart(bus)
    try await daemon.start()
    let client: DaemonTestClient
    do {
        client = try await DaemonTestClient(address: bus.address, name: "test-client")
    } catch {
        await daemon.shutdown(reason: .hostRequest)
        throw error
    }
    let harness = DaemonHarness(bus: bus, directory: directory, daemon: daemon, client: client)
    do {
        let result = try await body(harness)
        await daemon.shutdown(reason: .hostRequest)
        client.close()
        return result
    } catch {
        await daemon.shutdown(reason: .hostRequest)
        client.close()
        throw error
    }
}

/// A fake app played from its own connection: registers, reports, records its commands.
final class FakeApp: Sendable {
    let id: String
    let client: DaemonTestClient

    init(_ id: String, address: String) async throws {
        self.id = id
        client = try await DaemonTestClient(address: address, name: "fake-\(id)")
    }

    /// `RegisterApp`; returns the launch options and the host facts.
    func register() async throws -> (options: UserInfo, facts: UserInfo) {
        let reply = try await client.call(LifecycledProtocol.Method.registerApp.name, [.string(id)])
        return (try UserInfoBusCodec.decodeUserInfo(reply[0]), try UserInfoBusCodec.decodeUserInfo(reply[1]))
    }

    func report(_ state: ApplicationState) async throws {
        try await client.call(LifecycledProtocol.Method.reportState.name, [.string(id), .string(state.rawValue)])
    }

    func close() { client.close() }
}

/// A script app in Python (dbus-python, GLib): registers, keeps its connection, follows the
/// host facts with the lifecycle's rules (foreground when foreground, session active and not
/// sleeping; inactive when locked or not focused; otherwise background, then suspended), reports every state,
/// exits on `terminate`, and appends every command to a log file. Arguments: the log file and
/// the megabytes of ballast to hold (to set its resident size).
let pythonAppSource = #"""
    import os, sys, json, time
    import dbus, dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    app = os.environ["LIFECYCLE_APP_ID"]
    log_path = sys.argv[1]
    ballast = bytearray(int(sys.argv[2]) * 1024 * 1024 if len(sys.argv) > 2 else 0)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1

    def log(line):
        with open(log_path, "a") as f:
            f.write(line + "\n")

    bus = dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"])
    daemon = dbus.Interface(bus.get_object("org.applifecycle.Lifecycled1", "/org/applifecycle/Lifecycled1"),
                            "org.applifecycle.Lifecycled1")
    state = "not-running"
    facts = {"sleeping": False, "locked": False, "session-active": True, "foreground": True, "focused": True}
    ORDER = ["suspended", "background", "inactive", "active"]

    def target():
        if facts["foreground"] and facts["session-active"] and not facts["sleeping"]:
            return "inactive" if facts["locked"] or not facts["focused"] else "active"
        return "suspended"

    def settle():
        global state
        goal = target()
        if state == "not-running":
            state = "inactive"
            daemon.ReportState(app, state)
        while state != goal:
            i, j = ORDER.index(state), ORDER.index(goal)
            state = ORDER[i + 1] if j > i else ORDER[i - 1]
            daemon.ReportState(app, state)

    def on_command(app_id, command, arguments):
        log(command + " " + json.dumps({str(k): (bool(v) if isinstance(v, dbus.Boolean) else str(v)) for k, v in arguments.items()}, sort_keys=True))
        if command in ("sleeping", "locked", "session-active", "foreground", "focused"):
            facts[command] = bool(arguments["value"])
            settle()
        elif command == "post" and state == "suspended":
            # As LifecycledHost does: the daemon continued the app for the post; still suspended.
            # Then a pause, so a stop the daemon sends for that report lands before the next command.
            daemon.ReportState(app, "suspended")
            time.sleep(0.3)
        elif command == "terminate":
            daemon.ReportState(app, "not-running")
            os._exit(0)

    bus.add_signal_receiver(on_command, signal_name="Command", dbus_interface="org.applifecycle.Lifecycled1",
                            bus_name="org.applifecycle.Lifecycled1", arg0=app)
    options, host = daemon.RegisterApp(app)
    log("registered " + json.dumps({str(k): str(v) for k, v in options.items()}, sort_keys=True))
    for key in facts:
        if key in host:
            facts[key] = bool(host[key])
    settle()
    GLib.MainLoop().run()
    """#

/// Writes the Python app and returns the path of a launcher for it.
func writePythonApp(_ directory: TemporaryDirectory) throws -> String {
    let source = try directory.write("pyapp.py", pythonAppSource)
    return try writeScript(directory, "pyapp.sh", "exec /usr/bin/python3 \(source) \"$@\"")
}

/// The lines an app's log file holds now.
func logLines(_ path: String) -> [String] {
    ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
}

/// The callbacks counter-app printed to its log, in order: each line without the `counter-app: `
/// prefix and the ` state=… count=…` suffix.
func callbacks(_ log: String) -> [String] {
    logLines(log).filter { $0.hasPrefix("counter-app: ") && $0.contains(" state=") }.map { line in
        let text = line.dropFirst("counter-app: ".count)
        return String(text[..<text.range(of: " state=")!.lowerBound])
    }
}

/// The state letter of a process (`/proc/PID/stat`).
func processState(_ pid: pid_t) -> Character? { ProcFS.state(of: pid) }

/// Runs a tool on a thread of its own (it may talk to the daemon this process serves on the
/// main actor), returning its status, stdout and stderr.
func runTool(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) async throws -> (
    status: Int32, stdout: String, stderr: String
) {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            if let environment { process.environment = environment }
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            do {
                try process.run()
            } catch {
                continuation.resume(throwing: error)
                return
            }
            let stdout = out.fileHandleForReading.readDataToEndOfFile()
            let stderr = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            continuation.resume(
                returning: (
                    process.terminationStatus, String(decoding: stdout, as: UTF8.self),
                    String(decoding: stderr, as: UTF8.self)
                ))
        }
    }
}

/// The `a{sv}` of a userInfo (a literal reads as a ``UserInfo``, not a ``UserInfoValue``).
func encodeInfo(_ userInfo: UserInfo) -> BusValue { UserInfoBusCodec.encode(userInfo) }

/// Writes an executable `/bin/sh` script through a close-on-exec descriptor.
///
/// `TemporaryDirectory.script` writes through Foundation, whose descriptor is not
/// close-on-exec: a child spawned meanwhile by a parallel test (a dbus-daemon lives long)
/// inherits it, and every exec of the script then fails with ETXTBSY.
@discardableResult
func writeScript(_ directory: TemporaryDirectory, _ name: String, _ body: String) throws -> String {
    let path = directory.path + "/" + name
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw TestFailure("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    let bytes = Array(("#!/bin/sh\n" + body + "\n").utf8)
    var written = 0
    while written < bytes.count {
        let n = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw TestFailure("write \(path): \(String(cString: strerror(errno)))") }
        written += n
    }
    fchmod(fd, 0o755)
    return path
}
