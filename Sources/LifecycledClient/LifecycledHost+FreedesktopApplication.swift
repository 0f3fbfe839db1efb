import AppLifecycle
import FoundationEssentials
import SystemdBus

/// The app's `org.freedesktop.Application` (``FreedesktopApplicationService``) when lifecycled hosts it.
extension LifecycledHost {
    /// Starts the service: `Activate` goes through lifecycled (`Launch`, which sends
    /// `foreground(true)` back) so the daemon's view of the app stays right; without the daemon
    /// the app moves by itself.
    func exportApplicationInterface(on connection: BusConnection, id: String) async {
        guard let application else { return }
        let service = FreedesktopApplicationService(id: id, application: application)
        service.staticShortcutItems = staticShortcutItems
        service.activate = { [weak self] application in
            if let self, self.status.isHosted {
                self.reportForeground()
            } else {
                application.handle(.foreground(true))
            }
        }
        service.didBringForward = { [weak self] in self?.reportForeground() }
        applicationService = service
        await service.start(on: connection)
    }

    /// A D-Bus activation: the launcher's call (``FreedesktopApplicationService/takeLaunchCall(timeout:)``)
    /// becomes the launch options, as UIKit launches an app for a quick action or a URL: the item
    /// in `UIApplicationLaunchOptionsShortcutItemKey` (so `false` from `didFinishLaunching`
    /// suppresses `performActionFor`), the URL in `UIApplicationLaunchOptionsURLKey`, and the
    /// launch in the foreground. An activation with no call stays a background launch.
    func foldLaunchCall(into application: Application) async {
        guard let call = await applicationService?.takeLaunchCall() else { return }
        var options = launchOptions
        let token: String?
        switch call {
        case .activate(let activationToken):
            token = activationToken
        case .open(let url, let source, let activationToken):
            options.url = url
            options.sourceApplication = source
            token = activationToken
        case .action(let item, let activationToken):
            options.shortcutItem = item
            token = activationToken
        }
        if let token { options[.activationToken] = .string(token) }
        options.launchedInBackground = false
        launchOptions = options
        // Over the background the registration reported; lifecycled hears of it too.
        application.handle(.foreground(true))
        reportForeground()
    }

    /// `Launch(id, {})` to lifecycled, which marks the running app foreground.
    func reportForeground() {
        guard let appID, status.isHosted else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.launch,
                arguments: [.string(appID), UserInfoBusCodec.encode(UserInfo())]
            ))
    }
}
