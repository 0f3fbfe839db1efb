import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials
import LifecycledProtocol
import LocalNotificationEngine
import Logging
import SystemdBus
import UnifiedPushClient

/// The desktop half of ``SystemdHost``, for an app that runs without lifecycled: local
/// notifications and the badge (the engine started here; its hooks in `SystemdHost+LocalNotifications.swift`),
/// remote notifications (a UnifiedPush connector), the logind `idle` inhibitor, and URLs opened outside the app
/// (the OpenURI portal or the MIME-apps default).
extension SystemdHost {
    /// Where an app without lifecycled keeps its schedule: `RestorationArchive.defaultDirectory`'s
    /// rule (`$STATE_DIRECTORY`, else `$XDG_STATE_HOME/<app id>`, else `~/.local/state/<app id>`),
    /// or `nil` (in memory only) when the environment names none of them, as a test host's does.
    static func stateDirectory(appID: String, environment: [String: String]) -> String? {
        guard
            ["STATE_DIRECTORY", "XDG_STATE_HOME", "HOME"].contains(where: { environment[$0]?.hasPrefix("/") == true })
        else { return nil }
        return RestorationArchive.defaultDirectory(applicationIdentifier: appID, environment: environment).path
    }

    func startDesktopServices(for application: Application) async {
        guard let loop = bridge.loop else { return }
        let environment = bridge.configuration.environment
        let id = application.configuration.applicationIdentifier
        do {
            let connection = try await BusConnection(
                bridge.configuration.sessionBus, loop: loop, description: "lifecycle-desktop", timeout: .seconds(5))
            sessionConnection = connection
        } catch {
            logger.info("no session bus for notifications and URLs: \(error)")
        }
        if let sessionConnection, LifecycledProtocol.isValidAppID(id) {
            // The UnifiedPush connector, exported before the name is requested; it keeps the push
            // keys in the app's state directory, so an app with none has no push.
            if let directory = Self.stateDirectory(appID: id, environment: environment) {
                let connector = UnifiedPushConnector(
                    appID: id, stateDirectory: URL(fileURLWithPath: directory, isDirectory: true),
                    application: application, logger: logger)
                connector.vapidPublicKey = environment[UnifiedPushConnector.vapidKeyEnvironment]
                pushConnector = connector
                await connector.start(on: sessionConnection)
            }
            // Launchers (gio launch, a shell's quick actions) reach the running app.
            let service = FreedesktopApplicationService(id: id, application: application, logger: logger)
            applicationService = service
            await service.start(on: sessionConnection)
            pushConnector?.resumeRegistration()
        }
        // The engine serves this one app; entries of others in a shared state directory are kept as read.
        let center = LocalNotificationCenter(
            configuration: .init(
                scheduleURL: Self.stateDirectory(appID: id, environment: environment).map {
                    URL(fileURLWithPath: $0).appendingPathComponent(LocalNotificationScheduleFile.fileName)
                },
                appScope: id),
            logger: logger)
        center.host = self
        notificationCenter = center
        await center.start(connection: sessionConnection, loop: loop)
        let list = center.notifications(of: id)
        if !list.isEmpty { application.handle(.scheduledLocalNotifications(list)) }
    }

    func stopDesktopServices() {
        pushConnector?.stop()
        pushConnector = nil
        applicationService?.stop()
        applicationService = nil
        notificationCenter?.stop()
        notificationCenter = nil
        idleInhibitor?.close()
        idleInhibitor = nil
        if let cookie = screenSaverCookie, let sessionConnection {
            IdleInhibitor.releaseScreenSaver(cookie, on: sessionConnection, logger: logger)
        }
        screenSaverCookie = nil
        sessionConnection?.close()
        sessionConnection = nil
    }

    /// Registers with a UnifiedPush distributor on the session bus (`UnifiedPushConnector`);
    /// without a session bus or a state directory for the keys the app has no push.
    public func registerForRemoteNotifications(_ application: Application) {
        guard let pushConnector else {
            Task { @MainActor [weak application] in
                application?.handle(
                    .failedToRegisterForRemoteNotifications(
                        ApplicationError(
                            .noPushDistributor, "no session bus, or no state directory to keep the push keys in")))
            }
            return
        }
        pushConnector.register()
    }

    /// Unregisters from the push distributor.
    public func unregisterForRemoteNotifications(_ application: Application) {
        pushConnector?.unregister()
    }

    /// Holds or drops logind's `idle` inhibitor with the app's state.
    public func application(_ application: Application, didChangeIdleTimerDisabled disabled: Bool) {
        idleTimerWanted = disabled
        updateIdleInhibitor()
    }

    /// Opens the URL through the OpenURI portal or the MIME-apps default (no lifecycled here).
    public func application(
        _ application: Application, open url: URL, options: [OpenExternalURLOptionsKey: UserInfoValue],
        completionHandler: @escaping @MainActor @Sendable (Bool) -> Void
    ) {
        guard options[.universalLinksOnly]?.boolValue != true else {
            completionHandler(false)
            return
        }
        let opener = DesktopURLOpener(
            connection: sessionConnection, environment: bridge.configuration.environment, logger: logger)
        Task { @MainActor in completionHandler(await opener.open(url)) }
    }

    /// Whether the MIME-apps files name a handler for the URL's scheme.
    public func application(_ application: Application, canOpen url: URL) -> Bool {
        let apps = MIMEApps.current(environment: bridge.configuration.environment)
        for problem in apps.problems { logger.info("MIME apps: \(problem)") }
        return apps.handler(for: url) != nil
    }

    /// Holds logind's `idle` inhibitor and the desktop's screensaver inhibition
    /// (``IdleInhibitor``) exactly while the app wants them and is active.
    func updateIdleInhibitor() {
        let wanted = idleTimerWanted && application?.applicationState == .active
        idleGeneration += 1
        guard wanted else {
            idleInhibitor?.close()
            idleInhibitor = nil
            if let cookie = screenSaverCookie, let sessionConnection {
                IdleInhibitor.releaseScreenSaver(cookie, on: sessionConnection, logger: logger)
            }
            screenSaverCookie = nil
            return
        }
        let generation = idleGeneration
        let who = application?.configuration.applicationIdentifier ?? "app"
        let why = "\(who) disabled the idle timer"
        if idleInhibitor == nil, let system = bridge.systemConnection {
            Task { @MainActor in
                do {
                    let descriptor = try await IdleInhibitor.takeLogind(on: system, who: who, why: why)
                    guard generation == idleGeneration, idleInhibitor == nil else {
                        descriptor.close()
                        return
                    }
                    idleInhibitor = descriptor
                } catch {
                    logger.info("cannot inhibit idle: \(error)")
                }
            }
        }
        if screenSaverCookie == nil, let session = sessionConnection {
            Task { @MainActor in
                do {
                    guard let cookie = try await IdleInhibitor.takeScreenSaver(on: session, who: who, why: why) else {
                        return
                    }
                    guard generation == idleGeneration, screenSaverCookie == nil else {
                        IdleInhibitor.releaseScreenSaver(cookie, on: session, logger: logger)
                        return
                    }
                    screenSaverCookie = cookie
                } catch {
                    logger.info("cannot inhibit the screensaver: \(error)")
                }
            }
        }
    }
}
