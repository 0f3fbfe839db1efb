import AppLifecycle
import DesktopIntegration
import FoundationEssentials
import LifecycledProtocol
import SystemdBus
import UnifiedPushClient

/// The app's `org.freedesktop.Application` (``FreedesktopApplicationService``) when lifecycled hosts it.
extension LifecycledHost {
    /// Starts the service: `Activate` goes through lifecycled (`Launch`, which sends
    /// `foreground(true)` back) so the daemon's view of the app stays right; without the daemon
    /// the app moves by itself.
    func exportApplicationInterface(on connection: BusConnection, id: String) async {
        guard let application else { return }
        let service = FreedesktopApplicationService(id: id, application: application, logger: logger)
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
        guard let first = await takeFirstLaunchCall() else { return }
        let call: FreedesktopApplicationService.LaunchCall
        switch first {
        case .push(let payload):
            // A distributor activated the app for a push: a background launch with the payload.
            launchOptions.remoteNotification = payload
            return
        case .application(let applicationCall):
            call = applicationCall
        }
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

    /// The first call of a D-Bus activation: to `org.freedesktop.Application`, or a UnifiedPush
    /// `Message`; the other window closes when one of them takes a call.
    enum FirstLaunchCall: Sendable {
        case application(FreedesktopApplicationService.LaunchCall)
        case push(UserInfo)
    }

    private func takeFirstLaunchCall() async -> FirstLaunchCall? {
        let service = applicationService
        let connector = pushConnector
        let race = LaunchCallRace()
        return await withCheckedContinuation { continuation in
            race.continuation = continuation
            Task { @MainActor in
                let call = await service?.takeLaunchCall()
                // The other window stops waiting: its calls go to the running app from now on.
                if call != nil { connector?.closeLaunchWindow() }
                race.offer(call.map(FirstLaunchCall.application))
            }
            Task { @MainActor in
                let payload = await connector?.takeLaunchMessage()
                if payload != nil { service?.closeLaunchWindow() }
                race.offer(payload.map(FirstLaunchCall.push))
            }
        }
    }

    /// `Launch(id, {})` to lifecycled, which marks the running app foreground.
    func reportForeground() {
        guard let appID, status.isHosted else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.launch.name,
                arguments: [.string(appID), UserInfoBusCodec.encode(UserInfo())]
            ))
    }
}

/// Two launch windows, one answer: the first call either takes, or `nil` once both closed empty.
@MainActor
private final class LaunchCallRace {
    var continuation: CheckedContinuation<LifecycledHost.FirstLaunchCall?, Never>?
    private var waiting = 2

    func offer(_ call: LifecycledHost.FirstLaunchCall?) {
        waiting -= 1
        guard let continuation, call != nil || waiting == 0 else { return }
        self.continuation = nil
        continuation.resume(returning: call)
    }
}
