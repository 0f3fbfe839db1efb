import AppLifecycle
import AppLifecycleSystemd
import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus

/// The compositor decides the foreground: the window source's facts become each app's place
/// (``ForegroundPolicy``), per app, in the seeds' order.
extension LifecycleDaemon {
    /// Starts the session's window source (``LifecycleSettings/windowSource``): with `auto`,
    /// Wayland when `$WAYLAND_DISPLAY` is set, else an EWMH window manager when `$DISPLAY` is. On
    /// Wayland, wlroots' foreign-toplevel manager when the compositor offers it, else KDE Plasma's
    /// window management (KWin offers it only to a program with a desktop file: the notice says
    /// which to install). No source (none configured, no display, a compositor without the
    /// protocol, a window manager that is not EWMH-compliant) is logged once: apps then move only
    /// with launches, banners, `Activate` and the session.
    ///
    /// A source that has not listed its windows within 5 s (a stopped or hung display server) is
    /// stopped and counts as none.
    func startWindowSource(loop: EventLoop) async {
        let environment = configuration.windowEnvironment ?? ProcessInfo.processInfo.environment
        let wayland = environment["WAYLAND_DISPLAY"].map { !$0.isEmpty } ?? false
        let x11 = environment["DISPLAY"].map { !$0.isEmpty } ?? false
        var kinds: [LifecycleSettings.WindowSource] = []
        switch lifecycleSettings.windowSource {
        case .off: return
        case .wayland, .x11: kinds = [lifecycleSettings.windowSource]
        case .auto: kinds = (wayland ? [.wayland] : []) + (x11 ? [.x11] : [])
        }
        guard !kinds.isEmpty else {
            logger.info("windows: no display server in the environment; apps move with launches, banners and Activate")
            return
        }
        let candidates = kinds.flatMap { kind in
            makeWindowSources(kind, loop: loop, environment: environment).map { (kind, $0) }
        }
        for (index, (kind, source)) in candidates.enumerated() {
            guard phase == .running else { return }
            // Known before it starts, so that a shutdown meanwhile stops it (and ends the wait).
            windowSource = source
            let deadline = Task {
                try await Task.sleep(for: .seconds(5))
                source.stop()
            }
            do {
                try await source.start()
                deadline.cancel()
            } catch {
                deadline.cancel()
                if windowSource === source { windowSource = nil }
                // A compositor without the wlroots manager is asked for Plasma's next: that it lacks
                // the first is no news unless it lacks the second too.
                let another = index + 1 < candidates.count && candidates[index + 1].0 == kind
                if another, let error = error as? HostSourceError, error.code == .unsupported {
                    logger.debug("windows: \(error)")
                } else {
                    logger.notice("windows: no \(kind.rawValue) window source: \(error)")
                }
                continue
            }
            guard phase == .running else {
                source.stop()
                return
            }
            let mode = lifecycleSettings.foregroundMode.rawValue
            logger.info(
                "windows: following the \(kind.rawValue) display server with \(type(of: source)) (\(mode) mode)")
            windowSource = source
            let updates = source.updates
            windowTask = Task { @MainActor [weak self] in
                for await update in updates {
                    guard let self, self.phase == .running else { return }
                    self.enqueueWindows(update)
                }
            }
            return
        }
    }

    /// The sources of a kind, in the order they are tried (the first that starts is used).
    private func makeWindowSources(
        _ kind: LifecycleSettings.WindowSource, loop: EventLoop, environment: [String: String]
    ) -> [any WindowSource] {
        switch kind {
        case .x11: return [EWMHWindowSource(display: environment["DISPLAY"], loop: loop, logger: logger)]
        case .wayland:
            do {
                let socket = try ForeignToplevelWindowSource.socketPath(environment: environment)
                return [
                    ForeignToplevelWindowSource(socketPath: socket, loop: loop, logger: logger),
                    PlasmaWindowSource(socketPath: socket, loop: loop, logger: logger),
                ]
            } catch {
                logger.notice("windows: no wayland window source: \(error)")
                return []
            }
        case .auto, .off: return []
        }
    }

    /// Applies `lifecycled.conf`'s `[lifecycle]` section over the configuration (at start, before
    /// the interface is served).
    func applyLifecycleSettings(_ file: ConfigurationFile) {
        guard let path = file.path, case .success(let sections) = file.sections, let section = sections["lifecycle"]
        else { return }
        do {
            lifecycleSettings = try LifecycleSettings(section: section, defaults: lifecycleSettings, path: path)
        } catch {
            logger.error("windows: \(error); the [lifecycle] settings are not applied")
        }
    }

    /// Stops the window source; the apps keep their places.
    func stopWindowSource() {
        windowStart?.cancel()
        windowStart = nil
        windowTask?.cancel()
        windowTask = nil
        windowSource?.stop()
        windowSource = nil
        windowChain?.cancel()
    }

    /// A window set (or the display server's absence) as the source reported it, applied in
    /// arrival order. A set in which no window has the focus settles for
    /// ``DaemonConfiguration/windowSettleDelay`` first and is dropped if another came meanwhile:
    /// window managers clear the focus before they give it, and an app must not resign active and
    /// become active again for that. A set that shows a new window without the focus settles for
    /// ``DaemonConfiguration/newWindowSettleDelay``: KWin describes a new window before it activates
    /// it, and a single-foreground session must not send the app just launched to the background
    /// meanwhile. A later set ends either wait at once.
    ///
    /// - Parameters:
    ///   - update: What the source reported.
    @discardableResult
    func enqueueWindows(_ update: WindowSourceUpdate) -> Task<Void, Never> {
        windowGeneration += 1
        let generation = windowGeneration
        var delay: Duration = .zero
        if case .windows(let windows) = update {
            let known = windowIDsSeen
            windowIDsSeen = Set(windows.map(\.id))
            if !windows.contains(where: { $0.isActivated && !$0.isMinimized }) {
                delay = configuration.windowSettleDelay
            }
            if windows.contains(where: { !known.contains($0.id) && !$0.isActivated && !$0.isMinimized }) {
                delay = max(delay, configuration.newWindowSettleDelay)
            }
        }
        let settles = delay > .zero
        let previous = windowChain
        previous?.cancel()
        let task = Task { @MainActor [weak self] in
            if settles { try? await Task.sleep(for: delay) }
            await previous?.value
            guard let self, !settles || generation == self.windowGeneration else { return }
            await self.applyWindows(update)
        }
        windowChain = task
        return task
    }

    /// Hands a window set to the daemon and waits until it is applied (or superseded).
    ///
    /// - Parameters:
    ///   - update: What a window source reported.
    func windowsChanged(_ update: WindowSourceUpdate) async {
        await enqueueWindows(update).value
    }

    /// Applies a window set: each app's windows are matched (``WindowOwnership``); an app whose
    /// ``AppWindowState`` changed is placed again. Windows of programs lifecycled does not host are
    /// ignored. The display server's absence keeps every place.
    private func applyWindows(_ update: WindowSourceUpdate) async {
        guard phase == .running else { return }
        guard case .windows(let windows) = update else {
            if case .unavailable(let reason) = update {
                logger.info("windows: the display server is gone (\(reason)); apps keep their places")
            }
            return
        }
        let hosted = registry.all.filter { $0.isRunning || $0.isRegistered }
        let ownership = WindowOwnership(
            candidates: hosted.map { app in
                WindowOwnership.Candidate(
                    id: app.id, processID: app.pid == 0 ? nil : pid_t(app.pid), cgroupDirectory: app.cgroupDirectory,
                    windowClasses: app.manifest?.startupWMClass.map { [$0] } ?? [])
            }, cgroup2MountPoint: cgroup2MountPoint)
        let owned = ownership.windowsByApp(windows)
        var changed: [(id: String, state: AppWindowState)] = []
        for app in hosted {
            let mine = owned[app.id] ?? []
            app.windows = mine
            let state = AppWindowState(windows: mine, previous: app.windowState)
            guard state != app.windowState else { continue }
            logger.info("\(app.id): windows \(app.windowState.rawValue) -> \(state.rawValue)", metadata: .app(app.id))
            app.windowState = state
            emit(
                LifecycledProtocol.Signal.windowsChanged.name,
                [
                    .string(app.id), .string(state.rawValue),
                    .array(elementSignature: "s", mine.map { .string($0.description) }),
                ])
            changed.append((app.id, state))
        }
        // The app losing the focus first, then the one taking it: resign active before become active.
        let ordered = changed.sorted { ($0.state == .activated ? 1 : 0) < ($1.state == .activated ? 1 : 0) }
        for (id, state) in ordered {
            await place(
                id, ForegroundPolicy(mode: lifecycleSettings.foregroundMode).placement(for: state), because: state)
        }
        if !changed.isEmpty { publishApps() }
    }

    /// Moves one app to where its windows put it.
    ///
    /// To the foreground: a pending freeze is dropped, a frozen program is thawed, and an app of
    /// AppLifecycle hears `focused` first, then `foreground(true)` (which resumes it), so a visible
    /// app without the focus never becomes active on the way. To the background: `foreground(false)`;
    /// the app is frozen when it reports `suspended` (its background time and tasks ended), or, for a
    /// program that does not adopt AppLifecycle, after ``LifecycleSettings/freezeDelay``.
    ///
    /// - Parameters:
    ///   - placement: Where it belongs; `nil` leaves it as it is (no window: a service).
    ///   - state: The window fact behind it, for `lifecyclectl apps`.
    func place(_ id: String, _ placement: ForegroundPolicy.Placement?, because state: AppWindowState) async {
        guard let placement, let app = registry[id] else { return }
        let adopts = app.manifest?.adoptsLifecycle ?? true
        if placement.foreground {
            app.cancelPendingFreeze()
            app.foreground = true
            app.placementReason = state.rawValue
            if adopts {
                await send(.hostEvent(.focused(placement.focused)), to: id)
                await send(.hostEvent(.foreground(true)), to: id)
            } else {
                await resume(id)
            }
            return
        }
        app.foreground = false
        app.placementReason = "\(state.rawValue): background"
        if adopts {
            await send(.hostEvent(.foreground(false)), to: id)
            return
        }
        guard app.isRunning, app.pendingFreeze == nil else { return }
        let delay = lifecycleSettings.freezeDelay
        app.pendingFreeze = Task { @MainActor [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            // Cancelled by a return to the foreground, an exit or a relaunch, even after its sleep.
            guard !Task.isCancelled, let self, let app = self.registry[id], !app.foreground else { return }
            app.pendingFreeze = nil
            self.freezeProgram(id)
        }
    }

    /// Thaws an app now, whatever its windows say: a freeze due later is dropped and a frozen process
    /// resumed (a plain program brought to the foreground by a launcher, an app just exempted).
    func thaw(_ id: String) async {
        registry[id]?.cancelPendingFreeze()
        await resume(id)
    }

    /// Why an app in the background is never frozen, or `nil`: a background mode that keeps code
    /// running in UIKit (`audio`, `voip`, `location`; `fetch` and `remote-notification` only wake
    /// a frozen app), or the user's exemption (`lifecyclectl exempt`).
    func freezeExemption(_ app: HostedApp) -> String? {
        if userExemptions.contains(app.id) { return "exempted by the user" }
        let running = (app.manifest?.backgroundModes ?? []).intersection([.audio, .voip, .location])
        guard !running.isEmpty else { return nil }
        return "background mode \(running.sorted().map(\.rawValue).joined(separator: ", "))"
    }

    /// Freezes a program that does not adopt AppLifecycle, its windows in the background.
    private func freezeProgram(_ id: String) {
        guard let app = registry[id] else { return }
        if let exemption = freezeExemption(app) {
            logger.info("\(id) stays running in the background: \(exemption)", metadata: .app(id))
            return
        }
        let requested = app.stopProcess { result in
            Task { @MainActor [weak self] in
                if case .failure(let error) = result {
                    self?.logger.info("\(id): not frozen: \(error)", metadata: .app(id))
                }
                self?.publishApps()
                self?.checkSleepRelease()
            }
        }
        // Already stopped, or terminating: nothing was asked, nothing to say.
        guard requested else { return }
        app.placementReason = "\(app.windowState.rawValue): frozen"
        logger.info(
            "\(id): frozen (its windows left the foreground \(lifecycleSettings.freezeDelay) ago)", metadata: .app(id))
    }
}
