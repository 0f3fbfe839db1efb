import AppLifecycle
import FoundationEssentials
import SystemdBus

/// The daemon's side of push delivery: a hosted app is made reachable before its connector is called.
extension LifecycleDaemon {
    /// Serves the distributor (``PushDistributor/serve(fleetConfiguration:loop:)``), with the broker
    /// link when a `lifecycled.conf` configures one; a bad file is logged and leaves the fleet off
    /// (the daemon still hosts apps). Called before `org.applifecycle.Lifecycled1` is taken, so no
    /// app can be launched or registered before the distributor's name has its owner; the broker
    /// link connects later, in ``PushDistributor/startDelivering(loop:)``.
    func servePush(loop: EventLoop, connection: BusConnection, file: ConfigurationFile) async {
        var fleet: FleetConfiguration?
        if let path = file.path {
            do {
                fleet = try FleetConfiguration.load(sections: file.sections.get(), path: path)
            } catch {
                logger.error("push: \(error); the fleet stays off")
            }
        }
        let distributor = PushDistributor(
            daemon: self, connection: connection, stateDirectory: stateDirectory, logger: logger)
        push = distributor
        await distributor.serve(fleetConfiguration: fleet, loop: loop)
    }

    /// `lifecycled.conf`, read once at start for its fleet and its `[lifecycle]` settings.
    struct ConfigurationFile {
        /// The file found (`--config`, else the XDG and /etc paths), if any.
        var path: String?
        /// Its sections, or why it cannot be used.
        var sections: Result<[String: [String: String]], FleetConfiguration.Invalid>
    }

    /// Finds and reads `lifecycled.conf` (``FleetConfiguration/locate(explicit:environment:)``).
    func readConfigurationFile() -> ConfigurationFile {
        guard
            let path = FleetConfiguration.locate(
                explicit: configuration.fleetConfigurationPath, environment: ProcessInfo.processInfo.environment)
        else { return ConfigurationFile(path: nil, sections: .success([:])) }
        return ConfigurationFile(
            path: path,
            sections: Result { () throws(FleetConfiguration.Invalid) in
                try FleetConfiguration.readSections(path: path)
            })
    }

    /// Before a `Message` call to `service`: a suspended hosted app is resumed (it wakes into the
    /// background for the push and is suspended again after its completion handler); a hosted
    /// app that is not running is launched in the background, as a D-Bus activation, so the push
    /// becomes its launch option once it owns its name. Anything else is left to D-Bus activation.
    ///
    /// - Returns: `false` when the app was just launched: the push goes out once it owns its name.
    func prepareForPush(_ service: String, nameOwned: Bool) async -> Bool {
        if await resumeForCall(service) { return true }
        // Running but not launched by this daemon (started by hand, or registered again after a
        // restart of lifecycled), or not hosted at all: reachable as it is.
        if nameOwned || registry[service]?.isRegistered == true { return true }
        guard let manifest = store.manifest(id: service) else { return true }
        var options = LaunchOptions()
        options.launchedInBackground = true
        options[.dbusActivation] = .bool(true)
        do {
            try launch(manifest, options: options)
            logger.info("launched \(service) in the background for a push", metadata: .app(service))
        } catch {
            logger.warning("cannot launch \(service) for a push: \(error)", metadata: .app(service))
        }
        return false
    }

    /// Before any call to `service` (a push, `NewEndpoint`, `Unregistered`): a hosted app that is
    /// stopped is resumed, so it reads the call. Returns whether lifecycled runs that app.
    @discardableResult
    func resumeForCall(_ service: String) async -> Bool {
        guard let app = registry[service], app.isRunning else { return false }
        await resume(service)
        return true
    }
}
