import BrokerTestSupport
import Foundation
import SystemdBusTesting
import Testing

/// Issue 20, part 5: the built lifecyclectl's failures say what went wrong and what to do, not a
/// raw errno; each is a real failure of the binary (no bus, another user's bus, no lifecycled, no
/// broker, a refused login), with exit status 1.
@Suite("lifecyclectl: failures a person can act on")
struct ActionableErrorTests {
    private func lifecyclectl(_ arguments: [String], environment: [String: String], asNobody: Bool = false) throws
        -> (status: Int32, output: String)
    {
        let binary = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        if asNobody {
            return try ChildProcess.run(
                "/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                environment: environment, includingStandardError: true)
        }
        return try ChildProcess.run(binary, arguments, environment: environment, includingStandardError: true)
    }

    private let plain = ["PATH": "/usr/bin:/bin", "HOME": "/nonexistent"]

    @Test("status with no session bus explains why and how to get one, or --address")
    func statusWithoutASessionBus() throws {
        let result = try lifecyclectl(["status"], environment: plain)
        #expect(result.status == 1)
        #expect(result.output.contains("lifecyclectl status: there is no session bus"), "\(result.output)")
        #expect(result.output.contains("dbus-run-session -- COMMAND"))
        #expect(result.output.contains("or name lifecycled's bus with --address ADDRESS"))
        #expect(!result.output.contains("ENOMEDIUM") && !result.output.contains("No medium found"))
    }

    @Test("status on a bus with no lifecycled says how to start it")
    func statusWithoutLifecycled() throws {
        let bus = try PrivateBus()
        let result = try lifecyclectl(["status", "--address", bus.address], environment: plain)
        #expect(result.status == 1)
        #expect(result.output.contains("lifecycled is not running on this bus"), "\(result.output)")
        #expect(result.output.contains("systemctl --user start lifecycled"))
    }

    @Test("another user's bus is named as such")
    func anotherUsersBus() throws {
        // A session bus as dbus-daemon ships it (session.conf: only its own user may connect; the
        // test kit's PrivateBus lets anyone in), root's, in a directory nobody may enter.
        let directory = try TemporaryDirectory(prefix: "root-session-bus")
        chmod(directory.path, 0o755)
        let socket = directory.appending("bus")
        let daemon = try ChildProcess.spawn(
            "/usr/bin/dbus-daemon", ["--session", "--nofork", "--address", "unix:path=\(socket)"])
        defer { daemon.terminateAndWait() }
        let deadline = ContinuousClock.now + .seconds(10)
        while access(socket, F_OK) != 0 && ContinuousClock.now < deadline { usleep(10_000) }
        let result = try lifecyclectl(
            ["status", "--address", "unix:path=\(socket)"], environment: plain, asNobody: true)
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "cannot connect to the bus at \(socket): it belongs to uid 0, and a bus daemon accepts only its own user's connections"
            ),
            "\(result.output)")
    }

    @Test("fleet devices with no broker says what to check; a refused login names the options")
    func fleetFailures() throws {
        let broker = try MosquittoBroker(users: ["operator": "right"])
        let unreachable = "mqtt://127.0.0.1:\(broker.port)"
        broker.stop()
        let absent = try lifecyclectl(["fleet", "devices", "--broker", unreachable], environment: plain)
        #expect(absent.status == 1)
        #expect(
            absent.output.contains("lifecyclectl fleet devices: cannot reach the broker at \(unreachable)"),
            "\(absent.output)")
        #expect(absent.output.contains("systemctl status mosquitto"))

        let running = try MosquittoBroker(users: ["operator": "right"])
        let directory = try TemporaryDirectory(prefix: "ctl-password")
        let wrong = try directory.write("password", "wrong\n", mode: 0o600)
        let refused = try lifecyclectl(
            ["fleet", "devices", "--broker", running.url, "--username", "operator", "--password-file", wrong],
            environment: plain)
        #expect(refused.status == 1)
        #expect(refused.output.contains("the broker at \(running.url) refused the login"), "\(refused.output)")
        #expect(refused.output.contains("check --username and --password-file"))
    }
}
