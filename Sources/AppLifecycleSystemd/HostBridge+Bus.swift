import AppLifecycle
import Logging
import SystemdBus

/// The D-Bus clients of a ``HostBridge`` (filled in when the bus clients land).
struct BusClients {
    var inhibitDelayMax: Duration = .seconds(5)
    func holdsDelayLock(_ what: String) -> Bool { false }
    func takeDelayLock(_ what: String, who: String, logger: Logger) async {}
    func releaseDelayLock(_ what: String) {}
}

extension HostBridge {
    func startBusClients(loop: EventLoop, sink: @escaping @Sendable (HostEvent, String) -> Void) async {}
    func stopBusClients() {}
}
