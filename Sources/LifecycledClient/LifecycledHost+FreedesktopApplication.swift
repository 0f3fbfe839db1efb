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
