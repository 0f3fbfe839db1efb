import Glibc

extension BusError {
    /// The error a failed connection to `address` ends with: the same D-Bus error name and errno
    /// as `underlying`, and a message a person can act on: which bus, why it could not be reached
    /// (for the session bus: which of `$DBUS_SESSION_BUS_ADDRESS` and `$XDG_RUNTIME_DIR/bus` was
    /// tried) and what to do. sd-bus's own text (`sd_bus_open_user: No medium found`) is left out:
    /// the name and errno keep it for programs.
    ///
    /// The advice is about the environment only; a program with an option of its own for the bus
    /// (`--address`) adds that itself.
    ///
    /// - Parameters:
    ///   - address: The bus the connection was opened to.
    ///   - underlying: What sd-bus or the bus daemon answered.
    ///   - environment: The variables sd-bus read (the process's own by default; tests pass theirs).
    public static func connectionFailed(
        to address: BusConnection.Address, underlying: BusError,
        environment: (String) -> String? = { name in getenv(name).map { String(cString: $0) } }
    ) -> BusError {
        let code = underlying.errno
        var message: String
        if let foreign = Self.foreignSocketOwner(address, environment: environment) {
            // A bus daemon ends another user's authentication at once; sd-bus reports that as a timeout.
            message =
                "cannot connect to the \(address == .session ? "session bus" : "bus") at \(foreign.path): it belongs to uid \(foreign.uid), and a bus daemon accepts only its own user's connections; run the command as that user, or use a bus of your own"
            return BusError(name: underlying.name, message: message, errno: code)
        }
        switch address {
        case .session:
            if let value = environment("DBUS_SESSION_BUS_ADDRESS"), !value.isEmpty {
                message =
                    "cannot connect to the session bus at $DBUS_SESSION_BUS_ADDRESS (\(value)): "
                    + Self.reason(code)
                    + "; the bus of that session may have ended: log in again, or unset DBUS_SESSION_BUS_ADDRESS to use $XDG_RUNTIME_DIR/bus"
            } else if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty {
                message =
                    "there is no session bus: $DBUS_SESSION_BUS_ADDRESS is not set and \(runtime)/bus "
                    + (code == ENOENT || code == ECONNREFUSED
                        ? "does not exist" : "cannot be used (\(Self.reason(code)))")
                    + "; a user session of systemd runs one when the package dbus-user-session is installed (log in again after installing it), or run the command inside `dbus-run-session -- COMMAND`"
            } else {
                message =
                    "there is no session bus: neither $DBUS_SESSION_BUS_ADDRESS nor $XDG_RUNTIME_DIR is set, so this shell is not in a user's login session (for example after `su` or `sudo` without a login, or in a container); log in as the user (`machinectl shell USER@` gives a shell in the user's session), or run the command inside `dbus-run-session -- COMMAND`"
            }
        case .system:
            let value = environment("DBUS_SYSTEM_BUS_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
            message =
                "cannot connect to the system bus at \(value ?? "/run/dbus/system_bus_socket"): " + Self.reason(code)
                + (code == EACCES || code == EPERM
                    ? "; this user may not connect to it"
                    : "; start the system's D-Bus daemon (`systemctl start dbus`)"
                        + (value != nil ? " or check $DBUS_SYSTEM_BUS_ADDRESS" : ""))
        case .address(let text) where !text.contains(":"):
            message =
                "\(text) is not a D-Bus address: one has the form TRANSPORT:KEY=VALUE,…, such as unix:path=/run/user/1000/bus"
        case .address(let text):
            message =
                "cannot connect to the D-Bus address \(text): " + Self.reason(code)
                + (code == EACCES || code == EPERM
                    ? "; the bus there belongs to another user, who must allow this one"
                    : "; check the address (for example unix:path=/run/user/1000/bus) and that a bus daemon listens there")
        }
        return BusError(name: underlying.name, message: message, errno: code)
    }

    /// The socket of `address` when it is a path owned by another user than this process's
    /// (root may connect to any bus, so not for root).
    private static func foreignSocketOwner(
        _ address: BusConnection.Address, environment: (String) -> String?
    ) -> (path: String, uid: uid_t)? {
        let text: String?
        switch address {
        case .system: return nil
        case .address(let value): text = value
        case .session:
            text =
                environment("DBUS_SESSION_BUS_ADDRESS").flatMap { $0.isEmpty ? nil : $0 }
                ?? environment("XDG_RUNTIME_DIR").map { "unix:path=\($0)/bus" }
        }
        guard let text, text.hasPrefix("unix:"), geteuid() != 0 else { return nil }
        let keys = text.dropFirst("unix:".count).split(separator: ",")
        guard let pathKey = keys.first(where: { $0.hasPrefix("path=") }) else { return nil }
        let path = String(pathKey.dropFirst("path=".count))
        var status = stat()
        guard stat(path, &status) == 0, status.st_uid != geteuid() else { return nil }
        return (path, status.st_uid)
    }

    /// A short, plain reason for a connection's errno.
    private static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such socket"
        case ECONNREFUSED: "nothing listens on the socket"
        case EACCES, EPERM: "permission denied"
        case ENOMEDIUM: "no runtime directory to find it in"
        case ETIMEDOUT: "the bus did not answer in time"
        case ECONNRESET, EPIPE, ENOTCONN: "the bus closed the connection"
        case EINVAL, ENOEXEC: "the address is not a valid D-Bus address"
        case 0: "the bus refused the connection"
        default: String(cString: strerror(code))
        }
    }
}
