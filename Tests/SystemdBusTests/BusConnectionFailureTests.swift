import Glibc
import SystemdBus
import SystemdBusTesting
import Testing

/// A connection that cannot be made says which bus, why, and what to do (issue 20: `lifecyclectl
/// status` without a session bus printed `System.Error.ENOMEDIUM: sd_bus_open_user: No medium found`).
@Suite("BusError.connectionFailed: a failed connection explained")
struct BusConnectionFailureTests {
    private static let noMedium = BusError(errno: ENOMEDIUM, context: "sd_bus_open_user")
    private static let missing = BusError(errno: ENOENT, context: "sd_bus_open_user")

    @Test func aShellOutsideAnyLoginSessionIsToldToLogInOrStartABus() {
        let error = BusError.connectionFailed(to: .session, underlying: Self.noMedium, environment: { _ in nil })
        #expect(
            error.message.hasPrefix("there is no session bus: neither $DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR"))
        #expect(error.message.contains("dbus-run-session -- COMMAND"))
        #expect(!error.message.contains("No medium found"))
        // Programs still match on the name and errno.
        #expect(error.name == Self.noMedium.name)
        #expect(error.errno == ENOMEDIUM)
    }

    @Test func aRuntimeDirectoryWithoutABusNamesTheSocketAndThePackage() {
        let environment: (String) -> String? = { $0 == "XDG_RUNTIME_DIR" ? "/run/user/4242" : nil }
        let error = BusError.connectionFailed(to: .session, underlying: Self.missing, environment: environment)
        #expect(error.message.contains("/run/user/4242/bus does not exist"))
        #expect(error.message.contains("dbus-user-session"))
    }

    @Test func aStaleSessionAddressIsNamed() {
        let environment: (String) -> String? = {
            $0 == "DBUS_SESSION_BUS_ADDRESS" ? "unix:path=/nonexistent/bus" : "/run/user/4242"
        }
        let error = BusError.connectionFailed(to: .session, underlying: Self.missing, environment: environment)
        #expect(error.message.contains("$DBUS_SESSION_BUS_ADDRESS (unix:path=/nonexistent/bus): no such socket"))
        #expect(error.message.contains("unset DBUS_SESSION_BUS_ADDRESS"))
    }

    @Test func theSystemBusAndAnAddressThatIsNoneAreExplained() {
        let system = BusError.connectionFailed(
            to: .system, underlying: BusError(errno: ENOENT, context: "sd_bus_open_system"), environment: { _ in nil })
        #expect(system.message.contains("/run/dbus/system_bus_socket: no such socket"))
        #expect(system.message.contains("systemctl start dbus"))
        let garbage = BusError.connectionFailed(
            to: .address("garbage"), underlying: BusError(errno: ECONNREFUSED), environment: { _ in nil })
        #expect(garbage.message.hasPrefix("garbage is not a D-Bus address"))
    }

    @Test("a real connection to a socket that does not exist ends with the explanation")
    func aRealConnectionToNothingIsExplained() async throws {
        let loop = try EventLoop(name: "failure-test")
        defer { loop.shutdown() }
        let directory = try TemporaryDirectory(prefix: "no-bus")
        let address = "unix:path=\(directory.appending("bus"))"
        do {
            _ = try await BusConnection(.address(address), loop: loop, timeout: .seconds(5))
            Issue.record("connected to a socket that does not exist")
        } catch let error as BusError {
            #expect(
                error.message
                    == "cannot connect to the D-Bus address \(address): no such socket; check the address (for example unix:path=/run/user/1000/bus) and that a bus daemon listens there"
            )
            #expect(error.errno == ENOENT)
        }
    }
}
