import AppLifecycle
import AppLifecycleSystemd
import Foundation
import Glibc
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

@testable import LifecycleDaemon

/// The compositor decides the foreground: window sets (as a window source reports them) move
/// each hosted app, per app, in the seeds' order. The sets here are handed to the daemon as the
/// source would; the sources themselves are tested against sway and openbox.
@Suite("lifecycled: the windows decide each app's place", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct DaemonWindowTests {
    static let notes = "org.example.Notes"

    /// A window of the Python test app, matched by its app id.
    static func notesWindow(activated: Bool = false, minimized: Bool = false) -> TopLevelWindow {
        TopLevelWindow(id: 1, appID: notes, title: "Notes", isActivated: activated, isMinimized: minimized)
    }

    /// Another program's window (not hosted), which takes the focus.
    static let otherWindow = TopLevelWindow(id: 2, appID: "org.example.Elsewhere", isActivated: true)

    private func withNotes(
        mode: ForegroundMode, _ body: @escaping @MainActor (DaemonHarness) async throws -> Void
    ) async throws {
        try await withDaemon(
            configure: { $0.lifecycle.foregroundMode = mode },
            setUp: { dir in
                try writeManifest(
                    dir, id: Self.notes, executable: try writePythonApp(dir), arguments: [dir.path + "/notes.log"])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(LifecycledProtocol.Method.launch.name, [.string(Self.notes), encodeInfo([:])])
            try await h.client.log.waitForState(Self.notes, .active)
            try await body(h)
        }
    }

    @Test(
        "desktop: focus elsewhere → inactive; minimised → background, suspended, stopped; activated → resumed, active")
    func desktopWindowsMoveTheAppThroughEveryState() async throws {
        try await withNotes(mode: .desktop) { h in
            let pid = try #require(h.pid(Self.notes))
            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            #expect(h.daemon.registry[Self.notes]?.windowState == .activated)

            await h.daemon.windowsChanged(.windows([Self.notesWindow(), Self.otherWindow]))
            try await h.client.log.waitForState(Self.notes, .inactive)
            #expect(h.daemon.registry[Self.notes]?.foreground == true, "visible on a desktop: still in the foreground")

            await h.daemon.windowsChanged(.windows([Self.notesWindow(minimized: true), Self.otherWindow]))
            try await h.client.log.waitForState(Self.notes, .suspended)
            #expect(await eventually { processState(pid) == "T" }, "stopped once suspended")

            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            try await h.client.log.waitForState(Self.notes, .active)
            #expect(processState(pid) != "T")
            #expect(
                h.emitted.stateChanges(Self.notes) == [
                    "not-running->inactive", "inactive->active", "active->inactive", "inactive->background",
                    "background->suspended", "suspended->background", "background->inactive", "inactive->active",
                ])
            // Visible: focused(false) before foreground(true), so it never passed through active;
            // minimised: foreground(false); activated: focused(true), then foreground(true).
            let commands = h.emitted.commands(Self.notes)
            #expect(
                Array(commands.suffix(5)) == ["focused", "foreground", "foreground", "focused", "foreground"],
                "\(commands)")
        }
    }

    @Test("single foreground (phones, kiosks): a visible app behind the focused one goes to the background")
    func singleModeSendsAVisibleUnfocusedAppToTheBackground() async throws {
        try await withNotes(mode: .single) { h in
            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            await h.daemon.windowsChanged(.windows([Self.notesWindow(), Self.otherWindow]))
            try await h.client.log.waitForState(Self.notes, .suspended)
            // Closing its last window: still in the background; a window of nobody hosted changes nothing.
            await h.daemon.windowsChanged(.windows([Self.otherWindow]))
            #expect(h.daemon.registry[Self.notes]?.windowState == .closed)
            #expect(h.daemon.registry[Self.notes]?.foreground == false)
        }
    }

    @Test("a service (no window ever) keeps today's behaviour; the display server leaving keeps every place")
    func anAppWithoutWindowsIsLeftAlone() async throws {
        try await withNotes(mode: .desktop) { h in
            await h.daemon.windowsChanged(.windows([Self.otherWindow]))
            #expect(h.daemon.registry[Self.notes]?.windowState == .noWindow)
            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            await h.daemon.windowsChanged(.unavailable(reason: "compositor exited"))
            #expect(h.daemon.registry[Self.notes]?.windowState == .activated)
            #expect(h.emitted.stateChanges(Self.notes) == ["not-running->inactive", "inactive->active"])
        }
    }

    @Test("a set where nothing has the focus settles: the window manager's next set (the focus given) replaces it")
    func aFocuslessSetGivesWayToTheNextOne() async throws {
        try await withNotes(mode: .desktop) { h in
            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            let before = (h.emitted.stateChanges(Self.notes), h.emitted.commands(Self.notes))
            // openbox clears _NET_ACTIVE_WINDOW before it sets it again.
            h.daemon.enqueueWindows(.windows([Self.notesWindow()]))
            await h.daemon.windowsChanged(.windows([Self.notesWindow(activated: true)]))
            #expect(h.emitted.stateChanges(Self.notes) == before.0, "no resign and become active for a blink")
            #expect(h.emitted.commands(Self.notes) == before.1)
            // One that lasts is applied after the settle delay.
            await h.daemon.windowsChanged(.windows([Self.notesWindow()]))
            try await h.client.log.waitForState(Self.notes, .inactive)
        }
    }

    /// KWin shows a new window a moment before it gives it the focus.
    @Test("single: a new window shown without the focus settles; the focus given next keeps the app in front")
    func aNewUnfocusedWindowGivesWayToItsActivation() async throws {
        try await withNotes(mode: .single) { h in
            await h.daemon.windowsChanged(.windows([Self.otherWindow]))
            let before = h.emitted.stateChanges(Self.notes)
            h.daemon.enqueueWindows(.windows([Self.otherWindow, Self.notesWindow()]))
            let otherBehind = TopLevelWindow(id: 2, appID: "org.example.Elsewhere")
            await h.daemon.windowsChanged(.windows([otherBehind, Self.notesWindow(activated: true)]))
            #expect(h.emitted.stateChanges(Self.notes) == before, "never sent to the background for a blink")
            #expect(h.daemon.registry[Self.notes]?.windowState == .activated)
            // A window that is not new and loses the focus is applied at once; one that stays
            // unfocused after appearing is applied after the settle delay.
            await h.daemon.windowsChanged(.windows([Self.otherWindow, Self.notesWindow()]))
            try await h.client.log.waitForState(Self.notes, .background)
            let newWindow = TopLevelWindow(id: 9, appID: Self.notes, title: "Notes 2")
            await h.daemon.windowsChanged(.windows([Self.otherWindow, Self.notesWindow(), newWindow]))
            #expect(h.daemon.registry[Self.notes]?.windows.count == 2)
        }
    }

    @Test("[lifecycle] in lifecycled.conf: the mode, the freeze delay, the source; bad values say what is allowed")
    func lifecycleSettingsAreReadAndChecked() throws {
        let defaults = LifecycleSettings.defaults
        let settings = try LifecycleSettings(
            section: [
                "foreground-mode": "single", "freeze-delay": "2", "window-source": "x11", "orientation-lock": "yes",
            ],
            defaults: defaults, path: "lifecycled.conf")
        #expect(
            settings
                == LifecycleSettings(
                    foregroundMode: .single, freezeDelay: .seconds(2), windowSource: .x11, orientationLocked: true))
        #expect(try LifecycleSettings(section: [:], defaults: defaults, path: "f") == defaults)
        for (key, value, allowed) in [
            ("foreground-mode", "phone", "desktop or single"), ("freeze-delay", "-1", "0…3600"),
            ("freeze-delay", "soon", "0…3600"), ("window-source", "gnome", "auto, wayland, x11 or off"),
            ("orientation-lock", "maybe", "true or false"),
        ] {
            let error = #expect(throws: FleetConfiguration.Invalid.self) {
                try LifecycleSettings(section: [key: value], defaults: defaults, path: "lifecycled.conf")
            }
            #expect(error?.code == .setting)
            #expect(error?.message.contains(allowed) == true, "\(error?.message ?? "")")
        }
    }

    @Test("a program that does not adopt AppLifecycle: no commands; frozen when its windows leave, thawed when back")
    func aPlainProgramIsFrozenAndThawedByItsWindows() async throws {
        try await withDaemon(
            configure: { $0.lifecycle.freezeDelay = .zero },
            setUp: { dir in
                try writeManifest(
                    dir, id: "org.example.Sleeper", executable: "/bin/sleep", arguments: ["600"],
                    extra: ["adoptsLifecycle": false])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Sleeper"), encodeInfo([:])])
            let pid = try #require(h.pid("org.example.Sleeper"))
            // Matched by its pid (as X11's _NET_WM_PID gives it), whatever its class says.
            let window = TopLevelWindow(id: 7, appID: "Sleepy", processID: pid, isActivated: true)
            await h.daemon.windowsChanged(.windows([window]))
            var hidden = window
            hidden.isActivated = false
            hidden.isMinimized = true
            await h.daemon.windowsChanged(.windows([hidden]))
            #expect(await eventually { processState(pid) == "T" }, "frozen")
            #expect(h.daemon.registry["org.example.Sleeper"]?.placementReason == "hidden: frozen")
            await h.daemon.windowsChanged(.windows([window]))
            #expect(processState(pid) != "T")
            // Frozen again, a launcher's Launch (or Activate) brings it back without its window.
            await h.daemon.windowsChanged(.windows([hidden]))
            #expect(await eventually { processState(pid) == "T" }, "frozen again")
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Sleeper"), encodeInfo([:])])
            #expect(processState(pid).map { $0 != "T" } == true, "thawed by Launch")
            #expect(h.emitted.commands("org.example.Sleeper").isEmpty)
            #expect(h.daemon.registry["org.example.Sleeper"]?.pendingCommands.isEmpty == true)
        }
    }

    @Test(
        "lifecyclectl exempt/unexempt: persisted, shown in apps and status; an exempt program in the background runs on"
    )
    func theUsersExemptionIsKeptShownAndApplied() async throws {
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        try await withDaemon(
            configure: { $0.lifecycle.freezeDelay = .zero },
            setUp: { dir in
                try writeManifest(
                    dir, id: "org.example.Sleeper", executable: "/bin/sleep", arguments: ["600"],
                    extra: ["adoptsLifecycle": false])
            }
        ) { (h: DaemonHarness) async throws in
            let address = ["--address", h.bus.address]
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Sleeper"), encodeInfo([:])])
            let pid = try #require(h.pid("org.example.Sleeper"))
            let exempt = try await runTool(ctl, ["exempt", "org.example.Sleeper"] + address)
            #expect(exempt.status == 0, "\(exempt.stderr)")
            #expect(exempt.stdout.contains("never frozen"))
            let file = h.directory.path + "/daemon-state/freeze-exemptions.json"
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == #"["org.example.Sleeper"]"#)

            let window = TopLevelWindow(id: 9, processID: pid, isActivated: true)
            await h.daemon.windowsChanged(.windows([window]))
            await h.daemon.windowsChanged(.windows([]))
            // The freeze came due (zero delay) and was declined.
            let sleeper = try #require(h.daemon.registry["org.example.Sleeper"])
            #expect(await eventually { sleeper.pendingFreeze == nil && sleeper.windowState == .closed })
            #expect(!sleeper.stopRequested, "no stop was asked for")
            let apps = try await runTool(ctl, ["apps"] + address)
            #expect(apps.stdout.contains("closed: background; never frozen: exempted by the user"), "\(apps.stdout)")
            #expect(processState(pid) != "T")
            let status = try await runTool(ctl, ["status"] + address)
            #expect(
                status.stdout.contains("never frozen: org.example.Sleeper (exempted by the user)"), "\(status.stdout)")

            let unexempt = try await runTool(ctl, ["unexempt", "org.example.Sleeper"] + address)
            #expect(unexempt.status == 0, "\(unexempt.stderr)")
            #expect(await eventually { processState(pid) == "T" }, "frozen once no longer exempt")
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == "[]")

            let bad = try await runTool(ctl, ["exempt", "not an id"] + address)
            #expect(bad.status == 2 && bad.stderr.contains("not a valid app id"), "\(bad.stderr)")
            let unknown = try await runTool(ctl, ["exempt", "org.example.Nobody"] + address)
            #expect(unknown.status == 1 && unknown.stderr.contains("org.example.Nobody"), "\(unknown.stderr)")
        }
    }

    @Test("audio, voip, location and the user's exemption: to the background, never frozen")
    func exemptAppsGoToTheBackgroundButAreNotFrozen() async throws {
        try await withDaemon(
            configure: { $0.lifecycle.freezeDelay = .zero },
            setUp: { dir in
                try writeManifest(
                    dir, id: "org.example.Player", executable: "/bin/sleep", arguments: ["600"],
                    extra: ["adoptsLifecycle": false, "backgroundModes": ["audio"]])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Player"), encodeInfo([:])])
            let pid = try #require(h.pid("org.example.Player"))
            let window = TopLevelWindow(id: 3, processID: pid, isActivated: true)
            await h.daemon.windowsChanged(.windows([window]))
            await h.daemon.windowsChanged(.windows([]))
            let player = try #require(h.daemon.registry["org.example.Player"])
            #expect(h.daemon.freezeExemption(player) == "background mode audio")
            // The freeze came due (zero delay) and was declined.
            #expect(await eventually { player.pendingFreeze == nil && player.windowState == .closed })
            #expect(!player.stopRequested, "no stop was asked for")
            #expect(processState(pid) != "T")
        }
    }
}

/// lifecycled as shipped to an X11 desktop: a real EWMH window manager (openbox on Xvfb) decides,
/// through the X11 source, which hosted app is in front.
@Suite(
    "lifecycled follows a real window manager", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: X11Session.isAvailable(.openbox) && FileManager.default.isExecutableFile(atPath: "/usr/bin/xterm")))
@MainActor
struct DaemonX11WindowTests {
    @Test(
        "openbox: a minimised xterm (no AppLifecycle) is frozen, activated again it is thawed; a Python app with an X window goes to the background and back"
    )
    func openboxMovesHostedAppsThroughTheirStates() async throws {
        let session = try await X11Session(windowManager: .openbox)
        defer { session.stop() }
        try await withDaemon(
            configure: {
                $0.lifecycle.windowSource = .x11
                $0.windowEnvironment = session.environment
                $0.appEnvironment = ["DISPLAY": session.display]
                $0.lifecycle.freezeDelay = .zero
            },
            setUp: { dir in
                try writeManifest(
                    dir, id: "org.example.Term", executable: "/usr/bin/xterm",
                    arguments: ["-class", "LcTerm", "-e", "/bin/sleep", "600"],
                    extra: ["adoptsLifecycle": false, "startupWMClass": "LcTerm"])
                // The Python app with a window of its own: an xlogo in its process group, named
                // after the app (xlogo sets no _NET_WM_PID, so its WM_CLASS decides).
                let python = try writePythonApp(dir)
                let launcher = try writeScript(
                    dir, "windowed.sh", "/usr/bin/xlogo -name org.example.Notes & exec \(python) \"$@\"")
                try writeManifest(
                    dir, id: "org.example.Notes", executable: launcher, arguments: [dir.path + "/notes.log"])
            }
        ) { (h: DaemonHarness) async throws in
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Term"), encodeInfo([:])])
            let term = try #require(h.pid("org.example.Term"))
            #expect(
                await eventually(hangGuard: .seconds(20)) {
                    h.daemon.registry["org.example.Term"]?.windowState == .activated
                })
            let termWindow = try #require(h.daemon.registry["org.example.Term"]?.windows.first)
            #expect(termWindow.processID == term)

            try await session.xdotool("windowminimize", "--sync", "\(termWindow.id)")
            #expect(await eventually { processState(term) == "T" }, "frozen once minimised")
            try await session.xdotool("windowactivate", "--sync", "\(termWindow.id)")
            #expect(await eventually { processState(term) != "T" }, "thawed once activated")
            #expect(h.daemon.registry["org.example.Term"]?.windowState == .activated)

            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.Notes"), encodeInfo([:])])
            try await h.client.log.waitForState("org.example.Notes", .active)
            #expect(
                await eventually(hangGuard: .seconds(20)) {
                    h.daemon.registry["org.example.Notes"]?.windowState == .activated
                })
            let logo = try #require(h.daemon.registry["org.example.Notes"]?.windows.first)
            try await session.xdotool("windowminimize", "--sync", "\(logo.id)")
            try await h.client.log.waitForState("org.example.Notes", .suspended)
            try await session.xdotool("windowactivate", "--sync", "\(logo.id)")
            try await h.client.log.waitForState("org.example.Notes", .active)
            let changes = h.emitted.stateChanges("org.example.Notes")
            #expect(
                Array(changes.suffix(6)) == [
                    "active->inactive", "inactive->background", "background->suspended", "suspended->background",
                    "background->inactive", "inactive->active",
                ], "\(changes)")
        }
    }
}

/// lifecycled on a Linux phone or kiosk: a real wlroots compositor (sway 1.7 headless) decides,
/// through the Wayland source, which app is in front; one app at a time (single-foreground mode).
@Suite(
    "lifecycled follows a real wlroots compositor", .serialized, .timeLimit(.minutes(2)),
    .enabled(if: SwaySession.isAvailable))
@MainActor
struct DaemonWaylandWindowTests {
    @Test("sway: the focused foot runs, the one behind it is frozen; focus back thaws it and freezes the other")
    func swayFocusFreezesAndThawsPlainPrograms() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let display = try #require(sway.waylandDisplay)
        let environment = [
            "XDG_RUNTIME_DIR": sway.runtimeDirectory, "WAYLAND_DISPLAY": display, "HOME": sway.directory.path,
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
        ]
        try await withDaemon(
            configure: {
                $0.lifecycle.windowSource = .wayland
                $0.windowEnvironment = environment
                $0.appEnvironment = environment
                $0.lifecycle.foregroundMode = .single
                $0.lifecycle.freezeDelay = .zero
            },
            setUp: { dir in
                for id in ["org.example.FootA", "org.example.FootB"] {
                    try writeManifest(
                        dir, id: id, executable: SwaySession.footPath, arguments: ["--app-id", id, "/bin/cat"],
                        extra: ["adoptsLifecycle": false])
                }
            }
        ) { (h: DaemonHarness) async throws in
            @MainActor func state(_ id: String) -> AppWindowState? { h.daemon.registry[id]?.windowState }
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.FootA"), encodeInfo([:])])
            let a = try #require(h.pid("org.example.FootA"))
            #expect(await eventually(hangGuard: .seconds(20)) { state("org.example.FootA") == .activated })
            try await h.client.call(
                LifecycledProtocol.Method.launch.name, [.string("org.example.FootB"), encodeInfo([:])])
            let b = try #require(h.pid("org.example.FootB"))
            #expect(await eventually(hangGuard: .seconds(20)) { state("org.example.FootB") == .activated })
            #expect(state("org.example.FootA") == .visible)
            #expect(await eventually { processState(a) == "T" }, "the app behind is frozen")
            #expect(processState(b).map { $0 != "T" } == true)

            _ = try sway.command("[app_id=org.example.FootA] focus")
            #expect(await eventually { state("org.example.FootA") == .activated })
            let thawedAndFrozen = await eventually {
                let stateA: Character? = processState(a)
                let stateB: Character? = processState(b)
                return stateA != nil && stateA != "T" && stateB == "T"
            }
            #expect(thawedAndFrozen, "A thawed (and alive), B frozen")
            #expect(h.daemon.registry["org.example.FootA"]?.isRunning == true)
        }
    }
}

/// Which app a window belongs to: the pid first (its process, its process group, its cgroup), else the class.
@Suite("WindowOwnership")
struct WindowOwnershipTests {
    @Test func thePidDecidesWhenThereIsOneElseTheClassWithoutCase() {
        let ownership = WindowOwnership(
            candidates: [
                .init(id: "org.example.Term", processID: 100, cgroupDirectory: nil, windowClasses: ["XTerm"]),
                .init(id: "org.example.Notes", processID: nil, cgroupDirectory: "/cg/apps/notes-1", windowClasses: []),
            ],
            cgroup2MountPoint: "/cg", cgroupOf: { $0 == 300 ? "/apps/notes-1/sub" : "/user.slice" },
            isSameApp: { window, app in window == app || (window == 101 && app == 100) })
        #expect(ownership.owner(of: TopLevelWindow(id: 1, processID: 100)) == "org.example.Term")
        #expect(ownership.owner(of: TopLevelWindow(id: 2, processID: 101)) == "org.example.Term", "its process group")
        #expect(ownership.owner(of: TopLevelWindow(id: 3, processID: 300)) == "org.example.Notes", "its cgroup")
        #expect(
            ownership.owner(of: TopLevelWindow(id: 4, appID: "xterm", processID: 999)) == nil,
            "a pid of no hosted app: another program's window, whatever its class")
        #expect(ownership.owner(of: TopLevelWindow(id: 5, appID: "xterm")) == "org.example.Term")
        #expect(ownership.owner(of: TopLevelWindow(id: 6, appID: "ORG.EXAMPLE.NOTES")) == "org.example.Notes")
        #expect(ownership.owner(of: TopLevelWindow(id: 7, appID: "nothing.matches")) == nil)
        #expect(ownership.owner(of: TopLevelWindow(id: 8, appID: "", instanceName: "xterm")) == "org.example.Term")
    }

    @Test func theWindowStateFollowsTheWindows() {
        let shown = TopLevelWindow(id: 1)
        let focused = TopLevelWindow(id: 2, isActivated: true)
        let minimized = TopLevelWindow(id: 3, isMinimized: true)
        #expect(AppWindowState(windows: [], previous: .noWindow) == .noWindow)
        #expect(AppWindowState(windows: [], previous: .visible) == .closed)
        #expect(AppWindowState(windows: [minimized, focused], previous: .noWindow) == .activated)
        #expect(AppWindowState(windows: [minimized, shown], previous: .noWindow) == .visible)
        #expect(AppWindowState(windows: [minimized], previous: .activated) == .hidden)
        let desktop = ForegroundPolicy(mode: .desktop)
        let single = ForegroundPolicy(mode: .single)
        #expect(desktop.placement(for: .visible) == .init(foreground: true, focused: false))
        #expect(single.placement(for: .visible) == .init(foreground: false, focused: false))
        #expect(desktop.placement(for: .noWindow) == nil)
        #expect(single.placement(for: .activated) == .init(foreground: true, focused: true))
        #expect(desktop.placement(for: .closed) == .init(foreground: false, focused: false))
    }
}

/// What any client sets as its title or app id is shown, logged and sent over D-Bus safely.
@Suite("TopLevelWindow: a client's strings")
struct TopLevelWindowStringTests {
    @Test func controlCharactersBecomeReplacementsAndLongStringsAreCut() {
        let window = TopLevelWindow(
            id: 1, appID: "app\u{1B}]52;c;bad\u{07}", instanceName: "a\u{9B}b",
            title: "\u{1B}[2J" + String(repeating: "t", count: 600))
        #expect(window.appID == "app\u{FFFD}]52;c;bad\u{FFFD}")
        #expect(window.instanceName == "a\u{FFFD}b")
        #expect(window.title?.hasPrefix("\u{FFFD}[2J") == true)
        #expect(window.title?.unicodeScalars.count == 512)
        #expect(!window.description.unicodeScalars.contains { $0.value < 0x20 })
        #expect(TopLevelWindow(id: 2, title: "Notes — ok").title == "Notes — ok")
    }

    /// The Wayland sources fill a window in place as its events arrive, not through `init`.
    @Test func stringsSetInPlaceAreMadePrintableToo() {
        var window = TopLevelWindow(id: 1)
        window.title = "\u{1B}[2J" + String(repeating: "t", count: 600)
        window.appID = "app\u{07}"
        window.instanceName = "a\u{9B}b"
        #expect(window.title?.hasPrefix("\u{FFFD}[2J") == true)
        #expect(window.title?.unicodeScalars.count == 512)
        #expect(window.appID == "app\u{FFFD}")
        #expect(window.instanceName == "a\u{FFFD}b")
    }
}
