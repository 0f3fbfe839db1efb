import AppLifecycle
import SystemdBus

/// The D-Bus clients of a ``SystemdHost`` (filled in when the bus clients land).
struct BusClients {
    var inhibitDelayMax: Duration = .seconds(5)
    func releaseDelayLock(_ what: String) {}
}

extension SystemdHost {
    func startBusClients(loop: EventLoop) async {}
    func stopBusClients() {}
    func retakeSleepLock() async {}
}
