import AppLifecycle
import LifecycledProtocol
import SystemdBus
import Testing

@Suite("The device's conditions on the Command signal")
struct ConditionCommandTests {
    static let events: [HostEvent] =
        [.lowPowerMode(true), .lowPowerMode(false)] + ThermalState.allCases.map(HostEvent.thermalState)
        + BackgroundRefreshStatus.allCases.map(HostEvent.backgroundRefreshStatus)

    @Test("each value survives a round trip through the bus form", arguments: events)
    func roundTrip(_ event: HostEvent) throws {
        let (command, arguments) = try #require(HostEventBusCodec.encode(event))
        let wire = try UserInfoBusCodec.decodeUserInfo(UserInfoBusCodec.encode(arguments))
        #expect(HostEventBusCodec.decode(command: command, arguments: wire) == event)
        #expect(LifecycledCommand.decode(command: command, arguments: wire) == .hostEvent(event))
    }

    @Test("the command names and arguments are the documented ones")
    func wireForm() throws {
        let power = try #require(HostEventBusCodec.encode(.lowPowerMode(true)))
        #expect(power.command == "low-power-mode")
        #expect(power.arguments == ["value": .bool(true)])
        let thermal = try #require(HostEventBusCodec.encode(.thermalState(.serious)))
        #expect(thermal.command == "thermal-state")
        #expect(thermal.arguments == ["value": .int(2)])
        let refresh = try #require(HostEventBusCodec.encode(.backgroundRefreshStatus(.restricted)))
        #expect(refresh.command == "background-refresh-status")
        #expect(refresh.arguments == ["value": .int(0)])
    }

    @Test(
        "out-of-range, mistyped or missing values decode to nil (the app logs and drops the command)",
        arguments: [
            ("thermal-state", ["value": .int(9)]), ("thermal-state", ["value": .int(-1)]),
            ("thermal-state", ["value": .string("serious")]), ("thermal-state", ["value": .double(1.5)]),
            ("thermal-state", ["value": .double(1e300)]), ("thermal-state", ["value": .int(Int64.max)]),
            ("thermal-state", [:]), ("background-refresh-status", ["value": .int(3)]),
            ("background-refresh-status", ["value": .bool(true)]), ("background-refresh-status", [:]),
            ("low-power-mode", ["value": .int(1)]), ("low-power-mode", ["value": .string("true")]),
            ("low-power-mode", [:]),
        ] as [(String, UserInfo)])
    func badValues(_ command: String, _ arguments: UserInfo) {
        #expect(HostEventBusCodec.decode(command: command, arguments: arguments) == nil)
        #expect(LifecycledCommand.decode(command: command, arguments: arguments) == nil)
    }

    @Test("a condition does not resume a suspended app: it waits in the socket for the app's return")
    func doesNotResume() {
        for event in Self.events {
            #expect(!LifecycledCommand.hostEvent(event).resumesSuspendedApp, "\(event)")
        }
    }
}
