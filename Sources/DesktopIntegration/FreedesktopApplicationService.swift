import AppLifecycle
import FoundationEssentials
import Glibc
import LifecycledProtocol
import Logging
import SystemdBus

/// `org.freedesktop.Application` (Desktop Entry specification, "D-Bus Activation") for one app:
/// it owns the app's id on the session bus and hands launchers' calls to the app.
///
/// - `Activate(platform_data)` → ``activate``.
/// - `Open(uris, platform_data)` → `application(_:open:options:)` for each URL, with the caller's
///   executable as the source application (and the app comes to the foreground, as for any URL).
/// - `ActivateAction(name, parameter, platform_data)` → the quick action of that type: a dynamic
///   one (`Application.shortcutItems`) or one of ``staticShortcutItems``.
///
/// Only callers of the app's own user are answered; others get `AccessDenied`. Each accepted
/// call also runs ``didBringForward`` (lifecycled's host reports the app as foreground there).
@MainActor
package final class FreedesktopApplicationService {
    /// The interface.
    package static let interface = "org.freedesktop.Application"

    /// The object path the specification gives an id: `/` + the id with `.` → `/` and `-` → `_`.
    package static func objectPath(for id: String) -> String {
        "/" + id.replacing(".", with: "/").replacing("-", with: "_")
    }

    /// The app's id (its bus name).
    package let id: String
    /// The quick actions of the app's manifest.
    package var staticShortcutItems: [ShortcutItem] = []
    /// What `Activate` does (default: the app comes to the foreground).
    package var activate: @MainActor (Application) -> Void = { $0.handle(.foreground(true)) }
    /// Called after an accepted `Open` or `ActivateAction`.
    package var didBringForward: @MainActor () -> Void = {}

    /// The first call of a D-Bus activation, folded into launch options instead of run as an
    /// event (see ``takeLaunchCall(timeout:)``).
    package enum LaunchCall: Sendable, Equatable {
        /// `Activate`: a foreground launch.
        case activate(token: String?)
        /// `Open`: a launch to open this URL, asked by this executable.
        case open(URL, source: String?, token: String?)
        /// `ActivateAction`: a launch for this quick action.
        case action(ShortcutItem, token: String?)
    }

    private weak var application: Application?
    /// While set, the next accepted call is handed here rather than to the app.
    private var launchCallWaiter: CheckedContinuation<LaunchCall?, Never>?
    private var launchCallWindowOpen = false
    private var launchCallTaken: LaunchCall??
    private var object: ExportedObject?
    private var callsTask: Task<Void, Never>?
    private let logger: Logger

    /// Creates the service; nothing is exported until ``start(on:)``.
    ///
    /// - Parameters:
    ///   - id: The app's id.
    ///   - application: The app the calls go to.
    ///   - logger: Where its diagnostics go, at `info` or below.
    package init(id: String, application: Application, logger: Logger) {
        self.logger = logger
        self.id = id
        self.application = application
    }

    /// Exports the interface and requests the id (set-up).
    ///
    /// - Returns: Whether this process owns the id now (another instance may own it).
    @discardableResult
    package func start(on connection: BusConnection) async -> Bool {
        let methods = Self.methods
        var interface = ExportedInterface(name: Self.interface, methods: methods.map(\.declaration))
        interface.callDelivery = .inOrder
        interface.maximumPendingCalls = 64
        do {
            let object = try await connection.export(interface, at: Self.objectPath(for: id))
            self.object = object
            callsTask = object.serve(self, methods: methods, order: .oneAtATime, whenGone: "the app is stopping") {
                service, call throws(BusError) in try service.admit(call)
            }
            let reply = try await connection.requestName(id, flags: [.doNotQueue])
            if reply == .primaryOwner || reply == .alreadyOwner {
                logger.info("owns \(id) on the session bus (org.freedesktop.Application)")
                return true
            }
            let owner = try? await connection.nameOwner(id)
            logger.info(
                "\(id) is owned by \(owner ?? "another connection") already: launchers reach that instance, not this one"
            )
        } catch {
            logger.info("cannot serve org.freedesktop.Application as \(id): \(error)")
        }
        return false
    }

    /// Waits (at most `timeout`) for the call a D-Bus activation delivers once this process owns the
    /// id, and returns it instead of running it, so the app launches for it: a quick action in the
    /// launch options (where `false` from `didFinishLaunching` suppresses it), the URL to open, or
    /// a foreground launch. Later calls go to the app as usual.
    ///
    /// The window is 5 s: a D-Bus activation always has its call on the way, so waiting costs only
    /// a launch whose call was lost, and a loaded machine may take more than a second to deliver it.
    ///
    /// - Returns: The call, or `nil` when none came in time (the activation had no call, or another
    ///   instance owns the id).
    package func takeLaunchCall(timeout: Duration = .seconds(5)) async -> LaunchCall? {
        if let taken = launchCallTaken { return taken }
        launchCallWindowOpen = true
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: timeout)
            self?.closeLaunchWindow(with: nil)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { launchCallWaiter = $0 }
    }

    /// Ends the launch window without a call (another launch call came first): later calls go
    /// to the app.
    package func closeLaunchWindow() { closeLaunchWindow(with: nil) }

    private func closeLaunchWindow(with call: LaunchCall?) {
        guard launchCallWindowOpen else { return }
        launchCallWindowOpen = false
        launchCallTaken = .some(call)
        launchCallWaiter?.resume(returning: call)
        launchCallWaiter = nil
    }

    /// Unexports the interface (the name goes with the connection).
    package func stop() {
        callsTask?.cancel()
        callsTask = nil
        object?.unexport()
        object = nil
    }

    /// The interface's methods, typed: `Activate(a{sv})`, `Open(as, a{sv})`, `ActivateAction(s, av, a{sv})`.
    private static let methods: [ExportedMethod<FreedesktopApplicationService>] = [
        ExportedMethod(
            "Activate", arguments: [String: BusValue].self, argumentNames: ["platform_data"], results: ()
        ) { service, _, platformData in
            service.activateCall(token: activationToken(in: platformData))
        },
        ExportedMethod(
            "Open", arguments: ([String].self, [String: BusValue].self), argumentNames: ["uris", "platform_data"],
            results: ()
        ) { service, call, uris, platformData in
            try service.openCall(uris, call, token: activationToken(in: platformData))
        },
        ExportedMethod(
            "ActivateAction", arguments: (String.self, [BusValue].self, [String: BusValue].self),
            argumentNames: ["action_name", "parameter", "platform_data"], results: ()
        ) { service, _, name, _, platformData in
            try service.activateAction(name, token: activationToken(in: platformData))
        },
    ]

    /// Every call's first check: only this user's processes, and only once the app is there.
    private func admit(_ call: BusMethodCall) throws(BusError) {
        guard let uid = call.credentials?.uid, uid == getuid() else {
            throw BusError(
                name: "org.freedesktop.DBus.Error.AccessDenied",
                message: "only processes of uid \(getuid()) may call \(call.member)")
        }
        guard application != nil else {
            throw BusError(name: BusError.Name.failed, message: "the app is not running yet")
        }
    }

    /// `Activate`: the launch call, while the launch window is open; otherwise ``activate``, then nothing more.
    private func activateCall(token: String?) {
        guard let application else { return }
        if launchCallWindowOpen {
            closeLaunchWindow(with: .activate(token: token))
            return
        }
        activate(application)
    }

    /// `Open`: each URI must be a URL with a scheme (`InvalidArgs` otherwise); the first is the launch
    /// call while the launch window is open, the others go to the app.
    private func openCall(_ uris: [String], _ call: BusMethodCall, token: String?) throws(BusError) {
        guard let application else { return }
        let source = call.credentials?.pid.flatMap { CallerExecutable.name(of: pid_t($0)) }
        var urls: [URL] = []
        for text in uris {
            guard text.utf8.count <= LifecycledProtocol.Limits.urlLength, let url = URL(string: text), url.scheme != nil
            else {
                throw BusError(
                    name: BusError.Name.invalidArgs, message: "'\(text.prefix(80))' is not a URL with a scheme")
            }
            urls.append(url)
        }
        if launchCallWindowOpen, let first = urls.first {
            closeLaunchWindow(with: .open(first, source: source, token: token))
            urls.removeFirst()
        }
        for url in urls { application.handle(.openURL(url, OpenURLOptions(sourceApplication: source))) }
        didBringForward()
    }

    /// `ActivateAction`: one of the app's quick actions (`InvalidArgs` for another name).
    private func activateAction(_ name: String, token: String?) throws(BusError) {
        guard let application else { return }
        let items = (application.shortcutItems ?? []) + staticShortcutItems
        guard let item = items.first(where: { $0.type == name }) else {
            throw BusError(
                name: BusError.Name.invalidArgs,
                message: "no action '\(name)' (known: \(items.map(\.type).joined(separator: ", ")))")
        }
        if launchCallWindowOpen {
            closeLaunchWindow(with: .action(item, token: token))
            return
        }
        application.handle(.shortcutItem(item))
        didBringForward()
    }

    /// `activation-token` (or the X11 `desktop-startup-id`) of a call's `platform_data`.
    static func activationToken(in platformData: [String: BusValue]) -> String? {
        for key in ["activation-token", "desktop-startup-id"] {
            if let token = platformData[key]?.stringValue, !token.isEmpty { return token }
        }
        return nil
    }
}
