import AppLifecycle
import DesktopIntegration
import SystemdBus

/// The idle inhibitor: while an app that disabled its idle timer is active, lifecycled holds
/// logind's `idle` block inhibitor and the desktop's screensaver inhibition for it (per-app policy
/// on the app's state, which only the daemon knows; `SystemdHost` holds the same for its one app).
extension LifecycleDaemon {
    /// Releases every idle inhibitor and closes the system bus connection. Called by teardown.
    func stopIdleInhibitors() {
        for descriptor in idle.idleInhibitors.values { descriptor.close() }
        idle.idleInhibitors.removeAll()
        for cookie in idle.screenSaverCookies.values { releaseScreenSaverInhibit(cookie) }
        idle.screenSaverCookies.removeAll()
        idle.systemBus?.close()
        idle.systemBus = nil
    }

    /// `SetIdleTimerDisabled(appId, disabled)` from the registered app.
    func setIdleTimerDisabled(_ id: String, _ disabled: Bool) {
        if disabled { idle.idleTimerDisabled.insert(id) } else { idle.idleTimerDisabled.remove(id) }
        updateIdleInhibitor(id)
    }

    /// Holds a logind `idle` block inhibitor for an app exactly while it wants one and is active.
    /// Called on every state change of the app and when it leaves.
    func updateIdleInhibitor(_ id: String) {
        let wanted =
            idle.idleTimerDisabled.contains(id) && registry[id]?.isRegistered == true
            && registry[id]?.state == .active
        idle.idleGeneration[id, default: 0] += 1
        if !wanted {
            if let descriptor = idle.idleInhibitors.removeValue(forKey: id) {
                descriptor.close()
                logger.info("\(id): idle inhibitor released", metadata: .app(id))
            }
            if let cookie = idle.screenSaverCookies.removeValue(forKey: id) { releaseScreenSaverInhibit(cookie) }
            if registry[id]?.isRegistered != true { idle.idleTimerDisabled.remove(id) }
            return
        }
        let generation = idle.idleGeneration[id, default: 0]
        if idle.screenSaverCookies[id] == nil { takeScreenSaverInhibit(for: id, generation: generation) }
        guard idle.idleInhibitors[id] == nil else { return }
        Task { @MainActor in
            do {
                let descriptor = try await takeIdleInhibitor(for: id)
                // The wish ended (or changed and changed back) while Inhibit was out: a later
                // update took over; this fd is not needed. Nor after the daemon stopped.
                guard phase == .running, idle.idleGeneration[id] == generation, idle.idleInhibitors[id] == nil
                else {
                    descriptor.close()
                    return
                }
                idle.idleInhibitors[id] = descriptor
                logger.info("\(id): idle inhibitor held", metadata: .app(id))
            } catch {
                logger.warning("\(id): cannot inhibit idle: \(error)", metadata: .app(id))
            }
        }
    }

    /// The desktop's own idle inhibition (``IdleInhibitor/takeScreenSaver(on:who:why:)``), beside logind's.
    private func takeScreenSaverInhibit(for id: String, generation: Int) {
        guard let connection else { return }
        Task { @MainActor in
            do {
                guard
                    let cookie = try await IdleInhibitor.takeScreenSaver(
                        on: connection, who: registry[id]?.manifest?.name ?? id, why: "\(id) disabled the idle timer")
                else { return }
                guard phase == .running, idle.idleGeneration[id] == generation, idle.screenSaverCookies[id] == nil
                else {
                    releaseScreenSaverInhibit(cookie)
                    return
                }
                idle.screenSaverCookies[id] = cookie
                logger.info("\(id): screensaver inhibited (cookie \(cookie))", metadata: .app(id))
            } catch {
                logger.warning("\(id): cannot inhibit the screensaver: \(error)", metadata: .app(id))
            }
        }
    }

    func releaseScreenSaverInhibit(_ cookie: UInt32) {
        guard let connection else { return }
        IdleInhibitor.releaseScreenSaver(cookie, on: connection, logger: logger)
    }

    private func takeIdleInhibitor(for id: String) async throws -> BusFileDescriptor {
        // One connection, opened by the first request; the others wait for the same one.
        if idle.systemBus == nil || idle.systemBus?.isOpen == false, idle.systemBusOpening == nil {
            guard let loop else { throw DaemonError.launchFailed(id, "lifecycled is stopping") }
            let address = configuration.systemBus
            idle.systemBusOpening = Task { @MainActor in
                try await BusConnection(address, loop: loop, description: "lifecycled-inhibit", timeout: .seconds(5))
            }
        }
        if let opening = idle.systemBusOpening {
            defer { idle.systemBusOpening = nil }
            let opened = try await opening.value
            if idle.systemBus !== opened {
                idle.systemBus?.close()
                idle.systemBus = opened
            }
        }
        guard phase == .running, let bus = idle.systemBus else {
            throw DaemonError.launchFailed(id, "lifecycled is stopping")
        }
        return try await IdleInhibitor.takeLogind(
            on: bus, who: id, why: "\(id) disabled the idle timer while active")
    }
}
