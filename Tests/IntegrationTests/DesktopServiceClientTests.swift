import AppLifecycle
import AppLifecycleSystemd
import AppLifecycleTesting
import Logging
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("ScreenSaverClient, TimedatedClient and LowMemoryMonitorClient against python-dbusmock")
struct DesktopServiceClientTests {
    @Test(
        "screensaver: the start state, then ActiveChanged as locked, once per change; the absent freedesktop name is fine"
    )
    func screensaver() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "gnome_screensaver", address: env.bus.address)
            defer { mock.stop() }
            let events = ValueRecorder<HostEvent>()
            let client = ScreenSaverClient(connection: env.connection, logger: testLogger) { events.add($0) }
            defer { client.stop() }
            #expect(try await client.start() == [.gnome])
            #expect(client.isActive == false)
            // The template's SetActive emits ActiveChanged(b).
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
            try mock.emitSignal(
                interface: "org.gnome.ScreenSaver", name: "ActiveChanged", signature: "s", arguments: ["'no'"])
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
            // The state read at start comes first, inactive too: the bridge combines it with logind's.
            try await events.expectNext(.locked(false), .locked(true), .locked(false))

            // A spoofer's ActiveChanged is dropped; the marker proves the client has seen it.
            let spoofer = try await env.spoofer()
            defer { spoofer.close() }
            try spoofer.emitSignal(
                path: "/org/gnome/ScreenSaver", interface: "org.gnome.ScreenSaver",
                member: "ActiveChanged", arguments: [.bool(true)])
            try spoofer.emitSignal(
                path: "/org/freedesktop/ScreenSaver", interface: "org.freedesktop.ScreenSaver",
                member: "ActiveChanged", arguments: [.bool(true)])
            _ = try await spoofer.flush()
            #expect(events.untaken.isEmpty)
            #expect(client.isActive == false)
        }
    }

    @Test("an active screensaver at start is reported as locked")
    func screensaverActiveAtStart() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "gnome_screensaver", address: env.bus.address)
            defer { mock.stop() }
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
            let events = ValueRecorder<HostEvent>()
            let client = ScreenSaverClient(connection: env.connection, logger: testLogger) { events.add($0) }
            defer { client.stop() }
            try await client.start()
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["false"])
            try await events.expectNext(.locked(true), .locked(false))
        }
    }

    @Test("timedated Timezone: one event per real change, none for the same value or a bogus one")
    func timedated() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(
                template: "timedated", address: env.bus.address,
                parameters: #"{"Timezone": "Europe/Berlin"}"#)
            defer { mock.stop() }
            let events = ValueRecorder<HostEvent>()
            let client = TimedatedClient(connection: env.connection, logger: testLogger) { events.add($0) }
            defer { client.stop() }
            #expect(try await client.start() == "Europe/Berlin")
            let interface = TimedatedClient.interface
            // SetTimezone in the template sets the property and emits PropertiesChanged, even for the same value.
            try mock.call(interface: interface, method: "SetTimezone", arguments: ["'Europe/Berlin'", "false"])
            try mock.call(interface: interface, method: "SetTimezone", arguments: ["'America/Sao_Paulo'", "false"])
            try mock.call(interface: interface, method: "SetTimezone", arguments: ["'America/Sao_Paulo'", "false"])
            try mock.updateProperties(interface: interface, properties: ["Timezone": "'../../etc/passwd'"])
            try mock.updateProperties(interface: interface, properties: ["Timezone": "uint32 3"])
            try mock.updateProperties(interface: interface, properties: ["Timezone": "'Asia/Tokyo'"])
            try await events.expectNext(
                .significantTimeChange(
                    SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: "America/Sao_Paulo")),
                .significantTimeChange(SignificantTimeChange(reason: .timeZone, timeZoneIdentifier: "Asia/Tokyo")))
            #expect(client.timeZoneIdentifier == "Asia/Tokyo")
        }
    }

    @Test("low-memory-monitor LowMemoryWarning(y) becomes a memory warning with the matching level")
    func lowMemoryMonitor() async throws {
        try await BusTestEnvironment.with { env in
            let mock = try DBusMock(template: "low_memory_monitor", address: env.bus.address)
            defer { mock.stop() }
            let events = ValueRecorder<HostEvent>()
            let client = LowMemoryMonitorClient(connection: env.connection, logger: testLogger) { events.add($0) }
            defer { client.stop() }
            try await client.start()
            // The template's EmitWarning(y) emits LowMemoryWarning(y) from the main object.
            for level in ["byte 50", "byte 0", "byte 255"] { try mock.mockCall("EmitWarning", [level]) }
            try mock.emitSignal(
                interface: LowMemoryMonitorClient.interface, name: "LowMemoryWarning",
                signature: "u", arguments: ["uint32 100"])
            try mock.mockCall("EmitWarning", ["byte 100"])
            try await events.expectNext(
                .memoryWarning(MemoryWarning(level: .low, source: "low-memory-monitor")),
                .memoryWarning(MemoryWarning(level: .critical, source: "low-memory-monitor")),
                .memoryWarning(MemoryWarning(level: .medium, source: "low-memory-monitor")))
        }
    }

    @Test("a screensaver that starts after the client is heard")
    func screensaverAppearsLater() async throws {
        try await BusTestEnvironment.with { env in
            let events = ValueRecorder<HostEvent>()
            let client = ScreenSaverClient(connection: env.connection, logger: testLogger) { events.add($0) }
            defer { client.stop() }
            #expect(try await client.start() == [])
            let mock = try DBusMock(template: "gnome_screensaver", address: env.bus.address)
            defer { mock.stop() }
            try mock.call(interface: "org.gnome.ScreenSaver", method: "SetActive", arguments: ["true"])
            try await events.expectNext(.locked(true))
        }
    }

    @Test("timedated and low-memory-monitor report an absent service with serviceUnavailable")
    func absentServices() async throws {
        try await BusTestEnvironment.with { env in
            let timedated = TimedatedClient(connection: env.connection, logger: testLogger) { _ in }
            #expect(
                await errorCode { () async throws(BusServiceError) in _ = try await timedated.start() }
                    == .serviceUnavailable)
            let monitor = LowMemoryMonitorClient(connection: env.connection, logger: testLogger) { _ in }
            #expect(
                await errorCode { () async throws(BusServiceError) in try await monitor.start() } == .serviceUnavailable
            )
        }
    }
}

private func errorCode(_ body: () async throws(BusServiceError) -> Void) async -> BusServiceError.Code? {
    do {
        try await body()
        return nil
    } catch {
        return error.code
    }
}

/// The clients' diagnostics, on the test's standard error.
private let testLogger = Logger(label: "IntegrationTests.desktop-services")
