import AppLifecycle
import LifecycledProtocol
import SystemdBus

/// lifecycled's commands to an app (`HostEventBusCodec`): a command name (most often a known one)
/// and an `a{sv}` of arguments drawn from the input, marshalled by sd-bus (``WireMarshalling``) and
/// decoded through `UserInfoBusCodec` as the app's subscriber does; an event that decodes must
/// encode to a command that decodes to the same event.
enum CommandCodecFuzzing {
    static let commands = [
        "sleeping", "locked", "session-active", "foreground", "terminate", "time-change", "memory-warning",
        "open-url", "remote-notification", "local-notification", "local-notification-opened",
        "local-notification-action", "scheduled-local-notifications", "badge", "shortcut-item", "background-fetch",
    ]

    static let target = FuzzTarget(name: "command-codec", summary: "Command signal codec (generated arguments)") {
        bytes in
        var generator = BusValueGenerator(input: FuzzInput(bytes))
        let command = generator.input.choice(8) == 0 ? generator.string() : generator.input.pick(commands)
        guard let wire = WireMarshalling.roundTrip(generator.vardict()),
            let arguments = try? UserInfoBusCodec.decodeUserInfo(wire)
        else { return }
        guard let event = HostEventBusCodec.decode(command: command, arguments: arguments) else { return }
        guard let (again, againArguments) = HostEventBusCodec.encode(event) else {
            FuzzTarget.fail("\(command) decoded to \(event), which does not encode")
        }
        // Through the bus form, as the signal carries it.
        guard let sent = WireMarshalling.roundTrip(UserInfoBusCodec.encode(againArguments), mustArrive: true),
            let wire = try? UserInfoBusCodec.decodeUserInfo(sent)
        else {
            FuzzTarget.fail("the arguments of \(event) do not decode")
        }
        guard let reread = HostEventBusCodec.decode(command: again, arguments: wire) else {
            FuzzTarget.fail("\(event) encodes to a command that does not decode: \(again) \(wire)")
        }
        if !FuzzValues.containsNaN(.dictionary(arguments.values)), reread != event {
            FuzzTarget.fail("event changed on a round trip: \(event) → \(reread)")
        }
    }
}
