import AppLifecycle
import AppLifecycleTesting
import Foundation
import LifecycledProtocol
import Synchronization
import SystemdBus
import SystemdBusTesting

// The test stand-in for lifecycled, shared by the AppLifecycleSystemd and lifecycled test targets.

public struct HangGuardTimeout: Error, CustomStringConvertible {
    public var what: String
    public var description: String { "hang guard: gave up waiting for \(what)" }
}

/// Something that changes on other threads, and a way to wait (without polling) until a
/// condition on it holds: every change wakes the waiter, which re-checks the condition.
public final class ChangeSignal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    public func signal() { continuation.yield() }

    /// Waits until `condition` holds; the timeout is only a hang guard.
    public func wait(
        for what: String, timeout: Duration = .seconds(20), until condition: @escaping @Sendable () async -> Bool
    ) async throws {
        let stream = self.stream
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                if await condition() { return true }
                for await _ in stream where await condition() { return true }
                return false
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            guard try await group.next() == true else { throw HangGuardTimeout(what: what) }
        }
    }
}

/// The calls the fake daemon received, in order.
public final class CallLog: Sendable {
    private let calls = Mutex<[BusMethodCall]>([])
    public let changes = ChangeSignal()

    public func add(_ call: BusMethodCall) {
        calls.withLock { $0.append(call) }
        changes.signal()
    }

    public var all: [BusMethodCall] { calls.withLock { $0 } }

    public func calls(_ member: String) -> [BusMethodCall] { all.filter { $0.member == member } }

    /// The string arguments of a call (non-strings as their description).
    public static func strings(_ call: BusMethodCall) -> [String] {
        call.arguments.map { $0.stringValue ?? $0.description }
    }

    /// Waits until a call of `member` whose arguments satisfy `matching` has arrived.
    @discardableResult
    public func wait(
        for member: String, _ what: String = "", matching: @escaping @Sendable (BusMethodCall) -> Bool = { _ in true }
    ) async throws -> BusMethodCall {
        try await changes.wait(for: "\(member) \(what)") { [self] in calls(member).contains(where: matching) }
        return calls(member).first(where: matching)!
    }
}

/// A fake lifecycled: owns the protocol's name, exports its interface, records every call.
public final class FakeLifecycled: Sendable {
    public let connection: BusConnection
    public let object: ExportedObject
    public let log: CallLog

    public static let counterID = "org.example.Counter"
    public static let notesID = "org.example.Notes"
    /// What `GetCounters` answers.
    public static let counters: UserInfo = [
        "push-received": .int(7), "push-delivered": .int(5), "push-queued": .int(1),
        "push-failed-deliveries": .int(2), "push-expired": .int(1), "push-dropped": .int(0),
        "push-registrations": .int(3), "notifications-scheduled": .int(4), "notifications-fired": .int(3),
        "notifications-shown": .int(2), "notifications-delivered-to-app": .int(1),
    ]

    public static func start(
        address: String, loop: EventLoop,
        facts: UserInfo = ["sleeping": false, "locked": false, "session-active": true, "foreground": true],
        launchOptions: UserInfo = [:],
        apps: [LifecycledApp] = [
            LifecycledApp(id: counterID, state: "active", name: "Counter", pid: 4242),
            LifecycledApp(id: notesID, state: "notRunning", name: "Notes", pid: 0),
        ],
        simulationEnabled: Bool = true
    ) async throws -> FakeLifecycled {
        let connection = try await BusConnection(
            .address(address), loop: loop, description: "fake-lifecycled", timeout: .seconds(10))
        let log = CallLog()
        let interface = makeInterface(
            log: log, facts: facts, launchOptions: launchOptions, apps: apps, simulationEnabled: simulationEnabled)
        let object = try await connection.export(interface, at: LifecycledProtocol.objectPath)
        guard try await connection.requestName(LifecycledProtocol.busName) == .primaryOwner else {
            connection.close()
            throw HangGuardTimeout(what: "ownership of \(LifecycledProtocol.busName)")
        }
        return FakeLifecycled(connection: connection, object: object, log: log)
    }

    private init(connection: BusConnection, object: ExportedObject, log: CallLog) {
        self.connection = connection
        self.object = object
        self.log = log
    }

    /// Gives up the name and leaves the bus (as a stopping daemon does).
    public func stop() async {
        _ = try? await connection.releaseName(LifecycledProtocol.busName)
        object.unexport()
        connection.close()
    }

    public func command(_ appID: String, _ event: HostEvent) throws {
        let (command, arguments) = HostEventBusCodec.encode(event)!
        try object.emitSignal(
            LifecycledProtocol.Signal.command.name,
            arguments: [.string(appID), .string(command), UserInfoBusCodec.encode(arguments)])
    }

    public func notification(_ appID: String, _ name: String, _ userInfo: UserInfo = [:]) throws {
        try object.emitSignal(
            LifecycledProtocol.Signal.notification.name,
            arguments: [.string(appID), .string(name), UserInfoBusCodec.encode(userInfo)])
    }

    public func stateChanged(_ appID: String, _ previous: String, _ state: String) throws {
        try object.emitSignal(
            LifecycledProtocol.Signal.stateChanged.name, arguments: [.string(appID), .string(previous), .string(state)])
    }

    public static func makeInterface(
        log: CallLog, facts: UserInfo, launchOptions: UserInfo, apps: [LifecycledApp], simulationEnabled: Bool
    ) -> ExportedInterface {
        typealias M = ExportedInterface.Method
        let appsValue = BusValue.array(elementSignature: "(sssu)", apps.map(\.busValue))
        let known = Set(apps.map(\.id))
        @Sendable func error(_ name: String, _ message: String) -> BusError { BusError(name: name, message: message) }
        @Sendable func recorded(
            _ name: String, _ inSignature: String, _ outSignature: String = "",
            _ body: @escaping @Sendable (BusMethodCall) throws -> [BusValue] = { _ in [] }
        ) -> M {
            M(name, inSignature: inSignature, outSignature: outSignature) { call in
                log.add(call)
                return try body(call)
            }
        }
        return ExportedInterface(
            name: LifecycledProtocol.interface,
            methods: [
                recorded(LifecycledProtocol.Method.registerApp.name, "s", "a{sv}a{sv}") { _ in
                    [UserInfoBusCodec.encode(launchOptions), UserInfoBusCodec.encode(facts)]
                },
                recorded(LifecycledProtocol.Method.reportState.name, "ss"),
                recorded(LifecycledProtocol.Method.reportNotification.name, "ssa{sv}"),
                recorded(LifecycledProtocol.Method.backgroundTaskBegan.name, "sus"),
                recorded(LifecycledProtocol.Method.backgroundTaskEnded.name, "su"),
                recorded(LifecycledProtocol.Method.openURL.name, "sa{sv}", "s") { call in
                    let url = call.arguments[0].stringValue ?? ""
                    guard url.hasPrefix("counter:") else {
                        throw error(LifecycledProtocol.ErrorName.noHandler, "no app claims \(url)")
                    }
                    return [.string(counterID)]
                },
                recorded(LifecycledProtocol.Method.launch.name, "sa{sv}"),
                recorded(LifecycledProtocol.Method.terminate.name, "s"),
                recorded(LifecycledProtocol.Method.post.name, "ssa{sv}") { call in
                    let app = call.arguments[0].stringValue ?? ""
                    guard known.contains(app) else {
                        throw error(LifecycledProtocol.ErrorName.unknownApp, "no app \(app)")
                    }
                    return []
                },
                recorded(LifecycledProtocol.Method.simulate.name, "sa{sv}") { _ in
                    guard simulationEnabled else {
                        throw error(LifecycledProtocol.ErrorName.simulationDisabled, "Simulate is not enabled")
                    }
                    return []
                },
                recorded(LifecycledProtocol.Method.getState.name, "s", "s") { call in
                    let app = call.arguments[0].stringValue ?? ""
                    guard let entry = apps.first(where: { $0.id == app }) else {
                        throw error(LifecycledProtocol.ErrorName.unknownApp, "no app \(app)")
                    }
                    return [.string(entry.state)]
                },
                recorded(LifecycledProtocol.Method.listApps.name, "", "a(sssu)") { _ in [appsValue] },
                recorded(LifecycledProtocol.Method.describeApps.name, "", "aa{sv}") { _ in
                    [
                        .array(
                            elementSignature: "a{sv}",
                            apps.map { app -> BusValue in
                                let info: UserInfo = [
                                    "id": .string(app.id), "name": .string(app.name), "state": .string(app.state),
                                    "pid": .int(Int64(app.pid)), "window-state": .string("no-window"),
                                    "windows": .array([]), "reason": .string(""), "frozen": .bool(false),
                                ]
                                return UserInfoBusCodec.encode(info)
                            })
                    ]
                },
                recorded(LifecycledProtocol.Method.getCounters.name, "", "a{sv}") { _ in
                    [UserInfoBusCodec.encode(FakeLifecycled.counters)]
                },
                recorded(LifecycledProtocol.Method.setFreezeExempt.name, "sb") { call in
                    let app = call.arguments[0].stringValue ?? ""
                    guard known.contains(app) else {
                        throw error(LifecycledProtocol.ErrorName.unknownApp, "no app \(app)")
                    }
                    return []
                },
            ],
            signals: [
                .init(LifecycledProtocol.Signal.notification.name, signature: "ssa{sv}"),
                .init(LifecycledProtocol.Signal.stateChanged.name, signature: "sss"),
                .init(LifecycledProtocol.Signal.command.name, signature: "ssa{sv}"),
                .init(LifecycledProtocol.Signal.windowsChanged.name, signature: "ssas"),
            ],
            properties: [
                .init(LifecycledProtocol.Property.hostState.name, initialValue: UserInfoBusCodec.encode(facts)),
                .init(LifecycledProtocol.Property.apps.name, initialValue: appsValue),
                .init(LifecycledProtocol.Property.simulationEnabled.name, initialValue: .bool(simulationEnabled)),
                .init(
                    LifecycledProtocol.Property.version.name, initialValue: .uint32(LifecycledProtocol.version),
                    changeSignal: .constant),
            ])
    }
}

/// Makes sure the bus daemon has processed everything `connection` sent so far: messages from
/// one connection are handled in order, so once a call's reply is back, earlier signals are routed.
public func busBarrier(_ connection: BusConnection) async throws {
    _ = try await connection.call(
        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
        interface: "org.freedesktop.DBus", member: "GetId")
}

/// A private bus, an event loop and a fake lifecycled on it, for one test.
public struct FakeLifecycledEnvironment {
    /// The private bus (its address is what clients connect to).
    public let bus: PrivateBus
    /// The loop the fake's connection runs on.
    public let loop: EventLoop
    /// The fake daemon.
    public let fake: FakeLifecycled
}

/// Runs `body` with a private bus and a fake lifecycled on it; stops all of it afterwards, even on failure.
///
/// - Parameters:
///   - facts: The host facts `RegisterApp` returns.
///   - launchOptions: The launch options `RegisterApp` returns.
///   - apps: What `ListApps` and `Apps` report.
///   - simulationEnabled: The `SimulationEnabled` property.
///   - isolation: The caller's actor (inferred).
///   - body: The test.
public func withFakeLifecycled<T>(
    facts: UserInfo = ["sleeping": false, "locked": false, "session-active": true, "foreground": true],
    launchOptions: UserInfo = [:],
    apps: [LifecycledApp] = [
        LifecycledApp(id: FakeLifecycled.counterID, state: "active", name: "Counter", pid: 4242),
        LifecycledApp(id: FakeLifecycled.notesID, state: "notRunning", name: "Notes", pid: 0),
    ],
    simulationEnabled: Bool = true,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (FakeLifecycledEnvironment) async throws -> T
) async throws -> T {
    let bus = try PrivateBus()
    defer { bus.stop() }
    let loop = try EventLoop(name: "fake-daemon")
    defer { loop.shutdown() }
    let fake = try await FakeLifecycled.start(
        address: bus.address, loop: loop, facts: facts, launchOptions: launchOptions, apps: apps,
        simulationEnabled: simulationEnabled)
    defer { fake.connection.close() }
    return try await body(FakeLifecycledEnvironment(bus: bus, loop: loop, fake: fake))
}
