import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Foundation
import Glibc
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

private let manager = LogindClient.managerInterface
private let session = LogindClient.sessionInterface
private let testUID: UInt32 = 4242

/// A logind mock with one session, and a client following it, all torn down by pid in `defer`.
private func withLogind(
    sessions: [(id: String, uid: UInt32, active: Bool)] = [("c1", testUID, true)],
    environment: [String: String] = ["XDG_SESSION_ID": "c1"],
    prepare: (DBusMock) throws -> Void = { _ in },
    _ body: (BusTestEnvironment, DBusMock, LogindClient, ValueRecorder<HostEvent>) async throws -> Void
) async throws {
    try await BusTestEnvironment.with { env in
        let mock = try DBusMock(template: "logind", address: env.bus.address)
        defer { mock.stop() }
        for entry in sessions {
            try mock.addSession(id: entry.id, uid: entry.uid, username: "user\(entry.uid)", active: entry.active)
        }
        try prepare(mock)
        let events = ValueRecorder<HostEvent>()
        let client = LogindClient(
            connection: env.connection, environment: environment, uid: testUID, logger: testLogger
        ) { events.add($0) }
        defer { client.stop() }
        try await client.start()
        try await body(env, mock, client, events)
    }
}

private func sessionPath(_ id: String) -> String { "/org/freedesktop/login1/session/\(id)" }

/// `ListInhibitors` of the logind on the bus, as (what, who, why, mode).
private func inhibitors(_ connection: BusConnection) async throws -> [[String]] {
    let reply = try await connection.call(
        destination: LogindClient.busName, path: LogindClient.managerPath,
        interface: manager, member: "ListInhibitors")
    return (reply.first?.arrayValue ?? []).compactMap { row in
        row.structValue.map { Array($0.prefix(4)).compactMap(\.stringValue) }
    }
}

@Suite("LogindClient against python-dbusmock's logind")
struct LogindClientTests {
    @Test("PrepareForSleep and PrepareForShutdown(WithMetadata) become sleeping and one terminate per shutdown")
    func sleepAndShutdown() async throws {
        try await withLogind { _, mock, _, events in
            try await events.expectNext(.locked(false), .sessionActive(true))
            try mock.emitSignal(interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["true"])
            try mock.emitSignal(interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["false"])
            try await events.expectNext(.sleeping(true), .sleeping(false))

            // systemd ≥ 255 sends both signals for one shutdown: one terminate, whichever comes first.
            try mock.emitSignal(interface: manager, name: "PrepareForShutdown", signature: "b", arguments: ["true"])
            try mock.emitSignal(
                interface: manager, name: "PrepareForShutdownWithMetadata", signature: "ba{sv}",
                arguments: ["true", "@a{sv} {'type': <'poweroff'>}"])
            try await events.expectNext(.terminate(.shutdown))
            // Cancelled, then a new shutdown announced by the metadata signal first.
            try mock.emitSignal(interface: manager, name: "PrepareForShutdown", signature: "b", arguments: ["false"])
            try mock.emitSignal(
                interface: manager, name: "PrepareForShutdownWithMetadata", signature: "ba{sv}",
                arguments: ["false", "@a{sv} {}"])
            try mock.emitSignal(
                interface: manager, name: "PrepareForShutdownWithMetadata", signature: "ba{sv}",
                arguments: ["true", "@a{sv} {'type': <'reboot'>}"])
            try mock.emitSignal(interface: manager, name: "PrepareForShutdown", signature: "b", arguments: ["true"])
            // A sentinel from the same sender: nothing came between the terminate and it.
            try mock.emitSignal(interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["true"])
            try await events.expectNext(.terminate(.shutdown), .sleeping(true))
        }
    }

    @Test("Lock/Unlock signals and LockedHint give one locked event per change; Active gives sessionActive")
    func lockAndActive() async throws {
        try await withLogind(sessions: [("c1", testUID, true), ("c2", testUID, true)]) { _, mock, client, events in
            try await events.expectNext(.locked(false), .sessionActive(true))
            let path = sessionPath("c1")
            // The template's Lock method emits the Lock signal on the session's real path.
            try mock.call(path: path, interface: session, method: "Lock")
            try mock.call(path: path, interface: session, method: "SetLockedHint", arguments: ["true"])
            // Another session's lock is not the app's.
            try mock.call(path: sessionPath("c2"), interface: session, method: "Lock")
            try mock.call(path: path, interface: session, method: "Unlock")
            try mock.updateProperties(path: path, interface: session, properties: ["LockedHint": "false"])
            try await events.expectNext(.locked(true), .locked(false))
            // LockedHint alone, then the Lock signal after it.
            try mock.updateProperties(path: path, interface: session, properties: ["LockedHint": "true"])
            try mock.emitSignal(path: path, interface: session, name: "Lock", signature: "", arguments: [])
            try mock.updateProperties(path: path, interface: session, properties: ["Active": "false"])
            try mock.updateProperties(path: path, interface: session, properties: ["Active": "false"])
            try mock.updateProperties(path: path, interface: session, properties: ["Active": "true"])
            try await events.expectNext(.locked(true), .sessionActive(false), .sessionActive(true))
            #expect(client.isLocked == true)
            #expect(client.isSessionActive == true)
            #expect(client.sessionID == "c1")
        }
    }

    @Test("initial state is read: a locked, inactive session is reported as such")
    func initialState() async throws {
        try await withLogind(
            sessions: [("c1", testUID, false)],
            prepare: { mock in
                try mock.updateProperties(
                    path: sessionPath("c1"), interface: session, properties: ["LockedHint": "true"])
            }
        ) { _, mock, _, events in
            try await events.expectNext(.locked(true), .sessionActive(false))
            try mock.emitSignal(
                path: sessionPath("c1"), interface: session, name: "Unlock", signature: "", arguments: [])
            try await events.expectNext(.locked(false))
        }
    }

    @Test("session resolution: XDG_SESSION_ID, then session/auto's Id, then the uid's active session")
    func sessionResolution() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "logind", address: env.bus.address)
            defer { mock.stop() }
            try mock.addSession(id: "c1", uid: testUID, username: "u", active: false)
            try mock.addSession(id: "c2", uid: 1001, username: "v", active: true)
            try mock.addSession(id: "c3", uid: testUID, username: "u", active: true)

            func resolved(_ environment: [String: String]) async throws -> String? {
                let client = LogindClient(
                    connection: env.connection, environment: environment, uid: testUID, logger: testLogger
                ) { _ in }
                defer { client.stop() }
                try await client.start()
                #expect(client.sessionPath == client.sessionID.map(sessionPath))
                return client.sessionID
            }

            // $XDG_SESSION_ID wins, even over the uid.
            #expect(try await resolved(["XDG_SESSION_ID": "c2"]) == "c2")
            // Without it: the uid's sessions from ListSessions, the active one first.
            #expect(try await resolved([:]) == "c3")
            // A bogus or unknown XDG_SESSION_ID is logged and ignored.
            #expect(try await resolved(["XDG_SESSION_ID": "../c2"]) == "c3")
            #expect(try await resolved(["XDG_SESSION_ID": "c9"]) == "c3")
            // logind's session/auto object names the caller's session by its Id. The template has no such
            // object; its ListSessions lists every object under /session/ and reads User, Name and Seat, so the
            // stand-in has them too, for a uid that is not the app's.
            try mock.mockCall(
                "AddObject",
                [
                    DBusMock.quote(LogindClient.autoSessionPath), DBusMock.quote(session),
                    "{'Id': <'c1'>, 'Name': <'nobody'>, 'User': <(uint32 65534, objectpath '/')>, "
                        + "'Seat': <('seat0', objectpath '/org/freedesktop/login1/seat/seat0')>}",
                    "@a(ssss) []",
                ])
            #expect(try await resolved([:]) == "c1")
            // session/auto naming a session that does not exist falls back to ListSessions.
            try mock.updateProperties(
                path: LogindClient.autoSessionPath, interface: session, properties: ["Id": "'c7'"])
            #expect(try await resolved([:]) == "c3")
        }
    }

    @Test("a session that appears after start is adopted on SessionNew; another user's is not")
    func sessionAppearsLater() async throws {
        try await withLogind(sessions: [], environment: [:]) { _, mock, client, events in
            #expect(client.sessionPath == nil)
            try mock.addSession(id: "c5", uid: 1001, username: "other", active: true)
            try mock.emitSignal(
                interface: manager, name: "SessionNew", signature: "so",
                arguments: ["'c5'", "objectpath '\(sessionPath("c5"))'"])
            try mock.addSession(id: "c4", uid: testUID, username: "me", active: false)
            try mock.emitSignal(
                interface: manager, name: "SessionNew", signature: "so",
                arguments: ["'c4'", "objectpath '\(sessionPath("c4"))'"])
            try await events.expectNext(.locked(false), .sessionActive(false))
            #expect(client.sessionID == "c4")
            try mock.call(path: sessionPath("c4"), interface: session, method: "Lock")
            try await events.expectNext(.locked(true))
        }
    }

    @Test("a delay lock is an fd: ListInhibitors shows it while held, closing it releases it")
    func delayLock() async throws {
        try await withLogind(prepare: { mock in
            try mock.mockCall("AddProperty", [DBusMock.quote(manager), "'InhibitDelayMaxUSec'", "<uint64 3000000>"])
        }) { env, _, client, _ in
            #expect(client.inhibitDelayMaxUSec == 3_000_000)
            #expect(client.inhibitDelayMax == .seconds(3))
            #expect(try await inhibitors(env.connection).isEmpty)
            try await client.takeDelayLock(what: .sleep, who: "AppLifecycle tests", why: "saving state")
            #expect(client.holdsDelayLock(what: .sleep))
            #expect(!client.holdsDelayLock(what: .shutdown))
            #expect(try await inhibitors(env.connection) == [["sleep", "AppLifecycle tests", "saving state", "delay"]])
            // Taking it again does not stack a second inhibitor.
            try await client.takeDelayLock(what: .sleep, who: "AppLifecycle tests", why: "saving state")
            #expect(try await inhibitors(env.connection).count == 1)
            client.releaseDelayLock(what: .sleep)
            #expect(!client.holdsDelayLock(what: .sleep))
            // logind drops the inhibitor when its loop sees the fd's hang-up: after the close, not at it.
            #expect(try await eventually { try await inhibitors(env.connection).isEmpty })
        }
    }

    @Test(
        "a release while Inhibit is in flight wins: the fd that arrives is closed, the lock is not held",
        .timeLimit(.minutes(1)))
    func releaseDuringInhibit() async throws {
        // Two FIFOs hold logind's Inhibit in the middle: it says "started", then waits for "go".
        let directory = try TemporaryDirectory(prefix: "inhibit-gate")
        defer { directory.remove() }
        let started = directory.appending("started")
        let go = directory.appending("go")
        #expect(mkfifo(started, 0o600) == 0 && mkfifo(go, 0o600) == 0)
        try await withLogind { _, mock, client, _ in
            try mock.addMethod(
                interface: manager, name: "Inhibit", inSignature: "ssss", outSignature: "h",
                code: [
                    "import os", "f = open('\(started)', 'w')", "f.write('x')", "f.close()",
                    "g = open('\(go)')", "g.read()", "g.close()",
                    "r, w = os.pipe()", "self.gated_fds = (r, w)", "ret = dbus.types.UnixFd(w)",
                ].joined(separator: "; "))
            let take = Task { try await client.takeDelayLock(what: .sleep, who: "AppLifecycle tests", why: "gated") }
            // Blocking FIFO opens, on threads of their own: the first returns once logind is inside Inhibit.
            await onThread { readAll(started) }
            client.releaseDelayLock(what: .sleep)
            await onThread { writeAll(go) }
            try await take.value
            #expect(!client.holdsDelayLock(what: .sleep))
        }
    }

    @Test("InhibitDelayMaxUSec defaults to 5 s when logind does not have it")
    func delayDefault() async throws {
        try await withLogind { _, _, client, _ in
            #expect(client.inhibitDelayMaxUSec == 5_000_000)
        }
    }

    @Test("spoofed senders and wrong signatures are dropped; the same from logind's owner is not")
    func spoofingAndSignatures() async throws {
        try await withLogind { env, mock, _, events in
            try await events.expectNext(.locked(false), .sessionActive(true))
            // Its marker arrives on the client's own connection after the spoofs: by then the
            // client has handled (and dropped) them.
            let spoofer = try await env.spoofer()
            defer { spoofer.close() }
            try spoofer.emitSignal(
                path: LogindClient.managerPath, interface: manager, member: "PrepareForSleep",
                arguments: [.bool(true)])
            try spoofer.emitSignal(
                path: LogindClient.managerPath, interface: manager, member: "PrepareForShutdown",
                arguments: [.bool(true)])
            try spoofer.emitSignal(path: sessionPath("c1"), interface: session, member: "Lock")
            try spoofer.emitSignal(
                path: sessionPath("c1"), interface: "org.freedesktop.DBus.Properties",
                member: "PropertiesChanged",
                arguments: [.string(session), .vardict(["Active": .bool(false)]), .stringArray([])])
            #expect(try await spoofer.flush() == "Done")
            #expect(events.untaken.isEmpty)

            // Wrong signatures from the real owner: dropped.
            try mock.emitSignal(interface: manager, name: "PrepareForSleep", signature: "s", arguments: ["'true'"])
            try mock.emitSignal(interface: manager, name: "PrepareForShutdown", signature: "i", arguments: ["1"])
            try mock.emitSignal(
                path: sessionPath("c1"), interface: session, name: "Lock", signature: "b", arguments: ["true"])
            try mock.updateProperties(path: sessionPath("c1"), interface: session, properties: ["LockedHint": "'yes'"])
            // A SessionNew with a bogus id is ignored too (the app has a session anyway).
            try mock.emitSignal(
                interface: manager, name: "SessionNew", signature: "so",
                arguments: ["'../x'", "objectpath '/org/freedesktop/login1/session/x'"])
            // The genuine ones, from the owner, are the next events.
            try mock.emitSignal(interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["true"])
            try mock.emitSignal(path: sessionPath("c1"), interface: session, name: "Lock", signature: "", arguments: [])
            try await events.expectNext(.sleeping(true), .locked(true))
        }
    }

    @Test("logind restart: the client re-takes its delay lock on the new owner and re-resolves its session")
    func logindRestart() async throws {
        try await BusTestEnvironment.with { env in
            var first: DBusMock? = try DBusMock(template: "logind", address: env.bus.address)
            defer { first?.stop() }
            try first?.addSession(id: "c1", uid: testUID, username: "me", active: true)
            let events = ValueRecorder<HostEvent>()
            let resyncs = ValueRecorder<LogindClient.Resync>()
            let client = LogindClient(
                connection: env.connection, environment: ["XDG_SESSION_ID": "c1"], uid: testUID,
                onResync: { resyncs.add($0) }, logger: testLogger
            ) { events.add($0) }
            defer { client.stop() }
            try await client.start()
            try await events.expectNext(.locked(false), .sessionActive(true))
            try await client.takeDelayLock(what: .sleep, who: "restart test", why: "state")
            #expect(try await inhibitors(env.connection).map(\.first) == ["sleep"])
            let firstOwner = try await env.connection.nameOwner(LogindClient.busName)

            first?.stop()
            first = nil
            let second = try DBusMock(template: "logind", address: env.bus.address)
            defer { second.stop() }
            let resync = try await resyncs.next("resync")
            #expect(resync.owner != firstOwner)
            #expect(resync.owner == (try await env.connection.nameOwner(LogindClient.busName)))
            #expect(resync.retakenLocks == [.sleep])
            #expect(resync.sessionPath == nil)
            #expect(client.holdsDelayLock(what: .sleep))
            #expect(try await inhibitors(env.connection) == [["sleep", "restart test", "state", "delay"]])

            // The session comes back (inactive now): adopted on SessionNew, and only the changed fact is reported.
            try second.addSession(id: "c1", uid: testUID, username: "me", active: false)
            try second.emitSignal(
                interface: manager, name: "SessionNew", signature: "so",
                arguments: ["'c1'", "objectpath '\(sessionPath("c1"))'"])
            try await events.expectNext(.sessionActive(false))
            #expect(client.sessionID == "c1")
            try second.emitSignal(interface: manager, name: "PrepareForSleep", signature: "b", arguments: ["true"])
            try await events.expectNext(.sleeping(true))
            client.releaseDelayLock(what: .sleep)
            #expect(try await eventually { try await inhibitors(env.connection).isEmpty })
        }
    }

    @Test("a vanished bus: the client closes its lock fds, reports nothing and does not crash")
    func busVanishes() async throws {
        try await withLogind { env, _, client, events in
            try await events.expectNext(.locked(false), .sessionActive(true))
            try await client.takeDelayLock(what: .shutdown, who: "bus test", why: "state")
            #expect(client.holdsDelayLock(what: .shutdown))
            // Disconnect handlers run in registration order: the client's ran before this one.
            let disconnected = ValueRecorder<Bool>()
            env.connection.addDisconnectHandler { disconnected.add(true) }
            env.bus.kill()
            _ = try await disconnected.next("disconnect")
            #expect(!client.holdsDelayLock(what: .shutdown))
            #expect(events.untaken.isEmpty)
            let error = await #expect(throws: BusServiceError.self) {
                try await client.takeDelayLock(what: .sleep, who: "x", why: "y")
            }
            #expect(error?.code == .notStarted)
        }
    }

    @Test("without logind on the bus, start() throws serviceUnavailable")
    func absent() async throws {
        try await BusTestEnvironment.with { env in
            let client = LogindClient(connection: env.connection, environment: [:], logger: testLogger) { _ in }
            let error = await #expect(throws: BusServiceError.self) { try await client.start() }
            #expect(error?.code == .serviceUnavailable)
            await #expect(throws: BusServiceError.self) {
                try await client.takeDelayLock(what: .sleep, who: "x", why: "y")
            }
        }
    }
}

/// Runs blocking work on a thread of its own, off the Swift concurrency pool.
private func onThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { continuation in
        Thread {
            body()
            continuation.resume()
        }.start()
    }
}

/// Opens a FIFO for reading (blocking until a writer opens it) and reads to end of file.
private func readAll(_ path: String) {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return }
    var byte: UInt8 = 0
    while read(fd, &byte, 1) > 0 {}
    close(fd)
}

/// Opens a FIFO for writing (blocking until a reader opens it), writes a byte and closes it.
private func writeAll(_ path: String) {
    let fd = open(path, O_WRONLY)
    guard fd >= 0 else { return }
    var byte = UInt8(ascii: "x")
    _ = write(fd, &byte, 1)
    close(fd)
}

/// The clients' diagnostics, on the test's standard error.
private let testLogger = Logger(label: "IntegrationTests.logind")
