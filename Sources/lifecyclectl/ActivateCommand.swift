import AppLifecycle
import ArgumentParser
import Foundation
import LifecycledProtocol
import SystemdBus

/// `lifecyclectl activate APP [--action TYPE] [--background] [--wait-for-name]`: launches (or
/// brings forward) an app through lifecycled: what a desktop entry's `Exec=` and the D-Bus
/// service file of a `DBusActivatable` app run, so the app lands in its cgroup with the whole
/// lifecycle instead of being started by the launcher or the bus daemon directly.
struct ActivateCommand: CtlCommand {
    static let configuration = CommandConfiguration(
        commandName: "activate",
        abstract: "Launch an app through lifecycled, or bring it forward; what its desktop entry runs.",
        discussion: """
            With --action the app is launched with the quick action in its launch options \
            (UIApplicationLaunchOptionsShortcutItemKey), or, running already, gets performActionFor. \
            --background launches without bringing it forward (D-Bus activation: no user intent). \
            --wait-for-name returns only once the app owns its id on the bus, as D-Bus activation needs \
            (the address is then $DBUS_STARTER_ADDRESS unless --address is given).
            """)

    @OptionGroup var daemon: DaemonOptions

    @Argument(help: "The app id.")
    var app: String

    @Argument(help: "URLs to open in the app (through OpenURL: the app must claim their schemes).")
    var urls: [String] = []

    @Option(help: ArgumentHelp("Run the quick action of this type (a manifest shortcut item).", valueName: "type"))
    var action: String?

    @Flag(help: "Launch into the background (a D-Bus activation).")
    var background = false

    @Flag(name: .customLong("wait-for-name"), help: "Wait until the app owns its id on the bus (at most 25 s).")
    var waitForName = false

    func run() async throws { try await runOnStandardStreams() }

    /// `--address`, else the bus that activated this process, else the session bus.
    var busAddress: BusConnection.Address {
        if daemon.address != nil { return daemon.busAddress }
        if let starter = ProcessInfo.processInfo.environment["DBUS_STARTER_ADDRESS"], !starter.isEmpty {
            return .address(starter)
        }
        return .session
    }

    func execute(output: CtlOutput) async throws {
        let app = try validatedAppID(self.app)
        if action != nil, background {
            throw ValidationError("--action brings the app forward; it cannot go with --background")
        }
        for url in urls where URL(string: url)?.scheme == nil {
            throw ValidationError("'\(url)' is not a URL with a scheme")
        }
        var options = LaunchOptions()
        if let action {
            options.shortcutItem = ShortcutItem(type: action, localizedTitle: action)
        } else if background {
            options.launchedInBackground = true
        }
        // Run by the bus daemon for a D-Bus activation: the launcher's call follows the name.
        if waitForName { options[.dbusActivation] = .bool(true) }
        try await DaemonClient.with(busAddress) { client in
            let tracker = try await client.connection.trackNameOwner(app)
            if urls.isEmpty {
                _ = try await client.call(
                    LifecycledProtocol.Method.launch.name, [.string(app), UserInfoBusCodec.encode(options.userInfo)])
            }
            for url in urls {
                let opener = try await client.call(
                    LifecycledProtocol.Method.openURL.name, [.string(url), UserInfoBusCodec.encode(UserInfo())])
                guard opener.first?.stringValue == app else {
                    throw BusError(
                        name: BusError.Name.failed,
                        message: "\(url) was opened by \(opener.first?.stringValue ?? "?"), not \(app)")
                }
            }
            guard waitForName else { return }
            let deadline = ContinuousClock.now + .seconds(25)
            while tracker.currentOwner == nil {
                guard ContinuousClock.now < deadline else {
                    throw BusError(
                        name: BusError.Name.failed, message: "\(app) was launched but did not take its bus name in 25 s"
                    )
                }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        output.out("activated \(app)")
    }
}
