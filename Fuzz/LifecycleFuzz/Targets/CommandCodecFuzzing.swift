import AppLifecycle
import LifecycledProtocol
import SystemdBus

/// lifecycled's commands to an app (`LifecycledCommand`, host facts through `HostEventBusCodec`): a command name (most often a known one)
/// and an `a{sv}` of arguments drawn from the input, marshalled by sd-bus (``WireMarshalling``) and
/// decoded through `UserInfoBusCodec` as the app's subscriber does; a command that decodes must
/// encode to one that decodes to the same command.
enum CommandCodecFuzzing {
    static let commands = [
        "sleeping", "locked", "session-active", "foreground", "terminate", "time-change", "memory-warning",
        "open-url", "remote-notification", "remote-notification-opened", "remote-notification-action",
        "local-notification", "local-notification-opened",
        "local-notification-action", "scheduled-local-notifications", "badge", "shortcut-item", "background-fetch",
        LifecycledCommand.postName, LifecycledCommand.scheduleChangedName, "low-power-mode", "thermal-state",
        "background-refresh-status", "status-bar-orientation",
    ]

    static let target = FuzzTarget(name: "command-codec", summary: "Command signal codec (generated arguments)") {
        bytes in
        var generator = BusValueGenerator(input: FuzzInput(bytes))
        let command = generator.input.choice(8) == 0 ? generator.string() : generator.input.pick(commands)
        guard let wire = WireMarshalling.roundTrip(generator.vardict()),
            let arguments = try? UserInfoBusCodec.decodeUserInfo(wire)
        else { return }
        guard let event = LifecycledCommand.decode(command: command, arguments: arguments) else { return }
        guard let (again, againArguments) = event.encode() else {
            FuzzTarget.fail("\(command) decoded to \(event), which does not encode")
        }
        // Through the bus form, as the signal carries it.
        guard let sent = WireMarshalling.roundTrip(UserInfoBusCodec.encode(againArguments), mustArrive: true),
            let wire = try? UserInfoBusCodec.decodeUserInfo(sent)
        else {
            FuzzTarget.fail("the arguments of \(event) do not decode")
        }
        guard let reread = LifecycledCommand.decode(command: again, arguments: wire) else {
            FuzzTarget.fail("\(event) encodes to a command that does not decode: \(again) \(wire)")
        }
        if !FuzzValues.containsNaN(.dictionary(arguments.values)), reread != event {
            FuzzTarget.fail("event changed on a round trip: \(event) → \(reread)")
        }
    }
}
