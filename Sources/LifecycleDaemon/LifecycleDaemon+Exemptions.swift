import AppLifecycle
import DurableState
import FoundationEssentials
import LifecycledProtocol
import SystemdBus

/// The user's lifecycle exceptions (`lifecyclectl exempt APP`): an exempt app goes to the
/// background with its windows but is never frozen. Lomiri's users most want this and cannot
/// reach it; here it is a method, persisted in the state directory (`freeze-exemptions.json`,
/// a sorted JSON array of app ids) so it survives restarts.
extension LifecycleDaemon {
    /// The most apps the user may exempt (bounds the file a caller grows).
    static let maximumExemptions = 256

    /// The file of the user's exemptions.
    var exemptionsURL: URL { URL(fileURLWithPath: stateDirectory).appendingPathComponent("freeze-exemptions.json") }

    /// Reads the user's exemptions at start; a file that cannot be read is logged and set aside.
    func loadExemptions() {
        let data: Data
        do {
            data = try AtomicFile.read(from: exemptionsURL, limit: 1 << 20)
        } catch {
            if error.code != .notFound {
                logger.error("cannot read \(exemptionsURL.path): \(error); no app is exempted until it can be read")
            }
            return
        }
        guard let ids = try? JSONDecoder().decode([String].self, from: data) else {
            logger.error(
                "\(exemptionsURL.path) is not a JSON array of app ids; no app is exempted until it is set again")
            return
        }
        userExemptions = Set(ids.filter(LifecycledProtocol.isValidAppID).prefix(Self.maximumExemptions))
        savedExemptions = userExemptions
    }

    /// `SetFreezeExempt(app_id, exempt)`: records the choice on disk, then applies it: an exempt app
    /// that is frozen is thawed (it stays in the background); one no longer exempt is frozen if it
    /// is in the background and suspended (or, for a plain program, after the freeze delay).
    ///
    /// - Throws: `UnknownApp` for an id no manifest or registration names, `LimitsExceeded` beyond
    ///   ``maximumExemptions``, `Failed` when the choice cannot be written (it is not applied then).
    func setFreezeExempt(_ id: String, _ exempt: Bool) async throws(BusError) {
        guard store.manifest(id: id) != nil || registry[id] != nil else { throw DaemonError.unknownApp(id) }
        guard userExemptions.contains(id) != exempt else { return }
        if exempt, userExemptions.count >= Self.maximumExemptions {
            throw BusError(
                name: BusError.Name.limitsExceeded,
                message: "\(Self.maximumExemptions) apps are exempted already; unexempt one first")
        }
        if exempt { userExemptions.insert(id) } else { userExemptions.remove(id) }
        // The set as it is when the write happens (the writer takes the last caller's snapshot).
        let saved = await exemptionsFile.persist { [weak self] in
            (try? JSONEncoder().encode((self?.userExemptions ?? []).sorted())) ?? Data("[]".utf8)
        }
        guard saved else {
            // Memory goes back to what the disk last held, so the two never disagree after a restart.
            userExemptions = savedExemptions
            throw BusError(
                name: BusError.Name.failed,
                message: "cannot write \(exemptionsURL.path); free space on that disk and try again")
        }
        savedExemptions = userExemptions
        logger.info("\(id): \(exempt ? "exempted from" : "no longer exempt from") freezing", metadata: .app(id))
        guard let app = registry[id], app.isRunning else { return }
        if exempt {
            await thaw(id)
        } else if !app.foreground {
            if app.manifest?.adoptsLifecycle ?? true {
                if app.state == .suspended { suspendProcess(id) }
            } else {
                await place(id, ForegroundPolicy.Placement(foreground: false, focused: false), because: app.windowState)
            }
        }
        publishApps()
    }

    /// `DescribeApps`: every app with its state, pid, windows, why it is where it is, and whether
    /// it is frozen or exempt from freezing (`lifecyclectl apps`, `status`).
    func describeApps() -> BusValue {
        .array(
            elementSignature: "a{sv}",
            registry.all.map { app in
                var info: UserInfo = [
                    "id": .string(app.id), "name": .string(app.manifest?.name ?? ""),
                    "state": .string(app.state.rawValue),
                    "pid": .int(Int64(app.pid)), "window-state": .string(app.windowState.rawValue),
                    "windows": .array(app.windows.map { .string($0.description) }),
                    "reason": .string(app.placementReason),
                    "frozen": .bool(app.process.map { $0.exitStatus == nil && $0.isSuspended } ?? false),
                    "adopts-lifecycle": .bool(app.manifest?.adoptsLifecycle ?? true),
                ]
                if let exemption = freezeExemption(app) { info["exempt"] = .string(exemption) }
                if let cgroup = app.cgroupDirectory { info["cgroup"] = .string(cgroup) }
                for (key, value) in fetchDescription(app.id).values { info[key] = value }
                return UserInfoBusCodec.encode(info)
            })
    }
}
