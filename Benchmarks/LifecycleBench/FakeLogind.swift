import Foundation
import Glibc
import Synchronization
import SystemdBus

/// A minimal logind exported by the benchmark itself, so that a benchmark times the bus and the
/// app, not a mock interpreter: it owns `org.freedesktop.login1`, answers what the host's logind
/// client asks (`GetSession`, `ListSessions`, `Inhibit`, the session's properties), emits the
/// manager's and the session's signals, and notices when an inhibitor fd is closed.
final class FakeLogind: Sendable {
    static let managerPath = "/org/freedesktop/login1"
    static let sessionPath = "/org/freedesktop/login1/session/bench"

    let connection: BusConnection
    private let manager: ExportedObject
    private let session: ExportedObject
    private let ledger = LockLedger()
    /// Every release and take of a delay lock, as `"release:sleep"`, `"take:sleep"`…, as it happens.
    let lockEvents: AsyncStream<String>
    private let lockEventSink: AsyncStream<String>.Continuation

    init(address: String, loop: EventLoop) async throws {
        connection = try await BusConnection(
            .address(address), loop: loop, description: "fake-logind", timeout: .seconds(10))
        (lockEvents, lockEventSink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let sink = lockEventSink
        let ledger = self.ledger
        let uid = getuid()
        manager = try await connection.export(
            ExportedInterface(
                name: "org.freedesktop.login1.Manager",
                methods: [
                    .init("GetSession", inSignature: "s", outSignature: "o") { call in
                        guard call.arguments.first?.stringValue == "bench" else {
                            throw BusError(name: "org.freedesktop.login1.NoSuchSession", message: "no such session")
                        }
                        return [.objectPath(FakeLogind.sessionPath)]
                    },
                    .init("ListSessions", outSignature: "a(susso)") { _ in
                        [
                            .array(
                                elementSignature: "(susso)",
                                [
                                    .structure([
                                        .string("bench"), .uint32(uid), .string("bench"), .string("seat0"),
                                        .objectPath(FakeLogind.sessionPath),
                                    ])
                                ])
                        ]
                    },
                    .init("Inhibit", inSignature: "ssss", outSignature: "h") { [loop] call in
                        let what = call.arguments.first?.stringValue ?? "?"
                        var fds: [Int32] = [0, 0]
                        guard pipe(&fds) == 0 else { throw BusError(errno: errno) }
                        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
                        let readEnd = fds[0]
                        ledger.taken(what)
                        sink.yield("take:\(what)")
                        let token = try await loop.addIO(fd: readEnd, events: EventLoop.IOEvents.hangUp) { _ in
                            ledger.released(what)
                            sink.yield("release:\(what)")
                            ledger.forget(readEnd)?.cancel()
                            Glibc.close(readEnd)
                        }
                        ledger.hold(readEnd, token)
                        return [.unixFD(BusFileDescriptor(owning: fds[1]))]
                    },
                ],
                signals: [.init("PrepareForSleep", signature: "b"), .init("PrepareForShutdown", signature: "b")],
                properties: [.init("InhibitDelayMaxUSec", initialValue: .uint64(5_000_000), changeSignal: .constant)]
            ), at: Self.managerPath)
        session = try await connection.export(
            ExportedInterface(
                name: "org.freedesktop.login1.Session",
                signals: [.init("Lock"), .init("Unlock")],
                properties: [
                    .init("Id", initialValue: .string("bench"), changeSignal: .constant),
                    .init(
                        "User",
                        initialValue: .structure([.uint32(uid), .objectPath("/org/freedesktop/login1/user/\(uid)")]),
                        changeSignal: .constant),
                    .init("Active", initialValue: .bool(true)),
                    .init("LockedHint", initialValue: .bool(false)),
                ]
            ), at: Self.sessionPath)
        _ = try await connection.requestName("org.freedesktop.login1")
    }

    /// Emits `PrepareForSleep(value)` and returns the instant just before it was sent.
    func prepareForSleep(_ value: Bool) throws -> ContinuousClock.Instant {
        let start = ContinuousClock.now
        try manager.emitSignal("PrepareForSleep", arguments: [.bool(value)])
        return start
    }

    /// Emits the session's `Lock` or `Unlock` and returns the instant just before it was sent.
    func lock(_ value: Bool) throws -> ContinuousClock.Instant {
        let start = ContinuousClock.now
        try session.emitSignal(value ? "Lock" : "Unlock")
        return start
    }

    /// The instants at which a lock of a kind was released (its fd closed), in order.
    func releaseInstants(of what: String) -> [ContinuousClock.Instant] { ledger.releaseInstants(of: what) }

    func close() {
        lockEventSink.finish()
        manager.unexport()
        session.unexport()
        connection.close()
    }
}

/// What the fake logind's inhibitors did, from the loop thread and the benchmark alike.
final class LockLedger: Sendable {
    private let held = Mutex<[Int32: EventSourceToken]>([:])
    private let releases = Mutex<[(what: String, at: ContinuousClock.Instant)]>([])
    private let takes = Mutex<[(what: String, at: ContinuousClock.Instant)]>([])

    func taken(_ what: String) { takes.withLock { $0.append((what, .now)) } }
    func released(_ what: String) { releases.withLock { $0.append((what, .now)) } }
    func hold(_ fd: Int32, _ token: EventSourceToken) { held.withLock { $0[fd] = token } }
    func forget(_ fd: Int32) -> EventSourceToken? { held.withLock { $0.removeValue(forKey: fd) } }
    func releaseInstants(of what: String) -> [ContinuousClock.Instant] {
        releases.withLock { $0.filter { $0.what == what }.map(\.at) }
    }
}
