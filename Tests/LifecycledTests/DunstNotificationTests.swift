import AppLifecycle
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// dunst 1.9, a notification server no one here wrote, under Xvfb on the test's private session
/// bus; both are children of the test, stopped by their pids. `dunstctl` clicks: `action 0` is a
/// click on the banner, `context` chooses a button through a `dmenu` stand-in that picks the line
/// the test names.
private final class Dunst: Sendable {
    let xvfb: ChildProcess
    let dunst: ChildProcess
    let environment: [String: String]
    let pickFile: String

    init(busAddress: String, directory: TemporaryDirectory) async throws {
        for tool in ["/usr/bin/Xvfb", "/usr/bin/dunst", "/usr/bin/dunstctl"] {
            try #require(
                FileManager.default.isExecutableFile(atPath: tool),
                "\(tool) is missing: `apt-get install dunst xvfb` (the Makefile's APT_PACKAGES)")
        }
        // A display number no X server uses.
        let display = try #require(
            (200..<300).first {
                !FileManager.default.fileExists(atPath: "/tmp/.X\($0)-lock")
                    && !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)")
            })
        xvfb = try ChildProcess.spawn(
            "/usr/bin/Xvfb", [":\(display)", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
            stdout: .file(directory.path + "/xvfb.log"))
        #expect(
            await eventually { FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(display)") },
            "Xvfb did not start")
        pickFile = directory.path + "/pick"
        let menu = try writeScript(
            directory, "dmenu.sh",
            "cat > \(directory.path)/menu.txt; grep -m1 -F \"$(cat \(pickFile))\" \(directory.path)/menu.txt")
        let config = directory.path + "/dunstrc"
        try "[global]\n    timeout = 0\n    dmenu = \(menu)\n".write(toFile: config, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["DISPLAY"] = ":\(display)"
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        self.environment = environment
        dunst = try ChildProcess.spawn(
            "/usr/bin/dunst", ["-config", config], environment: environment,
            stdout: .file(directory.path + "/dunst.log"))
    }

    /// `dunstctl` with its arguments; its standard output.
    @discardableResult
    func ctl(_ arguments: String...) async throws -> String {
        let result = try await runTool("/usr/bin/dunstctl", arguments, environment: environment)
        guard result.status == 0 else { throw TestFailure("dunstctl \(arguments): \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// How many banners dunst shows.
    func displayed() async -> Int { Int((try? await ctl("count", "displayed")) ?? "") ?? -1 }

    /// Chooses the context-menu line that contains `text` (a button's label).
    func choose(_ text: String) async throws {
        try text.write(toFile: pickFile, atomically: true, encoding: .utf8)
        try await ctl("context")
    }

    func stop() {
        dunst.terminateAndWait()
        xvfb.terminateAndWait()
    }
}

@Suite("lifecycled against dunst 1.9 under Xvfb", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DunstNotificationTests {
    /// Issue 16, defect 14 against a real server: a banner leaves dunst's screen when the user
    /// chose its button (which runs once), when the notification is cancelled, and when it is
    /// replaced; a click on the banner opens the app with it.
    @Test func bannersLeaveDunstWhenHandledCancelledOrReplaced() async throws {
        try await withDaemon { h in
            let dunst = try await Dunst(busAddress: h.bus.address, directory: h.directory)
            defer { dunst.stop() }
            #expect(
                await eventually { h.daemon.localNotifications.server?.serverOwner != nil },
                "dunst did not take the name")
            let app = try await FakeApp("org.example.Dunst", address: h.bus.address)
            defer { app.close() }
            _ = try await app.register()
            try await app.report(.background)
            func schedule(_ id: String, in seconds: Double) async throws {
                var info: UserInfo = [
                    "identifier": .string(id), "fireDate": .date(Date().addingTimeInterval(seconds)),
                    "alertTitle": .string("title \(id)"), "alertBody": .string("body of \(id)"),
                ]
                info["actions"] = .array([
                    .dictionary(["identifier": .string("archive"), "title": .string("Archive \(id)")])
                ])
                try await app.client.call(
                    LifecycledProtocol.Method.scheduleNotification.name,
                    [.string(app.id), UserInfoBusCodec.encode(info)])
            }
            func actions() -> Int { h.emitted.commands(app.id).filter { $0 == "local-notification-action" }.count }

            // Handled: the button runs handleAction once and the banner goes (dunst alone keeps it).
            try await schedule("d1", in: 0)
            #expect(await eventually { await dunst.displayed() == 1 }, "no banner on dunst")
            try await dunst.choose("Archive d1")
            try await h.emitted.wait(for: "the action") { $0.commands(app.id).contains("local-notification-action") }
            #expect(await eventually { await dunst.displayed() == 0 }, "the banner stayed after its action")
            #expect(actions() == 1)

            // Cancelled: withdrawn.
            try await schedule("d2", in: 0)
            #expect(await eventually { await dunst.displayed() == 1 })
            try await app.client.call(
                LifecycledProtocol.Method.cancelNotification.name, [.string(app.id), .string("d2")])
            #expect(await eventually { await dunst.displayed() == 0 }, "the banner stayed after its cancellation")

            // Replaced by a later one of the same identifier: withdrawn.
            try await schedule("d3", in: 0)
            #expect(await eventually { await dunst.displayed() == 1 })
            try await schedule("d3", in: 3600)
            #expect(await eventually { await dunst.displayed() == 0 }, "the banner stayed after it was replaced")

            // A click on the banner: the app is opened with it, and the banner goes.
            try await schedule("d4", in: 0)
            #expect(await eventually { await dunst.displayed() == 1 })
            try await dunst.ctl("action", "0")
            try await h.emitted.wait(for: "the click") { $0.commands(app.id).contains("local-notification-opened") }
            #expect(await eventually { await dunst.displayed() == 0 })
            #expect(actions() == 1)
        }
    }
}
