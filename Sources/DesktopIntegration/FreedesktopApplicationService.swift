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
        var interface = ExportedInterface(
            name: Self.interface,
            methods: [
                .init("Activate", inSignature: "a{sv}"), .init("Open", inSignature: "asa{sv}"),
                .init("ActivateAction", inSignature: "sava{sv}"),
            ])
        interface.callDelivery = .inOrder
        interface.maximumPendingCalls = 64
        do {
            let object = try await connection.export(interface, at: Self.objectPath(for: id))
            self.object = object
            callsTask = object.serve(self, order: .oneAtATime, whenGone: "the app is stopping") { service, request in
                try service.answer(request).get()
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
    /// - Returns: The call, or `nil` when none came in time (the activation had no call, or another
    ///   instance owns the id).
    package func takeLaunchCall(timeout: Duration = .seconds(1)) async -> LaunchCall? {
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

    /// Answers one call, on the main actor.
    func answer(_ call: BusMethodCall) -> Result<[BusValue], any Error> {
        guard let uid = call.credentials?.uid, uid == getuid() else {
            return .failure(
                BusError(
                    name: "org.freedesktop.DBus.Error.AccessDenied",
                    message: "only processes of uid \(getuid()) may call \(call.member)"))
        }
        guard let application else {
            return .failure(BusError(name: BusError.Name.failed, message: "the app is not running yet"))
        }
        let token = Self.activationToken(in: call.arguments.last)
        switch call.member {
        case "Activate":
            if launchCallWindowOpen {
                closeLaunchWindow(with: .activate(token: token))
                return .success([])
            }
            activate(application)
        case "Open":
            guard case .array(_, let values) = call.arguments[0] else { break }
            let source = call.credentials?.pid.flatMap { CallerExecutable.name(of: pid_t($0)) }
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
            if launchCallWindowOpen, let first = urls.first {
                closeLaunchWindow(with: .open(first, source: source, token: token))
                urls.removeFirst()
            }
            for url in urls { application.handle(.openURL(url, OpenURLOptions(sourceApplication: source))) }
            didBringForward()
        case "ActivateAction":
            let name = call.arguments[0].stringValue ?? ""
            let items = (application.shortcutItems ?? []) + staticShortcutItems
            guard let item = items.first(where: { $0.type == name }) else {
                return .failure(
                    BusError(
                        name: BusError.Name.invalidArgs,
                        message: "no action '\(name)' (known: \(items.map(\.type).joined(separator: ", ")))"))
            }
            if launchCallWindowOpen {
                closeLaunchWindow(with: .action(item, token: token))
                return .success([])
            }
            application.handle(.shortcutItem(item))
            didBringForward()
        default:
            return .failure(BusError(name: BusError.Name.unknownMethod, message: "no method \(call.member)"))
        }
        return .success([])
    }

    /// `activation-token` (or the X11 `desktop-startup-id`) of a call's `platform_data`.
    static func activationToken(in platformData: BusValue?) -> String? {
        guard case .dictionary(_, _, let entries) = platformData else { return nil }
        for entry in entries where ["activation-token", "desktop-startup-id"].contains(entry.key.stringValue) {
            if let token = entry.value.unwrapped.stringValue, !token.isEmpty { return token }
        }
        return nil
    }
}
