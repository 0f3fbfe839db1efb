import AppLifecycleSystemd
import Dispatch
import Glibc
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

/// The Wayland window source against a real sway 1.7 (headless, pixman) with real foot windows,
/// driven through `swaymsg`: what the compositor reports is what the source must report.
@Suite("ForeignToplevelWindowSource", .serialized, .enabled(if: SwaySession.isAvailable))
struct ForeignToplevelWindowSourceTests {
    /// sway's windows through a `ForeignToplevelWindowSource`.
    typealias Follower = WindowSourceFollower<ForeignToplevelWindowSource>

    @Test("a new foot window is reported with its app id and title; the first set is the empty one")
    func newWindowAppears() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let follower = try await Follower(socketPath: try #require(sway.socketPath))
        defer { follower.stop() }
        #expect(try await follower.windows("the initial set") == [])

        _ = try sway.startClient(appID: "alpha", title: "Alpha window")
        let windows = try await follower.windows("alpha") { !$0.isEmpty }
        let alpha = try #require(windows.first)
        #expect(windows.count == 1)
        #expect(alpha.appID == "alpha")
        #expect(alpha.title == "Alpha window")
        #expect(alpha.processID == nil)
        #expect(alpha.instanceName == nil)
    }

    @Test("swaymsg focus activates that window and no other, in one report")
    func focusActivatesOneWindow() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let follower = try await Follower(socketPath: try #require(sway.socketPath))
        defer { follower.stop() }
        _ = try sway.startClient(appID: "alpha")
        _ = try await follower.windows("alpha") { $0.contains { $0.appID == "alpha" && $0.isActivated } }
        _ = try sway.startClient(appID: "beta")
        _ = try await follower.windows("beta focused") { $0.contains { $0.appID == "beta" && $0.isActivated } }

        try sway.swaymsg("[app_id=alpha] focus")
        let afterAlpha = try await follower.windows("alpha focused") {
            $0.contains { $0.appID == "alpha" && $0.isActivated }
        }
        #expect(afterAlpha.map(\.appID) == ["alpha", "beta"])
        #expect(afterAlpha.filter(\.isActivated).map(\.appID) == ["alpha"])

        try sway.swaymsg("[app_id=beta] focus")
        let afterBeta = try await follower.windows("beta focused again") {
            $0.contains { $0.appID == "beta" && $0.isActivated }
        }
        #expect(afterBeta.filter(\.isActivated).map(\.appID) == ["beta"])
        // sway sends both windows' states and dones in one flush: no report ever had two activated.
        #expect(follower.allSets.allSatisfy { $0.filter(\.isActivated).count <= 1 })
        #expect(follower.allSets.allSatisfy { $0.allSatisfy { !$0.isMinimized } })
    }

    /// The benchmark hook: from a focus command written to sway's IPC socket to the consumer holding
    /// the set with that window activated (sway's handling, its flush, the source's read and
    /// dispatch, and the stream's hop to the consumer's task). Printed, not asserted: timing is
    /// this machine's; what is asserted is that every switch is reported, with one window activated.
    @Test("forty focus switches over sway's IPC: each is reported with that window alone activated")
    func focusLatency() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let follower = try await Follower(socketPath: try #require(sway.socketPath))
        defer { follower.stop() }
        _ = try sway.startClient(appID: "alpha")
        _ = try await follower.windows("alpha") { $0.contains { $0.appID == "alpha" && $0.isActivated } }
        _ = try sway.startClient(appID: "beta")
        _ = try await follower.windows("beta") { $0.contains { $0.appID == "beta" && $0.isActivated } }

        var latencies: [Duration] = []
        for round in 0..<40 {
            let target = round.isMultiple(of: 2) ? "alpha" : "beta"
            let sent = ContinuousClock.now
            try sway.command("[app_id=\(target)] focus")
            let (windows, arrived) = try await follower.arrival("\(target) focused") {
                $0.contains { $0.appID == target && $0.isActivated }
            }
            #expect(windows.filter(\.isActivated).map(\.appID) == [target])
            latencies.append(arrived - sent)
        }
        latencies.sort()
        print(
            "foreign-toplevel focus latency over \(latencies.count) switches: p50 \(latencies[latencies.count / 2]),"
                + " p99 \(latencies[latencies.count * 99 / 100]), max \(latencies.last!)")
    }

    /// sway 1.7 has no minimising: a window moved to the scratchpad (or left on a workspace not
    /// shown) stays in the set, on its output, only no longer activated; `minimized` never comes.
    @Test("move scratchpad: sway 1.7 reports the window as deactivated, not minimised; scratchpad show activates it")
    func scratchpadDeactivates() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let follower = try await Follower(socketPath: try #require(sway.socketPath))
        defer { follower.stop() }
        _ = try sway.startClient(appID: "alpha")
        _ = try await follower.windows("alpha") { $0.contains { $0.appID == "alpha" && $0.isActivated } }
        _ = try sway.startClient(appID: "beta")
        _ = try await follower.windows("beta") { $0.contains { $0.appID == "beta" && $0.isActivated } }
        try sway.swaymsg("[app_id=alpha] focus")
        _ = try await follower.windows("alpha focused") { $0.contains { $0.appID == "alpha" && $0.isActivated } }

        try sway.swaymsg("[app_id=alpha] move scratchpad")
        let hidden = try await follower.windows("alpha in the scratchpad") {
            $0.contains { $0.appID == "beta" && $0.isActivated }
        }
        let alpha = try #require(hidden.first { $0.appID == "alpha" })
        #expect(!alpha.isActivated)
        #expect(!alpha.isMinimized)
        #expect(hidden.count == 2)

        try sway.swaymsg("scratchpad show")
        let shown = try await follower.windows("alpha shown") { $0.contains { $0.appID == "alpha" && $0.isActivated } }
        #expect(shown.filter(\.isActivated).map(\.appID) == ["alpha"])
    }

    @Test("a client that exits leaves the set; the other window stays")
    func closedWindowLeaves() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let follower = try await Follower(socketPath: try #require(sway.socketPath))
        defer { follower.stop() }
        let alpha = try sway.startClient(appID: "alpha")
        _ = try sway.startClient(appID: "beta")
        let both = try await follower.windows("both") { $0.count == 2 }

        sway.stopClient(alpha)
        let remaining = try await follower.windows("alpha gone") { $0.count < 2 }
        #expect(remaining.map(\.appID) == ["beta"])
        #expect(remaining.map(\.id) == both.filter { $0.appID == "beta" }.map(\.id))
    }

    @Test("sway exits: unavailable; sway restarts on the same socket: a fresh set, and new windows follow")
    func compositorRestart() async throws {
        let sway = try await SwaySession()
        defer { sway.stop() }
        let socketPath = try #require(sway.socketPath)
        let follower = try await Follower(socketPath: socketPath)
        defer { follower.stop() }
        _ = try sway.startClient(appID: "alpha")
        let before = try await follower.windows("alpha") { !$0.isEmpty }

        sway.stopCompositor()
        let reason = try await follower.unavailable()
        #expect(reason.contains(socketPath))

        try await sway.startCompositor()
        #expect(sway.socketPath == socketPath)
        let fresh = try await follower.windows("the set after the restart")
        #expect(fresh.isEmpty)  // foot exits with its compositor

        _ = try sway.startClient(appID: "gamma")
        let after = try await follower.windows("gamma") { !$0.isEmpty }
        #expect(after.map(\.appID) == ["gamma"])
        #expect(after[0].id > before[0].id)  // ids are not reused across connections
    }

    @Test("a socket nobody listens on: start throws notFound, and there is no source")
    func missingSocket() async throws {
        let directory = try TemporaryDirectory(prefix: "no-wayland")
        defer { directory.remove() }
        let loop = try EventLoop(name: "windows")
        defer { loop.shutdown() }
        let source = ForeignToplevelWindowSource(
            socketPath: directory.appending("wayland-9"), loop: loop, logger: testLogger)
        let error = await #expect(throws: HostSourceError.self) { try await source.start() }
        #expect(error?.code == .notFound)
        #expect(error?.source == ForeignToplevelWindowSource.sourceName)
        var updates = source.updates.makeAsyncIterator()
        #expect(await updates.next() == nil)  // finished: nothing will ever come
    }

    @Test("the socket path comes from WAYLAND_DISPLAY, absolute or under XDG_RUNTIME_DIR")
    func socketPathFromEnvironment() throws {
        #expect(
            try ForeignToplevelWindowSource.socketPath(environment: [
                "WAYLAND_DISPLAY": "wayland-1", "XDG_RUNTIME_DIR": "/run/user/1000",
            ]) == "/run/user/1000/wayland-1")
        #expect(
            try ForeignToplevelWindowSource.socketPath(environment: [
                "WAYLAND_DISPLAY": "/tmp/x/wayland-2", "XDG_RUNTIME_DIR": "/run/user/1000",
            ]) == "/tmp/x/wayland-2")
        #expect(throws: HostSourceError.self) {
            try ForeignToplevelWindowSource.socketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
        }
        let relative = #expect(throws: HostSourceError.self) {
            try ForeignToplevelWindowSource.socketPath(environment: ["WAYLAND_DISPLAY": "wayland-1"])
        }
        #expect(relative?.code == .invalidConfiguration)
    }
}

/// The Wayland window source against a compositor that speaks from a script (``ScriptedWaylandServer``):
/// what a real compositor never does on demand.
@Suite("ForeignToplevelWindowSource against a scripted compositor", .serialized)
struct ForeignToplevelScriptedCompositorTests {
    static let manager = (name: UInt32(7), interface: ForeignToplevelWindowSource.managerInterface, version: UInt32(3))
    static let ghost: UInt32 = 0xff00_0000
    static let kept: UInt32 = 0xff00_0001
    static let brief: UInt32 = 0xff00_0002

    @Test("a compositor without the foreign-toplevel manager: start throws unsupported and hangs up")
    func noManager() async throws {
        let server = try ScriptedWaylandServer()
        let over = server.serve { $0.handshake(globals: [(1, "wl_compositor", 4), (2, "wl_seat", 7)]) }
        let loop = try EventLoop(name: "windows")
        defer { loop.shutdown() }
        let source = ForeignToplevelWindowSource(socketPath: server.socketPath, loop: loop, logger: testLogger)
        let error = await #expect(throws: HostSourceError.self) { try await source.start() }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains(ForeignToplevelWindowSource.managerInterface) == true)
        #expect(over.wait(timeout: .now() + .seconds(10)) == .success)  // the source closed its connection
    }

    @Test(
        "windows closed before their done or within one batch are never reported; a malformed event is unavailable, then a fresh set"
    )
    func vanishingWindowsAndMalformedEvents() async throws {
        let server = try ScriptedWaylandServer()
        _ = server.serve { connection in
            guard
                let manager = connection.handshake(
                    globals: [(1, "wl_compositor", 4), Self.manager],
                    listing: { manager in
                        connection.send(manager, 0, [.uint(Self.ghost)])  // toplevel
                        connection.send(Self.ghost, 1, [.string("ghost")])  // app_id
                        connection.send(Self.ghost, 6)  // closed, before any done
                        connection.send(manager, 0, [.uint(Self.kept)])
                        connection.send(Self.kept, 1, [.string("kept")])
                        connection.send(Self.kept, 4, [.array([2])])  // state: activated
                        connection.send(Self.kept, 5)  // done
                    })
            else { return }
            // The source destroys the ghost's handle once it has read that batch: then the next.
            _ = connection.read { $0.object == Self.ghost && $0.opcode == 7 }
            connection.send(manager, 0, [.uint(Self.brief)])
            connection.send(Self.brief, 1, [.string("brief")])
            connection.send(Self.brief, 5)  // done, then closed in the same batch
            connection.send(Self.brief, 6)
            connection.send(Self.kept, 4, [.array([])])
            connection.send(Self.kept, 5)
            _ = connection.read { $0.object == Self.brief && $0.opcode == 7 }
            // An event the manager does not have (it has two).
            connection.send(manager, 9)
        }
        let follower = try await ForeignToplevelWindowSourceTests.Follower(socketPath: server.socketPath)
        defer { follower.stop() }

        let first = try await follower.windows("the first set")
        #expect(first.map(\.appID) == ["kept"])
        #expect(first.first?.isActivated == true)
        let second = try await follower.windows("kept deactivated")
        #expect(second.map(\.appID) == ["kept"])
        #expect(second.first?.isActivated == false)

        let reason = try await follower.unavailable()
        #expect(reason.contains(server.socketPath))

        // The compositor is back: the source reconnects (to the same socket) and reports a fresh set.
        _ = server.serve { connection in
            connection.handshake(globals: [Self.manager]) { manager in
                connection.send(manager, 0, [.uint(Self.ghost)])
                connection.send(Self.ghost, 1, [.string("again")])
                connection.send(Self.ghost, 5)
            }
        }
        let fresh = try await follower.windows("the set after reconnecting")
        #expect(fresh.map(\.appID) == ["again"])
        #expect(follower.allSets.allSatisfy { !$0.contains { ["ghost", "brief"].contains($0.appID) } })
    }

    @Test("a compositor that accepts and never answers: start throws sourceGone after the answer timeout")
    func silentCompositor() async throws {
        let server = try ScriptedWaylandServer()
        let over = server.serve { _ in }  // reads, answers nothing
        let loop = try EventLoop(name: "windows")
        defer { loop.shutdown() }
        let source = ForeignToplevelWindowSource(
            socketPath: server.socketPath, loop: loop, answerTimeout: .milliseconds(200), logger: testLogger)
        // The hang guard: a start that never ends is stopped, and then fails with another message.
        let hangGuard = Task {
            try await Task.sleep(for: .seconds(10))
            source.stop()
        }
        defer { hangGuard.cancel() }
        let error = await #expect(throws: HostSourceError.self) { try await source.start() }
        #expect(error?.code == .sourceGone)
        #expect(error?.message.contains("did not list its windows") == true)
        #expect(over.wait(timeout: .now() + .seconds(10)) == .success)  // the source closed its connection
    }
}

extension WindowSourceFollower where Source == ForeignToplevelWindowSource {
    /// Follows the compositor at `socketPath`, reconnecting quickly.
    convenience init(socketPath: String) async throws {
        try await self.init(loopName: "windows") { loop in
            ForeignToplevelWindowSource(
                socketPath: socketPath, loop: loop,
                reconnectBackoff: Backoff(initial: .milliseconds(20), maximum: .milliseconds(200)), logger: testLogger)
        }
    }
}
