import AppLifecycle
import AppLifecycleTesting
import Foundation
import Glibc
import SystemdBusTesting
import Testing

/// The example app as a real process on the real host bridge: sd_notify, delay locks, SIGTERM.
@Suite("A real process on the host bridge")
struct ProcessHostTests {
    /// A datagram socket standing in for systemd's `$NOTIFY_SOCKET`.
    final class NotifySocket {
        let path: String
        let fd: Int32

        init(directory: URL) throws {
            path = directory.appendingPathComponent("notify").path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { throw FixtureError("socket: errno \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                let bytes = Array(path.utf8)
                raw.copyBytes(from: bytes.prefix(raw.count - 1))
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else { throw FixtureError("bind \(path): errno \(errno)") }
        }

        /// The next datagram, waiting on the socket (the 30 s limit is a hang guard).
        func next() -> String? {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 30_000) == 1 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }

        /// Datagrams until one contains `needle` (included), or `nil` at the hang guard.
        func until(_ needle: String) -> [String]? {
            var seen: [String] = []
            while let message = next() {
                seen.append(message)
                if message.contains(needle) { return seen }
            }
            return nil
        }

        deinit { close(fd) }
    }

    @Test(
        "READY=1 after launch, delay locks held, SIGTERM → applicationWillTerminate with STOPPING=1 and EXTEND_TIMEOUT_USEC, exit 0"
    )
    func sigterm() throws {
        let example = try #require(
            BuiltProducts.path(of: "lifecycle-example"), "lifecycle-example not built")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "process-host-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(directory: directory)
        let systemBus = try PrivateBus()
        defer { systemBus.stop() }
        let sessionBus = try PrivateBus()
        defer { sessionBus.stop() }
        let logind = try DBusMock(template: "logind", address: systemBus.address)
        defer { logind.stop() }
        _ = try logind.addSession(id: "c1", uid: getuid(), username: "tester", active: true)

        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = systemBus.address
        environment["DBUS_SESSION_BUS_ADDRESS"] = sessionBus.address
        environment["XDG_SESSION_ID"] = "c1"
        environment["NOTIFY_SOCKET"] = notify.path
        environment["WATCHDOG_USEC"] = "400000"
        environment["MEMORY_PRESSURE_WATCH"] = "/dev/null"
        let app = try ChildProcess.spawn(
            example, ["--host", "systemd", "--trace-json"], environment: environment, stdout: .pipe)
        defer { app.terminateAndWait() }

        _ = try #require(notify.until("READY=1"), "no READY=1 from the app")
        _ = try #require(notify.until("STATUS=active"), "no STATUS=active after READY=1")
        // The host's loop pings the watchdog ($WATCHDOG_USEC) every half interval or so, not just once.
        _ = try #require(notify.until("WATCHDOG=1"), "no watchdog ping after READY=1")
        _ = try #require(notify.until("WATCHDOG=1"), "no second watchdog ping")
        let inhibitors = try logind.call(interface: "org.freedesktop.login1.Manager", method: "ListInhibitors")
        #expect(inhibitors.contains("'sleep', 'lifecycle-example'"))
        #expect(inhibitors.contains("'shutdown', 'lifecycle-example'"))

        #expect(kill(app.pid, SIGTERM) == 0)
        let untilStopping = try #require(notify.until("STOPPING=1"), "no STOPPING=1 after SIGTERM")
        #expect(untilStopping.last?.contains("EXTEND_TIMEOUT_USEC=") == true)
        #expect(app.waitForExit() == 0)
        let lines = app.readAll().split(separator: "\n").map(String.init)
        let objects = lines.compactMap { line -> [String: Any]? in
            guard let data = line.data(using: .utf8) else { return nil }
            return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
        let names = objects.compactMap { $0["name"] as? String }
        // The command line after the executable, in the launch options (the DidFinishLaunching userInfo).
        let launched = try #require(
            objects.first { $0["name"] as? String == "UIApplicationDidFinishLaunchingNotification" })
        #expect(
            (launched["userInfo"] as? [String: Any])?["ApplicationLaunchOptionsArgumentsKey"] as? [String] == [
                "--host", "systemd", "--trace-json",
            ], "\(launched)")
        let terminate = try #require(
            names.firstIndex(of: "applicationWillTerminate(_:)"), "no applicationWillTerminate in \(names)")
        let notification = try #require(names.firstIndex(of: "UIApplicationWillTerminateNotification"))
        #expect(terminate < notification)
        #expect(names.first == "application(_:willFinishLaunchingWithOptions:)")
    }
}
