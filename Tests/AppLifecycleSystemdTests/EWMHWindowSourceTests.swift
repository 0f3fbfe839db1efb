import AppLifecycleSystemd
import Glibc
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// Reads a source's updates until one satisfies a condition, within a hang guard (a wait for
/// something that does happen; a test that never sees it fails instead of hanging).
private final class UpdateReader: Sendable {
    private let updates: AsyncStream<WindowSourceUpdate>

    init(_ source: EWMHWindowSource) { updates = source.updates }

    /// The first update (from now on) that `condition` accepts, or `nil` after the hang guard.
    func next(
        hangGuard: Duration = .seconds(20), where condition: @escaping @Sendable (WindowSourceUpdate) -> Bool
    ) async -> WindowSourceUpdate? {
        let updates = updates
        return await withTaskGroup(of: WindowSourceUpdate?.self) { group in
            group.addTask {
                for await update in updates where condition(update) { return update }
                return nil
            }
            group.addTask {
                try? await Task.sleep(for: hangGuard)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The first window set in which `condition` holds for the windows.
    func windows(where condition: @escaping @Sendable ([TopLevelWindow]) -> Bool) async -> [TopLevelWindow]? {
        guard
            case .windows(let set) = await next(where: { update in
                if case .windows(let set) = update { return condition(set) }
                return false
            })
        else { return nil }
        return set
    }
}

extension X11Session {
    /// An xterm of class `windowClass` running `sleep` rather than a login shell (nothing to read
    /// or wait for when it is stopped); stopped by the session.
    @discardableResult
    func terminal(_ windowClass: String, title: String? = nil) throws -> ChildProcess {
        try launch(
            "/usr/bin/xterm",
            ["-class", windowClass] + (title.map { ["-T", $0] } ?? []) + ["-e", "/bin/sleep", "600"])
    }
}

@Suite("EWMH window source against Xvfb and real window managers", .serialized, .timeLimit(.minutes(2)))
struct EWMHWindowSourceTests {
    static let windowManagers = [X11Session.WindowManager.openbox, .matchbox].filter(X11Session.isAvailable)

    /// A loop, a session and a started source; everything stopped by `body`'s end, even on failure.
    private func withSource(
        _ windowManager: X11Session.WindowManager = .openbox,
        reconnectBackoff: Backoff = EWMHWindowSource.defaultReconnectBackoff,
        _ body: (X11Session, EWMHWindowSource, UpdateReader) async throws -> Void
    ) async throws {
        let session = try await X11Session(windowManager: windowManager)
        defer { session.stop() }
        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        let source = EWMHWindowSource(
            display: session.display, loop: loop, reconnectBackoff: reconnectBackoff, logger: testLogger)
        defer { source.stop() }
        let reader = UpdateReader(source)
        try await source.start()
        try await body(session, source, reader)
    }

    @Test("a new window appears with its WM_CLASS and _NET_WM_PID", arguments: windowManagers)
    func newWindowAppears(windowManager: X11Session.WindowManager) async throws {
        try await withSource(windowManager) { session, _, reader in
            let terminal = try session.terminal("LifecycleNotes", title: "notes")
            let set = try #require(await reader.windows { $0.contains { $0.appID == "LifecycleNotes" } })
            let window = try #require(set.first { $0.appID == "LifecycleNotes" })
            #expect(window.processID == terminal.pid)
            #expect(window.instanceName == "xterm")
            #expect(window.title == "notes")
            #expect(!window.isMinimized)

            // xlogo sets no _NET_WM_PID: the window is reported without one.
            try session.launch("/usr/bin/xlogo")
            let withLogo = try #require(await reader.windows { $0.contains { $0.appID == "XLogo" } })
            #expect(withLogo.first { $0.appID == "XLogo" }?.processID == nil)
            #expect(withLogo.contains { $0.appID == "LifecycleNotes" })
        }
    }

    @Test("activating a window makes it the one activated", arguments: windowManagers)
    func activation(windowManager: X11Session.WindowManager) async throws {
        try await withSource(windowManager) { session, _, reader in
            try session.terminal("LifecycleFirst")
            try session.terminal("LifecycleSecond")
            let set = try #require(
                await reader.windows { set in
                    set.contains { $0.appID == "LifecycleFirst" } && set.contains { $0.appID == "LifecycleSecond" }
                })
            // Whichever the window manager activated on mapping, activate the other, then back:
            // each step changes the set, so each is reported.
            let first = try #require(set.first { $0.appID == "LifecycleFirst" })
            let second = try #require(set.first { $0.appID == "LifecycleSecond" })
            let (target, other) = first.isActivated ? (second, first) : (first, second)

            try await session.xdotool("windowactivate", "--sync", "\(target.id)")
            #expect(
                await reader.windows { set in
                    set.contains { $0.id == target.id && $0.isActivated }
                        && set.contains { $0.id == other.id && !$0.isActivated }
                } != nil)

            try await session.xdotool("windowactivate", "--sync", "\(other.id)")
            #expect(
                await reader.windows { set in
                    set.contains { $0.id == other.id && $0.isActivated }
                        && set.contains { $0.id == target.id && !$0.isActivated }
                } != nil)
        }
    }

    @Test("minimising a window marks it minimised, activating it again restores it")
    func minimising() async throws {
        try await withSource(.openbox) { session, _, reader in
            try session.terminal("LifecycleMinimised")
            let set = try #require(await reader.windows { $0.contains { $0.appID == "LifecycleMinimised" } })
            let window = try #require(set.first { $0.appID == "LifecycleMinimised" })

            try await session.xdotool("windowminimize", "--sync", "\(window.id)")
            #expect(
                await reader.windows { $0.contains { $0.id == window.id && $0.isMinimized && !$0.isActivated } }
                    != nil)

            try await session.xdotool("windowactivate", "--sync", "\(window.id)")
            #expect(
                await reader.windows { $0.contains { $0.id == window.id && !$0.isMinimized && $0.isActivated } }
                    != nil)
        }
    }

    @Test("closing a window removes it from the set")
    func closing() async throws {
        try await withSource(.openbox) { session, _, reader in
            let terminal = try session.terminal("LifecycleClosed")
            try session.terminal("LifecycleStays")
            #expect(
                await reader.windows { set in
                    set.contains { $0.appID == "LifecycleClosed" } && set.contains { $0.appID == "LifecycleStays" }
                } != nil)

            terminal.terminateAndWait()
            let set = try #require(await reader.windows { !$0.contains { $0.appID == "LifecycleClosed" } })
            #expect(set.map(\.appID) == ["LifecycleStays"])
        }
    }

    @Test("the window manager exiting reports unavailable; the next one gives a fresh set", arguments: windowManagers)
    func windowManagerRestart(windowManager: X11Session.WindowManager) async throws {
        try await withSource(windowManager) { session, _, reader in
            try session.terminal("LifecycleKept")
            #expect(await reader.windows { $0.contains { $0.appID == "LifecycleKept" } } != nil)

            // openbox leaves a stale _NET_SUPPORTING_WM_CHECK on the root: its window is gone.
            session.stopWindowManager()
            let lost = await reader.next { if case .unavailable = $0 { return true } else { return false } }
            #expect(lost != nil)

            try await session.startWindowManager()
            let set = try #require(await reader.windows { !$0.isEmpty })
            #expect(set.map(\.appID) == ["LifecycleKept"])
        }
    }

    @Test("a listed window that is already destroyed (BadWindow) is left out, never a crash")
    func destroyedWindow() async throws {
        let session = try await X11Session(windowManager: .openbox)
        defer { session.stop() }
        let doomed = try session.terminal("LifecycleDoomed")
        try session.terminal("LifecycleAlive")
        // Both managed: openbox lists both.
        #expect(
            try await eventually {
                let list = try await session.run("/usr/bin/xprop", ["-root", "_NET_CLIENT_LIST"]).output
                return list.split(separator: ",").count == 2
            })
        // With openbox stopped, the destroyed window stays in _NET_CLIENT_LIST: every read of its
        // properties fails with BadWindow.
        session.pauseWindowManager()
        doomed.terminateAndWait()
        #expect(
            try await eventually {
                try await session.run("/usr/bin/xdotool", ["search", "--class", "LifecycleDoomed"]).status != 0
            })
        let listed = try await session.run("/usr/bin/xprop", ["-root", "_NET_CLIENT_LIST"]).output
        #expect(listed.split(separator: ",").count == 2, "openbox, stopped, still lists both: \(listed)")

        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        let source = EWMHWindowSource(display: session.display, loop: loop, logger: testLogger)
        defer { source.stop() }
        try await source.start()
        var iterator = source.updates.makeAsyncIterator()
        let first = await iterator.next()
        #expect(
            first.map { update in
                if case .windows(let set) = update { return set.map(\.appID) == ["LifecycleAlive"] }
                return false
            } == true, "\(String(describing: first))")
        session.resumeWindowManager()
    }

    @Test("no EWMH window manager is a typed error, and no source", arguments: [X11Session.WindowManager.twm, .none])
    func notEWMH(windowManager: X11Session.WindowManager) async throws {
        try #require(X11Session.isAvailable(windowManager))
        let session = try await X11Session(windowManager: windowManager)
        defer { session.stop() }
        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        let source = EWMHWindowSource(display: session.display, loop: loop, logger: testLogger)
        let error = await #expect(throws: EWMHWindowSourceError.self) { try await source.start() }
        #expect(error?.code == .notEWMHCompliant)
        // The source is stopped: its stream has ended.
        var iterator = source.updates.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test("no display name is a typed error, before any connection")
    func noDisplay() async throws {
        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        let source = EWMHWindowSource(display: "", loop: loop, logger: testLogger)
        let error = await #expect(throws: EWMHWindowSourceError.self) { try await source.start() }
        #expect(error?.code == .noDisplay)
    }

    @Test("a display with no X server is a typed error")
    func noServer() async throws {
        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        // Display numbers past any a test uses; the socket does not exist.
        let source = EWMHWindowSource(display: ":6789", loop: loop, logger: testLogger)
        let error = await #expect(throws: EWMHWindowSourceError.self) { try await source.start() }
        #expect(error?.code == .cannotConnect)
    }

    @Test("the X server going away reports unavailable; a new one on the display gives a fresh set")
    func serverRestart() async throws {
        let session = try await X11Session(windowManager: .openbox)
        defer { session.stop() }
        let loop = try EventLoop(name: "x11-test")
        defer { loop.shutdown() }
        let source = EWMHWindowSource(
            display: session.display, loop: loop,
            reconnectBackoff: Backoff(initial: .milliseconds(20), maximum: .milliseconds(200)), logger: testLogger)
        defer { source.stop() }
        let reader = UpdateReader(source)
        try await source.start()
        try session.terminal("LifecycleBefore")
        #expect(await reader.windows { $0.contains { $0.appID == "LifecycleBefore" } } != nil)

        session.stopServer()
        let lost = await reader.next { if case .unavailable = $0 { return true } else { return false } }
        #expect(lost != nil)
        session.stop()

        let restarted = try await X11Session(windowManager: .openbox, displayNumber: session.displayNumber)
        defer { restarted.stop() }
        try restarted.terminal("LifecycleAfter")
        let set = try #require(await reader.windows { $0.contains { $0.appID == "LifecycleAfter" } })
        #expect(!set.contains { $0.appID == "LifecycleBefore" })
    }
}
