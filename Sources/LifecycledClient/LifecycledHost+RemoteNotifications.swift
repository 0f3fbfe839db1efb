import AppLifecycle
import DesktopIntegration
import FoundationEssentials
import SystemdBus
import UnifiedPushClient

/// Remote notifications when lifecycled hosts the app: a ``UnifiedPushConnector`` under the
/// app's id, preferring lifecycled's own distributor.
extension LifecycledHost {
    /// Registers with the push distributor (`UnifiedPushConnector/register()`).
    public func registerForRemoteNotifications(_ application: Application) {
        guard let pushConnector else {
            Task { @MainActor [weak application] in
                application?.handle(
                    .failedToRegisterForRemoteNotifications(
                        ApplicationError(
                            .noPushDistributor,
                            "the app is not on the session bus, where push distributors are: run it in a desktop or systemd user session"
                        )))
            }
            return
        }
        pushConnector.register()
    }

    /// Unregisters from the push distributor.
    public func unregisterForRemoteNotifications(_ application: Application) {
        pushConnector?.unregister()
    }

    /// Exports the connector (before the app's name is requested).
    func startPushConnector(on connection: BusConnection, id: String) async {
        guard let application else { return }
        let directory = RestorationArchive.defaultDirectory(
            applicationIdentifier: id, environment: configuration.environment)
        let connector = UnifiedPushConnector(
            appID: id, stateDirectory: directory, application: application, logger: logger)
        connector.vapidPublicKey = configuration.environment[UnifiedPushConnector.vapidKeyEnvironment]
        pushConnector = connector
        await connector.start(on: connection)
    }

    /// Owns the app's id for the connector when the app does not serve `org.freedesktop.Application`.
    func requestPushName(on connection: BusConnection, id: String) async {
        do {
            _ = try await connection.requestName(id, flags: [.doNotQueue])
        } catch {
            logger.info("cannot own \(id) for UnifiedPush: \(error)")
        }
    }
}
