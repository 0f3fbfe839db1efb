import Foundation
import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

@Suite("D-Bus activation: a name with a service file is started by the first call to it")
struct ActivationTests {
    @Test("ownerStartingIfActivatable starts an activatable service once, returns an owner as is, and nil for neither")
    func startsAnActivatableService() async throws {
        let services = try TemporaryDirectory(prefix: "dbus-services")
        defer { services.remove() }
        try await BusTestEnvironment.with(serviceDirectory: services.path) { env in
            // A real peer no one here wrote: python-dbusmock, started by dbus-daemon itself.
            _ = try services.write(
                "org.example.Activated.service",
                """
                [D-BUS Service]
                Name=org.example.Activated
                Exec=/usr/bin/env DBUS_SYSTEM_BUS_ADDRESS=\(env.bus.address) /usr/bin/python3 -m dbusmock --system org.example.Activated /org/example/Activated org.example.Activated

                """)
            try await env.connection.reloadBusConfiguration()
            try await env.connection.stoppingActivatedServices(["org.example.Activated"]) {
                #expect(try await env.connection.activatableNames().contains("org.example.Activated"))
                #expect(try await env.connection.nameOwner("org.example.Activated") == nil)
                let owner = try #require(try await env.connection.ownerStartingIfActivatable("org.example.Activated"))
                #expect(try await env.connection.nameOwner("org.example.Activated") == owner)
                // Owned now: the same owner, no second start.
                #expect(try await env.connection.ownerStartingIfActivatable("org.example.Activated") == owner)

                // Neither owned nor activatable: nil, and nothing is tried.
                #expect(try await env.connection.ownerStartingIfActivatable("org.example.Absent") == nil)
                // A service file whose program fails: the bus daemon's error, not nil.
                _ = try services.write(
                    "org.example.Broken.service", "[D-BUS Service]\nName=org.example.Broken\nExec=/bin/false\n")
                try await env.connection.reloadBusConfiguration()
                let broken = await #expect(throws: BusError.self) {
                    _ = try await env.connection.ownerStartingIfActivatable("org.example.Broken")
                }
                #expect(
                    broken?.name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") == true, "\(String(describing: broken))"
                )
            }
        }
    }
}
