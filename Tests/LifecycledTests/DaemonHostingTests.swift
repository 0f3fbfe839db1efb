import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// A daemon with one manifest: the Python test app `org.example.Notes`, claiming `notes:`, which
/// logs to the file passed to `body`.
@MainActor
private func withNotesApp(_ body: @escaping @MainActor (DaemonHarness, String) async throws -> Void) async throws {
    var appLog = ""
    try await withDaemon(setUp: { dir in
        appLog = dir.path + "/notes.log"
        try writeManifest(
            dir, id: "org.example.Notes", executable: try writePythonApp(dir), arguments: [appLog], schemes: ["notes"])
    }) { (h: DaemonHarness) async throws in
        try await body(h, appLog)
    }
}

/// The launch options the Python test app got back from RegisterApp (its "registered" log line).
private func registeredLaunchOptions(_ appLog: String) throws -> UserInfo {
    let registered = try #require(logLines(appLog).first { $0.hasPrefix("registered ") })
    return try UserInfo(json: String(registered.dropFirst("registered ".count)))
}

@Suite("lifecycled hosting", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonHostingTests {
    @Test func openURLLaunchesTheClaimingAppWithTheURLAndTheCallerAsSourceThenSendsOpenURL() async throws {
        try await withNotesApp { h, appLog in
            let id = try await h.client.call(
                LifecycledProtocol.Method.openURL.name, [.string("notes://open/42"), encodeInfo([:])])
            #expect(id.first?.stringValue == "org.example.Notes")
            try await h.client.log.waitForState("org.example.Notes", .active)
            #expect(h.client.log.stateChanges("org.example.Notes") == ["not-running->inactive", "inactive->active"])

            // The launch options came back from RegisterApp: the URL and who opened it.
            let options = try registeredLaunchOptions(appLog)
            #expect(options[LaunchOptions.Key.url.rawValue]?.stringValue == "notes://open/42")
            let me = try #require(CallerPolicy.executableName(of: getpid()))
            #expect(options[LaunchOptions.Key.sourceApplication.rawValue]?.stringValue == me)

            // Running now: the second URL is a command, not a second process.
            let pid = try #require(h.pid("org.example.Notes"))
            try await h.client.call(
                LifecycledProtocol.Method.openURL.name, [.string("notes://open/43"), encodeInfo([:])])
            try await h.emitted.wait(for: "open-url command") { $0.commands("org.example.Notes").contains("open-url") }
            let command = try #require(h.emitted.all.last { $0.member == LifecycledProtocol.Signal.command.name })
            let arguments = try UserInfoBusCodec.decodeUserInfo(command.arguments[2])
            #expect(arguments["url"]?.stringValue == "notes://open/43")
            #expect(arguments[OpenURLOptions.Key.sourceApplication.rawValue]?.stringValue == me)
            #expect(h.pid("org.example.Notes") == pid)

            // Unknown scheme and bad URLs.
            #expect(
                await h.client.errorName(
                    LifecycledProtocol.Method.openURL.name, [.string("mail://x"), encodeInfo([:])])
                    == LifecycledProtocol.ErrorName.noHandler)
            #expect(
                await h.client.errorName(
                    LifecycledProtocol.Method.openURL.name, [.string("no scheme here"), encodeInfo([:])])
                    == LifecycledProtocol.ErrorName.invalidURL)
            let long = "notes://" + String(repeating: "a", count: LifecycledProtocol.Limits.urlLength)
            #expect(
                await h.client.errorName(LifecycledProtocol.Method.openURL.name, [.string(long), encodeInfo([:])])
                    == LifecycledProtocol.ErrorName.invalidURL)
        }
    }

    @Test func launchNamesTheCallerAsSourceWhateverTheOptionsSayAndLeavesURLsToOpenURL() async throws {
        try await withNotesApp { h, appLog in
            // A URL through Launch would skip OpenURL's scheme check: refused.
            #expect(
                await h.client.errorName(
                    LifecycledProtocol.Method.launch.name,
                    [
                        .string("org.example.Notes"),
                        encodeInfo([LaunchOptions.Key.url.rawValue: "mail://not-its-scheme"]),
                    ]) == BusError.Name.invalidArgs)
            try await h.client.call(
                LifecycledProtocol.Method.launch.name,
                [
                    .string("org.example.Notes"),
                    encodeInfo([LaunchOptions.Key.sourceApplication.rawValue: "org.example.Forged"]),
                ])
            try await h.client.log.waitForState("org.example.Notes", .active)
            let options = try registeredLaunchOptions(appLog)
            let me = try #require(CallerPolicy.executableName(of: getpid()))
            #expect(options[LaunchOptions.Key.sourceApplication.rawValue]?.stringValue == me)
            #expect(options[LaunchOptions.Key.url.rawValue] == nil)
        }
    }

    @Test func commandsForAnAppThatNeverRegistersAreBounded() async throws {
        // /bin/sleep never acknowledges a terminate: a short deadline ends it at the test's end.
        try await withDaemon(
            termination: TerminationPolicy(deadline: .milliseconds(100), grace: .milliseconds(500)),
            setUp: { dir in
                try writeManifest(
                    dir, id: "org.example.Mute", executable: "/bin/sleep", arguments: ["600"], schemes: ["mute"])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Mute"), encodeInfo([:])])
            let limit = LifecycleDaemon.maximumPendingCommands
            for n in 0..<(limit + 6) {
                try await h.client.call(
                    LifecycledProtocol.Method.openURL.name, [.string("mute://\(n)"), encodeInfo([:])])
            }
            let pending = try #require(h.daemon.registry["org.example.Mute"]?.pendingCommands)
            #expect(pending.count == limit)
            // The oldest went first: the newest URL is still there, the first ones are not.
            #expect(pending.last?.arguments["url"]?.stringValue == "mute://\(limit + 5)")
            #expect(pending.first?.arguments["url"]?.stringValue == "mute://6")
        }
    }

    @Test func aRegisteredAppsNotificationsAreRebroadcastAndPostBecomesAPostCommand() async throws {
        try await withDaemon { (h: DaemonHarness) async throws in
            let app = try await FakeApp("org.example.Fake", address: h.bus.address)
            defer { app.close() }
            let (options, facts) = try await app.register()
            #expect(options.isEmpty)
            #expect(facts["sleeping"]?.boolValue == false)
            #expect(facts["locked"]?.boolValue == false)
            #expect(facts["session-active"]?.boolValue == true)
            #expect(facts["foreground"]?.boolValue == true)

            try await app.report(.inactive)
            try await app.report(.active)
            try await app.client.call(
                LifecycledProtocol.Method.reportNotification.name,
                [
                    .string("org.example.Fake"), .string("UIApplicationDidBecomeActiveNotification"),
                    encodeInfo(["k": .int(1)]),
                ])
            try await h.client.log.wait(for: "the Notification signal") {
                $0.all.contains { $0.member == LifecycledProtocol.Signal.notification.name }
            }
            let notification = try #require(
                h.client.log.all.first { $0.member == LifecycledProtocol.Signal.notification.name })
            #expect(notification.arguments[0].stringValue == "org.example.Fake")
            #expect(notification.arguments[1].stringValue == "UIApplicationDidBecomeActiveNotification")
            #expect(try UserInfoBusCodec.decodeUserInfo(notification.arguments[2]) == ["k": .int(1)])
            #expect(
                try await h.client.call(LifecycledProtocol.Method.getState.name, [.string("org.example.Fake")]).first?
                    .stringValue == "active")

            try await h.client.call(
                LifecycledProtocol.Method.post.name,
                [.string("org.example.Fake"), .string("Refresh"), encodeInfo(["n": .int(2)])])
            try await app.client.log.wait(for: "the post command") { $0.commands("org.example.Fake") == ["post"] }
            let post = try #require(app.client.log.all.first { $0.member == LifecycledProtocol.Signal.command.name })
            let arguments = try UserInfoBusCodec.decodeUserInfo(post.arguments[2])
            #expect(arguments["name"]?.stringValue == "Refresh")
            #expect(arguments["userInfo"] == .dictionary(["n": .int(2)]))
            // The command went to the app's connection alone: another client heard nothing of it.
            try await h.client.barrier()
            #expect(h.client.log.commands("org.example.Fake").isEmpty)
            #expect(
                h.emitted.all.last { $0.member == LifecycledProtocol.Signal.command.name }?.destination
                    == app.client.connection.uniqueName)

            // Another connection cannot report for it, nor take its id.
            let other = try await FakeApp("org.example.Fake", address: h.bus.address)
            defer { other.close() }
            #expect(
                await other.client.errorName(
                    LifecycledProtocol.Method.reportState.name, [.string("org.example.Fake"), .string("background")])
                    == LifecycledProtocol.ErrorName.notRegistered)
            #expect(
                await other.client.errorName(LifecycledProtocol.Method.registerApp.name, [.string("org.example.Fake")])
                    == LifecycledProtocol.ErrorName.notRegistered)

            // Leaving the bus is leaving: not-running.
            app.close()
            try await h.client.log.waitForState("org.example.Fake", .notRunning)
            #expect(
                h.client.log.stateChanges("org.example.Fake") == [
                    "not-running->inactive", "inactive->active", "active->not-running",
                ])
            // Known only from its registration, it is then forgotten.
            let listed = try await h.client.call(LifecycledProtocol.Method.listApps.name, [])
            #expect(!"\(listed)".contains("org.example.Fake"), "\(listed)")
            #expect(
                await h.client.errorName(LifecycledProtocol.Method.getState.name, [.string("org.example.Fake")])
                    == LifecycledProtocol.ErrorName.unknownApp)
        }
    }

    @Test func aLaunchedAppCanOnlyBeRegisteredFromItsOwnProcessGroup() async throws {
        var fifo = ""
        try await withDaemon(setUp: { dir in
            fifo = try dir.fifo("registered")
            // The app registers through gdbus, a child in its process group, then waits.
            let script = try writeScript(
                dir, "gdbus-app.sh",
                """
                /usr/bin/gdbus call --address "$DBUS_SESSION_BUS_ADDRESS" --dest org.applifecycle.Lifecycled1 \\
                  --object-path /org/applifecycle/Lifecycled1 --method org.applifecycle.Lifecycled1.RegisterApp "$LIFECYCLE_APP_ID" > "$1"
                exec /bin/sleep 600
                """)
            try writeManifest(dir, id: "org.example.Script", executable: script, arguments: [fifo])
        }) { (h: DaemonHarness) async throws in
            // Opened before the launch, so the script's write finds a reader.
            let reader = try FIFOReader(path: fifo, loop: h.client.loop)
            // Launched in the background; an impostor then tries to take its id and is refused.
            try await h.client.call(
                LifecycledProtocol.Method.launch.name,
                [
                    .string("org.example.Script"),
                    encodeInfo([LaunchOptions.Key.launchedInBackground.rawValue: .bool(true)]),
                ])
            let impostor = try await FakeApp("org.example.Script", address: h.bus.address)
            defer { impostor.close() }
            #expect(
                await impostor.client.errorName(
                    LifecycledProtocol.Method.registerApp.name, [.string("org.example.Script")])
                    == LifecycledProtocol.ErrorName.notRegistered)
            // The script's own gdbus got the launch options and the host facts.
            let reply = try await reader.line()
            #expect(reply.contains("'ApplicationLaunchOptionsLaunchedInBackgroundKey': <true>"), "\(reply)")
            #expect(reply.contains("'foreground': <false>"), "\(reply)")
            #expect(reply.contains("'session-active': <true>"), "\(reply)")
        }
    }

    @Test func afterADaemonRestartARunningAppRegistersAgainAndReportsItsState() async throws {
        guard let products = BuiltProducts.directory(containing: "counter-app") else {
            Issue.record("counter-app is not built; run `swift build` first")
            return
        }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dir = try TemporaryDirectory(prefix: "lifecycled-tests")
        defer { dir.remove() }
        try writeManifest(
            dir, id: "org.example.Counter", executable: products + "/counter-app",
            arguments: ["--host", "lifecycled", "--state-directory", dir.path + "/state"])
        let configuration = DaemonConfiguration(
            busAddress: .address(bus.address), appsDirectories: [appsDirectory(dir)], simulationEnabled: true,
            bridgeSources: [],
            termination: TerminationPolicy(deadline: .milliseconds(500), grace: .milliseconds(500)),
            stateDirectory: dir.path + "/daemon-state", logger: Logger(label: "lifecycled"))
        let client = try await DaemonTestClient(address: bus.address, name: "restart-client")
        defer { client.close() }

        let first = LifecycleDaemon(configuration: configuration)
        try await first.start()
        var appPID: pid_t = 0
        // The app outlives the first daemon (a crash), so the test ends it by its own pid.
        defer {
            if appPID > 0 {
                kill(appPID, SIGKILL)
                var status: Int32 = 0
                waitpid(appPID, &status, 0)
            }
        }
        do {
            try await client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Counter"), encodeInfo([:])])
            appPID = try #require(first.registry["org.example.Counter"]?.process?.pid)
            try await client.log.waitForState("org.example.Counter", .active)
        } catch {
            await first.shutdown(reason: .hostRequest)
            appPID = 0
            throw error
        }
        first.abandonForTesting()

        let second = LifecycleDaemon(configuration: configuration)
        try await second.start()
        do {
            try await client.log.wait(for: "the app to re-register and report active") { log in
                log.all.contains { signal in
                    signal.member == LifecycledProtocol.Signal.stateChanged.name
                        && signal.arguments[0].stringValue == "org.example.Counter"
                        && signal.arguments[1].stringValue == "not-running"
                        && signal.arguments[2].stringValue == "active"
                        && signal.sender != log.all.first?.sender
                }
            }
            let apps = try await client.call(LifecycledProtocol.Method.listApps.name)
            let entry = try #require(
                apps.first?.arrayValue?.first { $0.structValue?.first?.stringValue == "org.example.Counter" })
            #expect(entry.structValue?[1].stringValue == "active")
            #expect(entry.structValue?[3].uint32Value == UInt32(appPID))
            await second.shutdown(reason: .hostRequest)
        } catch {
            await second.shutdown(reason: .hostRequest)
            throw error
        }
    }
}
