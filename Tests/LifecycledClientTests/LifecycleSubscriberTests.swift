import AppLifecycle
import AppLifecycleTesting
import Foundation
import LifecycledClient
import LifecycledProtocol
import LifecycledTestSupport
import Logging
import Synchronization
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("LifecycleSubscriber against a fake lifecycled")
struct LifecycleSubscriberTests {
    /// Events a handler received, with a change signal to wait on.
    final class Received: Sendable {
        private let events = Mutex<[LifecycleSubscriber.Event]>([])
        let changes = ChangeSignal()

        func add(_ event: LifecycleSubscriber.Event) {
            events.withLock { $0.append(event) }
            changes.signal()
        }

        var all: [LifecycleSubscriber.Event] { events.withLock { $0 } }

        func wait(for what: String, count: Int) async throws {
            try await changes.wait(for: what) { [self] in all.count >= count }
        }
    }

    static let active = "UIApplicationDidBecomeActiveNotification"

    @MainActor final class TypedLog {
        var active = 0
        var memoryLevels: [MemoryWarning.Level] = []
    }

    @MainActor
    @Test(
        "signals arrive as closure calls, async sequence elements and typed messages; spoofed, mistyped and undecodable ones are dropped"
    )
    func deliversThreeWays() async throws {
        try await withFakeLifecycled { env in
            let bus = env.bus
            let loop = env.loop
            let fake = env.fake
            let spoof = try await BusConnection(
                .address(bus.address), loop: loop, description: "spoof", timeout: .seconds(10))
            defer { spoof.close() }

            let subscriber = try await LifecycleSubscriber.connect(to: .address(bus.address), logger: testLogger)
            defer { subscriber.close() }
            let received = Received()
            let registration = subscriber.addHandler { received.add($0) }
            defer { registration.cancel() }
            let stream = subscriber.events(bufferingNewest: 16)
            let center = LifecycleNotificationCenter()
            let repost = subscriber.repost(into: center)
            defer { repost.cancel() }
            let typed = TypedLog()
            let typedChanges = ChangeSignal()
            let counter = subscriber.remoteApplication(FakeLifecycled.counterID)
            let observation = center.addObserver(for: Application.DidBecomeActiveMessage.self, object: counter) { _ in
                typed.active += 1
                typedChanges.signal()
            }
            defer { observation.cancel() }
            let memory = center.addObserver(for: Application.DidReceiveMemoryWarningMessage.self) { message in
                typed.memoryLevels.append(message.warning.level)
                typedChanges.signal()
            }
            defer { memory.cancel() }

            // Dropped: a spoofed signal, a wrong signature from the owner, an undecodable userInfo.
            try spoof.emitSignal(
                path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
                member: LifecycledProtocol.Signal.notification.name,
                arguments: [.string(FakeLifecycled.counterID), .string("Spoofed"), .vardict([:])])
            try await busBarrier(spoof)
            try fake.connection.emitSignal(
                path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
                member: LifecycledProtocol.Signal.notification.name,
                arguments: [.string(FakeLifecycled.counterID), .string("WrongSignature")])
            try fake.connection.emitSignal(
                path: LifecycledProtocol.objectPath, interface: LifecycledProtocol.interface,
                member: LifecycledProtocol.Signal.notification.name,
                arguments: [
                    .string(FakeLifecycled.counterID), .string("Undecodable"),
                    .vardict(["k": .variant(.dictionary(keySignature: "i", valueSignature: "s", []))]),
                ])
            // Delivered.
            try fake.stateChanged(FakeLifecycled.counterID, "inactive", "active")
            try fake.notification(FakeLifecycled.counterID, Self.active)
            let warning = Application.DidReceiveMemoryWarningMessage(
                warning: MemoryWarning(level: .critical, source: "psi"))
            try fake.notification(
                FakeLifecycled.notesID, Application.didReceiveMemoryWarningNotification.rawValue, warning.userInfo)

            try await received.wait(for: "three events", count: 3)
            let expected: [LifecycleSubscriber.Event] = [
                .stateChanged(appID: FakeLifecycled.counterID, previous: "inactive", state: "active"),
                .notification(appID: FakeLifecycled.counterID, name: Self.active, userInfo: [:]),
                .notification(
                    appID: FakeLifecycled.notesID, name: Application.didReceiveMemoryWarningNotification.rawValue,
                    userInfo: warning.userInfo),
            ]
            #expect(received.all == expected)

            var fromStream: [LifecycleSubscriber.Event] = []
            for await event in stream {
                fromStream.append(event)
                if fromStream.count == 3 { break }
            }
            #expect(fromStream == expected)

            try await typedChanges.wait(for: "typed messages") { @MainActor in
                typed.active == 1 && typed.memoryLevels.count == 1
            }
            #expect(typed.active == 1)
            #expect(typed.memoryLevels == [.critical])
        }
    }

    @Test("an app-id filter only lets that app's signals through")
    func filtersByApp() async throws {
        try await withFakeLifecycled { env in
            let bus = env.bus
            let fake = env.fake
            let subscriber = try await LifecycleSubscriber.connect(
                to: .address(bus.address), appID: FakeLifecycled.notesID, logger: testLogger)
            defer { subscriber.close() }
            let received = Received()
            let registration = subscriber.addHandler { received.add($0) }
            defer { registration.cancel() }

            try fake.notification(FakeLifecycled.counterID, Self.active)
            try fake.notification(FakeLifecycled.notesID, Self.active)
            try await received.wait(for: "the notes notification", count: 1)
            #expect(received.all == [.notification(appID: FakeLifecycled.notesID, name: Self.active, userInfo: [:])])

            await #expect(throws: ApplicationError.self) {
                _ = try await LifecycleSubscriber.connect(
                    to: .address(bus.address), appID: "bad id", logger: testLogger)
            }
        }
    }

    @Test("survives a daemon restart: reports the gap, resyncs with ListApps, delivers the new owner's signals")
    func survivesRestart() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "fake-daemon")
        defer { loop.shutdown() }
        let first = try await FakeLifecycled.start(address: bus.address, loop: loop)
        defer { first.connection.close() }
        let subscriber = try await LifecycleSubscriber.connect(to: .address(bus.address), logger: testLogger)
        defer { subscriber.close() }
        let received = Received()
        let registration = subscriber.addHandler { received.add($0) }
        defer { registration.cancel() }

        await first.stop()
        let apps = [LifecycledApp(id: FakeLifecycled.counterID, state: "background", name: "Counter", pid: 7)]
        let second = try await FakeLifecycled.start(address: bus.address, loop: loop, apps: apps)
        defer { second.connection.close() }
        try await received.wait(for: "vanish, appear, resync", count: 3)
        try second.stateChanged(FakeLifecycled.counterID, "background", "suspended")
        try await received.wait(for: "the new owner's signal", count: 4)

        let events = received.all
        #expect(events[0] == .daemonVanished)
        #expect(events[1] == .daemonAppeared(owner: second.connection.uniqueName))
        #expect(events[2] == .resynced(apps))
        #expect(events[3] == .stateChanged(appID: FakeLifecycled.counterID, previous: "background", state: "suspended"))
        #expect(try await subscriber.listApps() == apps)
    }
}

/// The subscriber's diagnostics, on the test's standard error.
private let testLogger = Logger(label: "LifecycleSubscriberTests")
