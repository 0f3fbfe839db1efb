import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import Foundation
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

private let counter = "org.example.Counter"

@Suite("org.freedesktop.Application, desktop files and quick actions", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct FreedesktopApplicationTests {
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gio")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus"),
            "needs gio and gdbus (libglib2.0-bin)"))
    func installedDesktopFilesLetGioAndGdbusReachTheDelegateThroughLifecycled() async throws {
        let products = try #require(
            BuiltProducts.directory(containing: "counter-app"), "counter-app is not built; run `swift build` first")
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        let dir = try TemporaryDirectory(prefix: "desktop-files")
        defer { dir.remove() }
        let dataHome = dir.path + "/data"
        try FileManager.default.createDirectory(
            atPath: dataHome + "/dbus-1/services", withIntermediateDirectories: true)
        let bus = try PrivateBus(serviceDirectory: dataHome + "/dbus-1/services")
        defer { bus.stop() }
        try FileManager.default.createDirectory(atPath: appsDirectory(dir), withIntermediateDirectories: true)
        let appLog = dir.path + "/counter.log"
        let launcher = try writeScript(
            dir, "counter.sh",
            "exec \(products)/counter-app --host lifecycled --state-directory \(dir.path)/state >>\(appLog) 2>&1")
        try writeManifest(
            dir, id: counter, executable: launcher, schemes: ["counter"],
            shortcutItems: [("increment", "Add one"), ("peek", "Just look")])
        let daemon = LifecycleDaemon(
            configuration: DaemonConfiguration(
                busAddress: .address(bus.address), appsDirectories: [appsDirectory(dir)], bridgeSources: [],
                termination: TerminationPolicy(deadline: .seconds(5), grace: .milliseconds(500)),
                stateDirectory: dir.path + "/daemon-state", logger: Logger(label: "lifecycled")))
        try await daemon.start()
        let client = try await DaemonTestClient(address: bus.address, name: "desktop-client")
        defer { client.close() }
        do {
            // The files, written by the real lifecyclectl from the manifest.
            let install = try await runTool(
                ctl, ["install-desktop-files", "--address", bus.address, "--data-home", dataHome])
            #expect(install.status == 0, "\(install.stderr)")
            let desktop = try String(contentsOfFile: "\(dataHome)/applications/\(counter).desktop", encoding: .utf8)
            #expect(desktop.contains("DBusActivatable=true"))
            #expect(desktop.contains("MimeType=x-scheme-handler/counter;"))
            #expect(desktop.contains("Actions=increment;peek;"))
            #expect(desktop.contains("[Desktop Action peek]\nName=Just look\nExec=\(ctl) activate --address"))
            let entry = try DesktopEntry(parsing: desktop, id: "\(counter).desktop")
            #expect(entry.actions.map(\.id) == ["increment", "peek"])
            let service = try String(contentsOfFile: "\(dataHome)/dbus-1/services/\(counter).service", encoding: .utf8)
            #expect(service.contains("Name=\(counter)\nExec=\(ctl) activate --address"))
            try await client.connection.reloadBusConfiguration()

            // gio launch: the app is not running; D-Bus activation starts it through lifecycled,
            // in the background, and the Activate call then brings it forward.
            let environment = [
                "DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": dir.path + "/none",
                "XDG_CONFIG_HOME": dir.path + "/config", "HOME": dir.path, "PATH": "/usr/bin:/bin",
            ]
            let gio = try await runTool(
                "/usr/bin/gio", ["launch", "\(dataHome)/applications/\(counter).desktop"], environment: environment)
            #expect(gio.status == 0, "\(gio.stderr)")
            try await client.log.waitForState(counter, .active)
            #expect(callbacks(appLog).first == "didFinishLaunching", "\(logLines(appLog))")
            // The activation's Activate call became a foreground launch: never in the background first.
            #expect(
                client.log.stateChanges(counter).prefix(2) == ["not-running->inactive", "inactive->active"],
                "\(client.log.stateChanges(counter))")
            #expect(daemon.registry[counter]?.process != nil, "not launched by lifecycled")

            // gio open with the MIME-apps default (the desktop file's MimeType): Open on the bus.
            let open = try await runTool(
                "/usr/bin/gio", ["open", "counter://increment"], environment: environment)
            #expect(open.status == 0, "\(open.stderr)")
            #expect(
                try await eventually { callbacks(appLog).contains("open counter://increment") }, "\(logLines(appLog))")

            // gdbus: Open with the caller as source, ActivateAction, and an unknown action refused.
            func gdbus(_ method: String, _ arguments: [String]) async throws -> (
                status: Int32, stdout: String, stderr: String
            ) {
                try await runTool(
                    "/usr/bin/gdbus",
                    [
                        "call", "--address", bus.address, "--dest", counter, "--object-path", "/org/example/Counter",
                        "--method", "org.freedesktop.Application.\(method)",
                    ] + arguments)
            }
            #expect(try await gdbus("Open", ["['counter://reset']", "{}"]).status == 0)
            #expect(try await eventually { callbacks(appLog).contains("open counter://reset") })
            try await client.log.wait(for: "DidOpenURL from the gdbus call") {
                $0.notifications(counter, "ApplicationDidOpenURLNotification").contains {
                    $0[ApplicationUserInfoKey.url]?.stringValue == "counter://reset"
                }
            }
            let opened = client.log.notifications(counter, "ApplicationDidOpenURLNotification").last
            #expect(opened?["UIApplicationOpenURLOptionsSourceApplicationKey"]?.stringValue == "gdbus")
            #expect(try await gdbus("ActivateAction", ["increment", "[]", "{}"]).status == 0)
            #expect(try await eventually { callbacks(appLog).contains("performActionFor increment") })
            let unknown = try await gdbus("ActivateAction", ["nope", "[]", "{}"])
            #expect(unknown.status != 0 && unknown.stderr.contains("InvalidArgs"), "\(unknown.stderr)")

            // A quick action that launches the app is in its launch options; "peek" returns false
            // from didFinishLaunching, so performActionFor is not called for it.
            try await client.call(LifecycledProtocol.Method.terminate.name, [.string(counter)])
            try await client.log.waitForState(counter, .notRunning)
            let before = callbacks(appLog).count
            let activations = client.log.stateChanges(counter).filter { $0.hasSuffix("->active") }.count
            let peek = try await runTool(ctl, ["activate", "--address", bus.address, "--action", "peek", counter])
            #expect(peek.status == 0, "\(peek.stderr)")
            try await client.log.wait(for: "active again") {
                $0.stateChanges(counter).filter { $0.hasSuffix("->active") }.count > activations
            }
            let relaunch = Array(callbacks(appLog).dropFirst(before))
            #expect(relaunch.first == "didFinishLaunching shortcutItem=peek", "\(relaunch)")
            #expect(!relaunch.contains("performActionFor peek"), "\(relaunch)")
            // A launcher's ActivateAction on the stopped app: D-Bus activation through lifecycled, and
            // the action arrives in the launch options, then performActionFor (didFinishLaunching
            // returned true for it), as UIKit launches for a quick action.
            try await client.call(LifecycledProtocol.Method.terminate.name, [.string(counter)])
            try await client.log.waitForState(counter, .notRunning)
            let beforeAction = callbacks(appLog).count
            let launched = try await gdbus("ActivateAction", ["increment", "[]", "{'activation-token': <'tok-7'>}"])
            #expect(launched.status == 0, "\(launched.stderr)")
            #expect(
                try await eventually {
                    callbacks(appLog).dropFirst(beforeAction).contains("performActionFor increment")
                },
                "\(logLines(appLog))")
            let actionLaunch = Array(callbacks(appLog).dropFirst(beforeAction))
            #expect(
                actionLaunch.first == "didFinishLaunching activationToken=tok-7 shortcutItem=increment",
                "\(actionLaunch)")
            #expect(actionLaunch.filter { $0 == "performActionFor increment" }.count == 1, "\(actionLaunch)")
            let unknownAction = try await runTool(
                ctl, ["activate", "--address", bus.address, "--action", "x", counter])
            #expect(unknownAction.status == 1 && unknownAction.stderr.contains("no quick action 'x'"))
        } catch {
            await daemon.shutdown(reason: .hostRequest)
            throw error
        }
        await daemon.shutdown(reason: .hostRequest)
    }
}
