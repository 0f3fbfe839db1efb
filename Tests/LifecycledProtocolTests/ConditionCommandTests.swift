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

@Suite("The status-bar orientation on the Command signal")
struct OrientationCommandTests {
    @Test(
        "each orientation survives a round trip through the bus form",
        arguments: InterfaceOrientation.allCases.map { HostEvent.statusBarOrientation($0, duration: 0.25) })
    func roundTrip(_ event: HostEvent) throws {
        let (command, arguments) = try #require(HostEventBusCodec.encode(event))
        #expect(command == "status-bar-orientation")
        let wire = try UserInfoBusCodec.decodeUserInfo(UserInfoBusCodec.encode(arguments))
        #expect(HostEventBusCodec.decode(command: command, arguments: wire) == event)
    }

    @Test(
        "an unknown orientation or a duration that is not a finite, non-negative number decodes to nil",
        arguments: [
            ["orientation": .int(5), "duration": .double(0.3)], ["orientation": .int(-1), "duration": .double(0.3)],
            ["orientation": .string("portrait"), "duration": .double(0.3)], ["duration": .double(0.3)],
            ["orientation": .int(1), "duration": .double(.nan)], ["orientation": .int(1), "duration": .double(-1)],
            ["orientation": .int(1), "duration": .double(.infinity)], ["orientation": .int(1), "duration": .int(1)],
            ["orientation": .int(1)],
        ] as [UserInfo])
    func badArguments(_ arguments: UserInfo) {
        #expect(HostEventBusCodec.decode(command: "status-bar-orientation", arguments: arguments) == nil)
    }

    @Test("an orientation does not resume a suspended app: it gets the latest on its return")
    func doesNotResume() {
        #expect(!LifecycledCommand.hostEvent(.statusBarOrientation(.landscapeLeft, duration: 0.3)).resumesSuspendedApp)
    }
}
