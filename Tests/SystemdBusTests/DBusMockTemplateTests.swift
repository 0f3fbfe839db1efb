import SystemdBus
import SystemdBusTesting
import Testing

/// Pins the python-dbusmock 0.28.7 template behaviour the bridge's tests depend on.
@Suite("dbusmock templates")
struct DBusMockTemplateTests {
    @Test("logind: sessions, Lock/Unlock/SetLockedHint, Suspend emits nothing by itself")
    func logind() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "logind", address: env.bus.address)
            defer { mock.stop() }
            let path = try mock.addSession(id: "c1", uid: 1000, username: "user", active: true)
            #expect(path == "/org/freedesktop/login1/session/c1")
            let session = "org.freedesktop.login1.Session"
            let signals = ValueRecorder<BusSignal>()
            let lock = try await env.connection.subscribe(
                sender: mock.busName, path: path, interface: session,
                member: nil
            ) { signals.add($0) }
            defer { lock.cancel() }
            let sleep = try await env.connection.subscribe(
                sender: mock.busName, interface: "org.freedesktop.login1.Manager",
                member: "PrepareForSleep"
            ) { signals.add($0) }
            defer { sleep.cancel() }
            let changes = ValueRecorder<PropertiesChange>()
            let props = try await env.connection.observeProperties(sender: mock.busName, path: path, interface: session)
            {
                changes.add($0)
            }
            defer { props.cancel() }

            _ = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath,
                interface: "org.freedesktop.login1.Manager", member: "Suspend", arguments: [.bool(false)])
            _ = try await env.connection.call(destination: mock.busName, path: path, interface: session, member: "Lock")
            let locked = try await signals.next("Lock")
            #expect(locked.member == "Lock")  // not PrepareForSleep: Suspend emitted nothing before it
            #expect(locked.signature == "")
            _ = try await env.connection.call(
                destination: mock.busName, path: path, interface: session, member: "Unlock")
            #expect(try await signals.next("Unlock").member == "Unlock")

            _ = try await env.connection.call(
                destination: mock.busName, path: path, interface: session,
                member: "SetLockedHint", arguments: [.bool(true)])
            let hint = try await changes.next("LockedHint")
            #expect(hint.changed["LockedHint"] == .bool(true))

            let active = try await env.connection.getProperty(
                destination: mock.busName, path: path, interface: session, name: "Active")
            #expect(active == .bool(true))
            let sessions = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath,
                interface: "org.freedesktop.login1.Manager", member: "ListSessions")
            #expect(sessions.first?.signature == "a(susso)")
            #expect(sessions.first?.arrayValue?.count == 1)

            try mock.addProperty(
                interface: "org.freedesktop.login1.Manager", name: "InhibitDelayMaxUSec", value: "uint64 5000000")
            let delay = try await env.connection.getProperty(
                destination: mock.busName, path: mock.mainPath,
                interface: "org.freedesktop.login1.Manager", name: "InhibitDelayMaxUSec")
            #expect(delay == .uint64(5_000_000))
        }
    }

    @Test("low_memory_monitor: Mock.EmitWarning(y) emits LowMemoryWarning(y)")
    func lowMemoryMonitor() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "low_memory_monitor", address: env.bus.address)
            defer { mock.stop() }
            let warnings = ValueRecorder<BusSignal>()
            let subscription = try await env.connection.subscribe(
                sender: mock.busName, path: mock.mainPath, interface: "org.freedesktop.LowMemoryMonitor",
                member: "LowMemoryWarning", signature: "y"
            ) { warnings.add($0) }
            defer { subscription.cancel() }
            try mock.call(interface: DBusMock.mockInterface, method: "EmitWarning", arguments: ["byte 50"])
            #expect(try await warnings.next("LowMemoryWarning").arguments == [.byte(50)])
        }
    }

    @Test("gnome_screensaver: SetActive(b) emits ActiveChanged(b); GetActive follows")
    func screensaver() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "gnome_screensaver", address: env.bus.address)
            defer { mock.stop() }
            let changes = ValueRecorder<BusSignal>()
            let subscription = try await env.connection.subscribe(
                sender: mock.busName, path: mock.mainPath, interface: "org.gnome.ScreenSaver",
                member: "ActiveChanged", signature: "b"
            ) { changes.add($0) }
            defer { subscription.cancel() }
            _ = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath, interface: "org.gnome.ScreenSaver",
                member: "SetActive", arguments: [.bool(true)])
            #expect(try await changes.next("ActiveChanged").arguments == [.bool(true)])
            let active = try await env.connection.call(
                destination: mock.busName, path: mock.mainPath,
                interface: "org.gnome.ScreenSaver", member: "GetActive")
            #expect(active == [.bool(true)])
        }
    }

    @Test("notification_daemon: Notify returns increasing ids")
    func notifications() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "notification_daemon", address: env.bus.address)
            defer { mock.stop() }
            func notify() async throws -> [BusValue] {
                try await env.connection.call(
                    destination: mock.busName, path: mock.mainPath, interface: "org.freedesktop.Notifications",
                    member: "Notify",
                    arguments: [
                        .string("app"), .uint32(0), .string(""), .string("summary"), .string("body"),
                        .stringArray([]), .vardict([:]), .int32(-1),
                    ])
            }
            #expect(try await notify() == [.uint32(1)])
            #expect(try await notify() == [.uint32(2)])
        }
    }
}
