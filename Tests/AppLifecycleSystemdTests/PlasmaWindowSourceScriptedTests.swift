import AppLifecycleSystemd
import Dispatch
import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

/// The Plasma window source against a compositor that speaks from a script (``ScriptedWaylandServer``):
/// what KWin 5.27 never does on demand (an older protocol version, a window gone before it was
/// described, a focus given to a window not described yet), and compositors that are not KWin.
@Suite("PlasmaWindowSource against a scripted compositor", .serialized)
struct PlasmaWindowSourceScriptedTests {
    static let managementName: UInt32 = 9

    /// org_kde_plasma_window_management's and org_kde_plasma_window's opcodes the scripts use.
    enum Opcode {
        static let windowEvent: UInt16 = 1
        static let windowWithUUIDEvent: UInt16 = 4
        static let getWindowRequest: UInt16 = 1
        static let getWindowByUUIDRequest: UInt16 = 2
        static let appIDChanged: UInt16 = 1
        static let stateChanged: UInt16 = 2
        static let unmapped: UInt16 = 5
        static let initialState: UInt16 = 6
        static let pidChanged: UInt16 = 10
        static let destroyRequest: UInt16 = 7
    }

    /// Answers `get_registry` and the first sync with `globals`; if the management global is among
    /// them, reads its bind and the second sync, runs `listing`, and ends that sync.
    ///
    /// - Returns: The management object and the version the client bound, or `nil`.
    @discardableResult
    static func handshake(
        _ connection: ScriptedWaylandServer.Connection, globals: [(name: UInt32, interface: String, version: UInt32)],
        listing: (_ management: UInt32) -> Void = { _ in }
    ) -> (management: UInt32, version: UInt32)? {
        guard let getRegistry = connection.read(until: { $0.object == 1 && $0.opcode == 1 }),
            let sync = connection.read(until: { $0.object == 1 && $0.opcode == 0 })
        else { return nil }
        let registry = getRegistry.word(at: 0)
        for global in globals {
            connection.send(registry, 0, [.uint(global.name), .string(global.interface), .uint(global.version)])
        }
        connection.finish(callback: sync.word(at: 0))
        guard globals.contains(where: { $0.interface == PlasmaWindowSource.managementInterface }),
            let bind = connection.read(until: { $0.object == registry && $0.opcode == 0 }),
            let secondSync = connection.read(until: { $0.object == 1 && $0.opcode == 0 })
        else { return nil }
        let management = bind.lastWord
        listing(management)
        connection.finish(callback: secondSync.word(at: 0))
        return (management, bind.word(at: bind.arguments.count - 8))
    }

    /// Reads the client's `get_window` (before v13) for `windowID` and returns the new object's id.
    static func getWindow(_ connection: ScriptedWaylandServer.Connection, management: UInt32) -> (
        object: UInt32, windowID: UInt32
    )? {
        guard let request = connection.read(until: { $0.object == management && $0.opcode == Opcode.getWindowRequest })
        else { return nil }
        return (request.word(at: 0), request.word(at: 4))
    }

    /// Sends a window's description: app id, pid, state, then `initial_state`.
    static func describe(
        _ connection: ScriptedWaylandServer.Connection, _ window: UInt32, appID: String, pid: UInt32, state: UInt32
    ) {
        connection.send(window, Opcode.appIDChanged, [.string(appID)])
        connection.send(window, Opcode.pidChanged, [.uint(pid)])
        connection.send(window, Opcode.stateChanged, [.uint(state)])
        connection.send(window, Opcode.initialState)
    }

    @Test(
        "version 12: windows announced by id are fetched with get_window and reported with app id (printable), pid and state"
    )
    func version12FetchesWindowsByID() async throws {
        let server = try ScriptedWaylandServer()
        let bound = ValueRecorder<UInt32>()
        _ = server.serve { connection in
            guard
                let (management, version) = Self.handshake(
                    connection,
                    globals: [(1, "wl_compositor", 4), (Self.managementName, "org_kde_plasma_window_management", 12)],
                    listing: { connection.send($0, Opcode.windowEvent, [.uint(41)]) })
            else { return }
            bound.add(version)
            guard let (window, id) = Self.getWindow(connection, management: management), id == 41 else { return }
            Self.describe(connection, window, appID: "org.example.old\u{1B}[2J", pid: 4242, state: 1 | 1 << 8)
        }
        let follower = try await PlasmaWindowSourceTests.Follower(socketPath: server.socketPath)
        defer { follower.stop() }
        let first = try await follower.windows("the first set")
        #expect(bound.values == [12])
        #expect(first.count == 1)
        #expect(first.first?.appID == "org.example.old\u{FFFD}[2J", "a control character made printable")
        #expect(first.first?.processID == 4242)
        #expect(first.first?.isActivated == true)
        #expect(first.first?.isMinimized == false)
    }

    /// A window KWin unmaps before it answered the source's request, and a focus given (in the same
    /// flush as the old window losing it) to a window the source has not had described yet: neither
    /// may show in a set, and no set may lack the focus.
    @Test("a window gone before its initial_state is never reported; a focus moving to a new window is one set")
    func undescribedWindowsHoldTheReport() async throws {
        let server = try ScriptedWaylandServer()
        _ = server.serve { connection in
            guard
                let (management, _) = Self.handshake(
                    connection, globals: [(Self.managementName, "org_kde_plasma_window_management", 12)],
                    listing: { management in
                        connection.send(management, Opcode.windowEvent, [.uint(1)])
                        connection.send(management, Opcode.windowEvent, [.uint(2)])
                    })
            else { return }
            guard let (first, _) = Self.getWindow(connection, management: management),
                let (gone, _) = Self.getWindow(connection, management: management)
            else { return }
            Self.describe(connection, first, appID: "org.example.first", pid: 100, state: 1)
            connection.send(gone, Opcode.unmapped)
            _ = connection.read { $0.object == gone && $0.opcode == Opcode.destroyRequest }
            // The focus leaves `first` in the flush that announces `third`; `third` gains it once described.
            connection.send(first, Opcode.stateChanged, [.uint(0)])
            connection.send(management, Opcode.windowEvent, [.uint(3)])
            guard let (third, _) = Self.getWindow(connection, management: management) else { return }
            Self.describe(connection, third, appID: "org.example.third", pid: 300, state: 1)
        }
        let follower = try await PlasmaWindowSourceTests.Follower(socketPath: server.socketPath)
        defer { follower.stop() }
        let first = try await follower.windows("the first set")
        #expect(first.map(\.appID) == ["org.example.first"])
        let moved = try await follower.windows("third focused") {
            $0.contains { $0.appID == "org.example.third" && $0.isActivated }
        }
        #expect(moved.map(\.appID) == ["org.example.first", "org.example.third"])
        #expect(moved.filter(\.isActivated).map(\.appID) == ["org.example.third"])
        #expect(follower.allSets.count == 2, "\(follower.allSets)")
        #expect(follower.allSets.allSatisfy { $0.filter(\.isActivated).count == 1 })
    }

    @Test(
        "not offered: KWin's other globals make it permission-denied naming the desktop file; elsewhere unsupported; below version 4 unsupported",
        arguments: [
            (
                [(UInt32(1), "wl_compositor", UInt32(4)), (2, "org_kde_plasma_shell", 8)],
                HostSourceError.Code.permissionDenied, "X-KDE-Wayland-Interfaces"
            ),
            ([(UInt32(1), "wl_compositor", UInt32(4)), (2, "zwlr_layer_shell_v1", 4)], .unsupported, "not KDE's KWin"),
            ([(UInt32(1), "org_kde_plasma_window_management", UInt32(3))], .unsupported, "version 4 or later"),
        ])
    func notOffered(globals: [(UInt32, String, UInt32)], code: HostSourceError.Code, message: String) async throws {
        let server = try ScriptedWaylandServer()
        let over = server.serve {
            Self.handshake($0, globals: globals.map { (name: $0.0, interface: $0.1, version: $0.2) })
        }
        let loop = try EventLoop(name: "plasma-windows")
        defer { loop.shutdown() }
        let source = PlasmaWindowSource(socketPath: server.socketPath, loop: loop, logger: testLogger)
        let error = await #expect(throws: HostSourceError.self) { try await source.start() }
        #expect(error?.code == code)
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
        #expect(over.wait(timeout: .now() + .seconds(10)) == .success)  // the source closed its connection
    }
}
