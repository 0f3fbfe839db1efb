import AppLifecycle
import FoundationEssentials
import Glibc
import SystemdBus

/// `org.freedesktop.Application` (Desktop Entry specification, "D-Bus Activation"): the app owns
/// its id on the session bus and takes launchers' calls.
///
/// - `Activate(platform_data)` brings the app to the foreground (through lifecycled when hosted,
///   so the daemon's view agrees).
/// - `Open(uris, platform_data)` opens each URL in the app (`application(_:open:options:)`), with
///   the caller's executable as the source application.
/// - `ActivateAction(name, parameter, platform_data)` runs the quick action of that type: a
///   dynamic one (``AppLifecycle/Application/shortcutItems``) or a static one of the manifest.
///
/// Only callers of the app's own user are answered; others get `AccessDenied`.
extension LifecycledHost {
    /// The interface.
    static let applicationInterface = "org.freedesktop.Application"

    /// The object path the specification gives an id: `/` + the id with `.` → `/` and `-` → `_`.
    public static func applicationObjectPath(for id: String) -> String {
        "/" + id.replacing(".", with: "/").replacing("-", with: "_")
    }

    /// Exports the interface and requests the id as a bus name (set-up: called once from `prepare`).
    func exportApplicationInterface(on connection: BusConnection, id: String) async {
        var interface = ExportedInterface(
            name: Self.applicationInterface,
            methods: [
                .init("Activate", inSignature: "a{sv}"), .init("Open", inSignature: "asa{sv}"),
                .init("ActivateAction", inSignature: "sava{sv}"),
            ])
        interface.callDelivery = .inOrder
        interface.maximumPendingCalls = 64
        do {
            let object = try connection.export(interface, at: Self.applicationObjectPath(for: id))
            applicationObject = object
            let calls = object.incomingCalls
            applicationCallsTask = Task { @MainActor [weak self] in
                for await call in calls {
                    guard let self else {
                        call.reply(.failure(BusError(name: BusError.Name.failed, message: "the app is stopping")))
                        continue
                    }
                    call.reply(self.answerApplicationCall(call.request))
                }
            }
            let reply = try await connection.requestName(id, flags: [.doNotQueue])
            if reply == .primaryOwner || reply == .alreadyOwner {
                logger.info("owns \(id) on the session bus (org.freedesktop.Application)")
            } else {
                let owner = try? await connection.nameOwner(id)
                logger.notice(
                    "\(id) is owned by \(owner ?? "another connection") already: launchers reach that instance, not this one"
                )
            }
        } catch {
            logger.warning("cannot serve org.freedesktop.Application as \(id): \(error)")
        }
    }

    /// Answers one call, on the main actor.
    func answerApplicationCall(_ call: BusMethodCall) -> Result<[BusValue], any Error> {
        guard let uid = call.credentials?.uid, uid == getuid() else {
            return .failure(
                BusError(
                    name: "org.freedesktop.DBus.Error.AccessDenied",
                    message: "only processes of uid \(getuid()) may call \(call.member)"))
        }
        guard let application else {
            return .failure(BusError(name: BusError.Name.failed, message: "the app is not running yet"))
        }
        switch call.member {
        case "Activate":
            logActivationToken(call.arguments.first)
            foregroundThroughDaemon(application)
        case "Open":
            guard case .array(_, let values) = call.arguments[0] else { break }
            let source = call.credentials?.pid.flatMap { Self.executableName(of: pid_t($0)) }
            var urls: [URL] = []
            for value in values {
                guard let text = value.stringValue, text.utf8.count <= LifecycledProtocol.Limits.urlLength,
                    let url = URL(string: text), url.scheme != nil
                else {
                    return .failure(
                        BusError(name: BusError.Name.invalidArgs, message: "'\(value)' is not a URL with a scheme"))
                }
                urls.append(url)
            }
            logActivationToken(call.arguments[1])
            for url in urls { application.handle(.openURL(url, OpenURLOptions(sourceApplication: source))) }
            reportForeground()
        case "ActivateAction":
            let name = call.arguments[0].stringValue ?? ""
            let items = (application.shortcutItems ?? []) + staticShortcutItems
            guard let item = items.first(where: { $0.type == name }) else {
                return .failure(
                    BusError(
                        name: BusError.Name.invalidArgs,
                        message: "no action '\(name)' (known: \(items.map(\.type).joined(separator: ", ")))"))
            }
            logActivationToken(call.arguments[2])
            application.handle(.shortcutItem(item))
            reportForeground()
        default:
            return .failure(BusError(name: BusError.Name.unknownMethod, message: "no method \(call.member)"))
        }
        return .success([])
    }

    /// The app comes to the foreground: lifecycled is told (it sends `foreground(true)` back and
    /// its view stays right); without it, the app moves by itself.
    private func foregroundThroughDaemon(_ application: Application) {
        if status.isHosted {
            reportForeground()
        } else {
            application.handle(.foreground(true))
        }
    }

    /// `Launch(id, {})` to lifecycled, which marks the running app foreground.
    private func reportForeground() {
        guard let appID, status.isHosted else { return }
        outbound?.yield(
            .report(
                member: LifecycledProtocol.Method.launch,
                arguments: [.string(appID), UserInfoBusCodec.encode(UserInfo())]
            ))
    }

    private func logActivationToken(_ platformData: BusValue?) {
        guard let data = platformData, let token = try? UserInfoBusCodec.decodeUserInfo(data)["activation-token"]
        else { return }
        logger.debug("activation token \(token)")
    }

    /// The file name of a process's executable (`/proc/<pid>/exe`), or `nil`.
    static func executableName(of pid: pid_t) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return path.split(separator: "/").last.map(String.init)
    }
}
