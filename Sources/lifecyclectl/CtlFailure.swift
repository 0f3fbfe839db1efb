import SystemdBus

/// A failure whose message is already written for the person at the terminal (what went wrong
/// and what to do): `finish` prints it after the command's name, without a D-Bus error name, and
/// exits with status 1.
struct CtlFailure: Error, CustomStringConvertible {
    /// What went wrong and what to do.
    let message: String

    /// The message.
    var description: String { message }

    /// The failure of a connection to lifecycled's bus: the bus's own explanation, and lifecyclectl's
    /// `--address` as one more way out when it was the session bus.
    ///
    /// - Parameters:
    ///   - error: What ``DaemonClient`` got from the bus.
    ///   - address: The bus it tried.
    static func busUnreachable(_ error: BusError, address: BusConnection.Address) -> CtlFailure {
        let option = address == .session ? "; or name lifecycled's bus with --address ADDRESS" : ""
        return CtlFailure(message: error.message + option)
    }

    /// lifecycled neither runs on the bus nor can be started from a D-Bus service file there.
    static func daemonAbsent() -> CtlFailure {
        CtlFailure(
            message: """
                lifecycled is not running on this bus, and no D-Bus service file there starts it: start it \
                (`systemctl --user start lifecycled`, or run `lifecycled` in the session), or name the bus it \
                serves with --address ADDRESS
                """)
    }
}
