import AppLifecycleSystemd
import LifecycledProtocol
import SystemdBus

/// The D-Bus errors the daemon replies with, each a ``BusError`` with a protocol error name.
///
/// The names are those of ``LifecycledProtocol/ErrorName`` and the standard
/// `org.freedesktop.DBus.Error.AccessDenied` / `InvalidArgs`; the message always says what was
/// wrong, so a client can show it as is.
enum DaemonError {
    /// `org.freedesktop.DBus.Error.InvalidArgs`: an argument is malformed or over a limit.
    ///
    /// - Parameters:
    ///   - message: What is wrong with which argument.
    static func invalidArgs(_ message: String) -> BusError {
        BusError(name: BusError.Name.invalidArgs, message: message)
    }

    /// `org.freedesktop.DBus.Error.AccessDenied`: the caller is not the daemon's user.
    ///
    /// - Parameters:
    ///   - message: Who was refused and why.
    static func accessDenied(_ message: String) -> BusError {
        BusError(name: BusError.Name.accessDenied, message: message)
    }

    /// `…Error.UnknownApp`: no manifest and no registration has this id.
    ///
    /// - Parameters:
    ///   - id: The app id asked for.
    static func unknownApp(_ id: String) -> BusError {
        BusError(
            name: LifecycledProtocol.ErrorName.unknownApp,
            message: """
                no app '\(id)': no manifest and no registered process; `lifecyclectl apps` lists the apps \
                lifecycled knows, and a manifest \(id).json in an applifecycle/apps directory of $XDG_DATA_HOME or \
                $XDG_DATA_DIRS adds one (`lifecycled --check` shows what it reads)
                """)
    }

    /// `…Error.NoHandler`: no manifest claims the URL's scheme.
    ///
    /// - Parameters:
    ///   - scheme: The URL's scheme.
    static func noHandler(_ scheme: String) -> BusError {
        BusError(
            name: LifecycledProtocol.ErrorName.noHandler,
            message: """
                no app claims the URL scheme '\(scheme)'; an app claims a scheme with urlSchemes in its manifest \
                (`lifecycled --check` lists each app's schemes)
                """)
    }

    /// `…Error.InvalidURL`: the URL is malformed, has no scheme, or is too long.
    ///
    /// - Parameters:
    ///   - message: What is wrong with it.
    static func invalidURL(_ message: String) -> BusError {
        BusError(name: LifecycledProtocol.ErrorName.invalidURL, message: message)
    }

    /// `…Error.SimulationDisabled`: `Simulate` without `--enable-simulate`.
    static var simulationDisabled: BusError {
        BusError(
            name: LifecycledProtocol.ErrorName.simulationDisabled,
            message: "Simulate is disabled; start lifecycled with --enable-simulate to allow it")
    }

    /// `…Error.LaunchFailed`: the app's process could not be started.
    ///
    /// - Parameters:
    ///   - reason: Why.
    static func launchFailed(_ id: String, _ reason: String) -> BusError {
        BusError(name: LifecycledProtocol.ErrorName.launchFailed, message: "cannot launch \(id): \(reason)")
    }

    /// `…Error.NotRegistered`: the caller is not (or may not become) the process of this app.
    ///
    /// - Parameters:
    ///   - message: Which app and why.
    static func notRegistered(_ message: String) -> BusError {
        BusError(name: LifecycledProtocol.ErrorName.notRegistered, message: message)
    }
}
