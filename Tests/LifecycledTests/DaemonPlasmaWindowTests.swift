import AppLifecycle
import AppLifecycleSystemd
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// lifecycled on KDE Plasma: a real KWin 5.27 decides, through Plasma's window management (chosen
/// because KWin offers no wlroots manager), which app is in front; KWin gives each window's pid.
@Suite(
    "lifecycled follows a real KWin", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: KWinSession.isAvailable, "needs kwin-wayland, python3-gi and gir1.2-gtk-3.0 (make deps)"))
@MainActor
struct DaemonPlasmaWindowTests {
    @Test("KWin: window-source auto picks Plasma's window management; focus moved away freezes, back thaws")
    func kwinFocusFreezesAndThawsPlainPrograms() async throws {
        let kwin = try await KWinSession()
        defer { kwin.stop() }
        // The daemon runs in this process: KWin compares the desktop file's Exec with this executable.
        try kwin.allowWindowManagement(executable: try KWinSession.currentExecutable())
        var environment = kwin.clientEnvironment
        environment["DISPLAY"] = ""
        let loop = try EventLoop(name: "plasma-controller")
        defer { loop.shutdown() }
        try await withDaemon(
            configure: { [environment] in
                $0.lifecycle.windowSource = .auto
                $0.windowEnvironment = environment
                $0.appEnvironment = environment
                $0.lifecycle.foregroundMode = .single
                // KWin describes a new window first and activates it in a later flush (tens of ms,
                // after the client's first frame); the daemon lets such a set settle for 50 ms, but
                // on a loaded machine KWin may take longer, and a zero delay would then freeze the
                // new app before it is given the focus.
                $0.lifecycle.freezeDelay = .seconds(2)
            },
            setUp: { dir in
                for id in ["org.example.GtkA", "org.example.GtkB"] {
                    try writeManifest(
                        dir, id: id, executable: KWinSession.pythonPath, arguments: [kwin.clientScriptPath, id, id],
                        extra: ["adoptsLifecycle": false])
                }
            }
        ) { (h: DaemonHarness) async throws in
            @MainActor func state(_ id: String) -> AppWindowState? { h.daemon.registry[id]?.windowState }
            // The wlroots manager is tried first and is absent; Plasma's is then started.
            #expect(await eventually(hangGuard: .seconds(20)) { h.daemon.windowSource is PlasmaWindowSource })
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.GtkA"), encodeInfo([:])])
            let a = try #require(h.pid("org.example.GtkA"))
            #expect(await eventually(hangGuard: .seconds(20)) { state("org.example.GtkA") == .activated })
            #expect(h.daemon.registry["org.example.GtkA"]?.windows.first?.processID == a, "KWin gives the pid")
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.GtkB"), encodeInfo([:])])
            let b = try #require(h.pid("org.example.GtkB"))
            #expect(await eventually(hangGuard: .seconds(20)) { state("org.example.GtkB") == .activated })
            #expect(state("org.example.GtkA") == .visible)
            #expect(await eventually { processState(a) == "T" }, "the app behind is frozen")
            #expect(processState(b).map { $0 != "T" } == true)

            // The user clicks A in the task manager: set_state from another client, as plasmashell sends it.
            let controller = PlasmaWindowSource(socketPath: kwin.socketPath, loop: loop, logger: Logger(label: "test"))
            defer { controller.stop() }
            try await controller.start()
            var windowOfA: UInt64?
            for await update in controller.updates {
                if case .windows(let windows) = update {
                    windowOfA = windows.first { $0.processID == a }?.id
                    break
                }
            }
            try await controller.activate(windowID: try #require(windowOfA))
            #expect(await eventually { state("org.example.GtkA") == .activated })
            let thawedAndFrozen = await eventually {
                let stateA: Character? = processState(a)
                let stateB: Character? = processState(b)
                return stateA != nil && stateA != "T" && stateB == "T"
            }
            #expect(thawedAndFrozen, "A thawed (and alive), B frozen")
        }
    }
}
