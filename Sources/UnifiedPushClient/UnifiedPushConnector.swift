import AppLifecycle
import DurableState
import FoundationEssentials
import LifecycledProtocol
import Logging
import SystemdBus
import WebPush

/// The app's side of UnifiedPush on the session bus: `org.unifiedpush.Connector2` (and
/// `Connector1` for older distributors) at `/org/unifiedpush/Connector` under the app's own name.
///
/// - ``register()`` (the app's `registerForRemoteNotifications()`) registers with a distributor:
///   the one the app used before, else the first of ``preferredDistributors`` on the bus (owned or
///   activatable), else any `org.unifiedpush.Distributor.*`; none → `didFail…` with
///   `ApplicationError.Code.noPushDistributor`. A refusal maps its reason to an error code.
/// - The distributor's `NewEndpoint` becomes `didRegister…` with a
///   `RemoteNotificationDeviceToken` of the endpoint and the app's Web Push keys: when the app
///   asked in this run, and whenever the endpoint changes.
/// - `Message` is decrypted (RFC 8291, the keys in `remote-notifications.json` in the app's state
///   directory, mode 0600) and handed to ``deliver``: a JSON object is the payload; other bytes
///   arrive as `["message": text]` (or `.data` when not UTF-8).
/// - `Unregistered` clears the endpoint: `Application.isRegisteredForRemoteNotifications` is
///   `false` until the app registers again. An endpoint kept from an earlier run makes it `true`
///   from ``start(on:)`` on, as iOS keeps the registration across launches.
///
/// A connector that registered before registers again on every start, with the same token, as the
/// specification requires. Calls are accepted only from the current owner of the distributor's
/// name it registered with, and only for its own token; others get `AccessDenied` or are ignored.
@MainActor
package final class UnifiedPushConnector {
    /// `$LIFECYCLE_PUSH_VAPID_KEY`: the app server's VAPID public key (base64url), registered
    /// with the distributor so that its gateway accepts only pushes signed with it. Both hosts read it.
    package nonisolated static let vapidKeyEnvironment = "LIFECYCLE_PUSH_VAPID_KEY"

    /// The app's id: its bus name, and the `service` it registers.
    package let appID: String
    /// Where `remote-notifications.json` lives.
    package let stateDirectory: URL
    /// Distributors tried first when the app has no registration yet (lifecycled's by default).
    package var preferredDistributors: [String] = [UnifiedPush.lifecycledDistributorName]
    /// What a decrypted push does; by default `.remoteNotification(payload)` to the app.
    package var deliver: @MainActor (UserInfo) -> Void
    /// A VAPID public key (base64url) to register with, for distributors that require one.
    package var vapidPublicKey: String?

    private weak var application: Application?
    private var connection: BusConnection?
    private var state: PushRegistrationState?
    /// Where ``state`` is kept: written as a group commit, so no fsync runs on the main actor.
    private lazy var stateFile = GroupCommitFile(
        url: stateDirectory.appendingPathComponent(PushRegistrationState.fileName), logger: logger)
    private var distributorTracker: NameOwnerTracker?
    /// Whether the app asked for a registration and has not had its answer.
    private var answerPending = false
    /// The endpoint the distributor gave in this run.
    private var endpointThisRun: String?
    private var registering = false
    /// Why `remote-notifications.json` could not be read; while set, no new keys replace it.
    private var stateUnreadable: String?
    private var objects: [ExportedObject] = []
    private var callTasks: [Task<Void, Never>] = []
    /// The ids of the last pushes accepted: lifecycled acknowledges a push to a running app only
    /// once this connector answered its `Message`, so after a crash in between the broker sends it
    /// again, and it must not reach the app twice (see ``RecentMessageIDs`` for why in memory only).
    private var recentMessageIDs = RecentMessageIDs()
    /// The decryption keys of ``state``'s key material, made once rather than for every push
    /// (decoding them from base64url and making the P-256 key computes its public key: a scalar
    /// multiplication, nearly as costly as the push's own key agreement).
    private var decryptionKeys: (privateKey: String, authSecret: String, keys: WebPushKeys)?
    private var launchWindowOpen = false
    private var launchWaiter: CheckedContinuation<UserInfo?, Never>?
    private var launchTaken: UserInfo??
    private let logger: Logger

    /// Creates the connector; nothing is exported until ``start(on:)``.
    ///
    /// - Parameters:
    ///   - appID: The app's id, which its connection owns (or will own) on the session bus.
    ///   - stateDirectory: The app's state directory.
    ///   - application: The app that receives the registration's answers and the pushes.
    ///   - logger: Where its diagnostics go, at `info` or below.
    package init(
        appID: String, stateDirectory: URL, application: Application, logger: Logger
    ) {
        self.logger = logger
        self.appID = appID
        self.stateDirectory = stateDirectory
        self.application = application
        self.deliver = { [weak application] payload in application?.handle(.remoteNotification(payload)) }
    }

    /// Exports the connector interfaces, and registers again when the app registered in an
    /// earlier run. Call it before the app's connection requests the app's name, so a
    /// distributor that activates the app finds the connector there.
    package func start(on connection: BusConnection) async {
        self.connection = connection
        for (interface, methods) in [
            (
                UnifiedPush.connector2,
                [
                    ExportedInterface.Method("Message", inSignature: "a{sv}", outSignature: "a{sv}"),
                    .init("NewEndpoint", inSignature: "a{sv}"), .init("Unregistered", inSignature: "a{sv}"),
                ]
            ),
            (
                UnifiedPush.connector1,
                [
                    .init("Message", inSignature: "says"), .init("NewEndpoint", inSignature: "ss"),
                    .init("Unregistered", inSignature: "s"),
                ]
            ),
        ] {
            var exported = ExportedInterface(name: interface, methods: methods)
            exported.callDelivery = .inOrder
            exported.maximumPendingCalls = 64
            do {
                let object = try await connection.export(exported, at: UnifiedPush.connectorPath)
                objects.append(object)
                callTasks.append(
                    object.serve(self, order: .oneAtATime, whenGone: "the app is stopping") { connector, call in
                        await connector.answer(call)
                    })
            } catch {
                logger.info("cannot export \(interface): \(error); the app receives no pushes")
            }
        }
        do {
            state = try PushRegistrationState.load(from: stateDirectory)
        } catch {
            stateUnreadable = "\(error)"
            logger.info("\(error); remote notifications stay off until the file is fixed or removed")
        }
        if state?.endpoint != nil {
            // As iOS keeps it: registered from launch on, until the app unregisters or the
            // distributor says `Unregistered` (the re-registration below confirms the endpoint).
            application?.restoreRemoteNotificationRegistration()
        }
        if let distributor = state?.distributor {
            // Known before the name is requested: a distributor that activated the app for a push
            // calls as soon as the name has an owner, before the registration is answered.
            distributorTracker = try? await connection.trackNameOwner(distributor)
        }
    }

    /// Registers again, with the same token, when the app registered in an earlier run (the
    /// specification's "on every start"). Call it once the app's connection owns the app's name:
    /// a distributor accepts a registration only from the owner of its `service`.
    package func resumeRegistration() {
        guard state?.distributor != nil else { return }
        Task { @MainActor [weak self] in await self?.registerWithDistributor() }
    }

    /// Stops answering calls.
    package func stop() {
        callTasks.forEach { $0.cancel() }
        callTasks.removeAll()
        objects.forEach { $0.unexport() }
        objects.removeAll()
        closeLaunchWindow(with: nil)
    }

    /// Registers (the app's `registerForRemoteNotifications()`); the answer comes as a host event.
    package func register() {
        answerPending = true
        if let endpoint = endpointThisRun {
            answer(endpoint: endpoint)
            return
        }
        Task { @MainActor [weak self] in await self?.registerWithDistributor() }
    }

    /// Unregisters (the app's `unregisterForRemoteNotifications()`): the distributor drops the
    /// endpoint, and the next registration gets a new token and new keys.
    package func unregister() {
        answerPending = false
        endpointThisRun = nil
        guard let state else { return }
        self.state = nil
        // Through the writer, after any write already on its way: the registration cannot come back.
        Task { @MainActor in await self.saveState() }
        guard let connection, let distributor = state.distributor else { return }
        let logger = self.logger
        Task {
            do {
                _ = try await connection.call(
                    destination: distributor, path: UnifiedPush.distributorPath, interface: UnifiedPush.distributor2,
                    member: "Unregister", arguments: [.vardict(["token": .string(state.token)])])
            } catch let error as BusError where Self.isMissingMethod(error) {
                _ = try? await connection.call(
                    destination: distributor, path: UnifiedPush.distributorPath, interface: UnifiedPush.distributor1,
                    member: "Unregister", arguments: [.string(state.token)])
            } catch {
                logger.info("Unregister at \(distributor) failed: \(error)")
            }
        }
    }

    /// Waits (at most `timeout`) for the first push of a D-Bus activation and returns its payload
    /// instead of delivering it, so the app launches for it (in the background, with the payload
    /// in `UIApplicationLaunchOptionsRemoteNotificationKey`).
    ///
    /// 5 s: a D-Bus activation always has a call on its way (here lifecycled's `Message`, sent
    /// once the app owns its name), so the window only costs a launch whose call was lost; with
    /// 1 s a loaded machine (CI's two cores) let the push miss it and arrive after the launch.
    package func takeLaunchMessage(timeout: Duration = .seconds(5)) async -> UserInfo? {
        if let taken = launchTaken { return taken }
        launchWindowOpen = true
        let guardTask = Task { @MainActor [weak self] in
            try? await Task.sleep(for: timeout)
            self?.closeLaunchWindow(with: nil)
        }
        defer { guardTask.cancel() }
        return await withCheckedContinuation { launchWaiter = $0 }
    }

    /// Ends the launch window (another launch call came first, or the window timed out).
    package func closeLaunchWindow() { closeLaunchWindow(with: nil) }

    private func closeLaunchWindow(with payload: UserInfo?) {
        guard launchWindowOpen else { return }
        launchWindowOpen = false
        launchTaken = .some(payload)
        launchWaiter?.resume(returning: payload)
        launchWaiter = nil
    }

    // MARK: Registering

    private func registerWithDistributor() async {
        guard let connection, !registering else { return }
        registering = true
        defer { registering = false }
        if let stateUnreadable {
            fail(ApplicationError(.registrationFailed, "the push keys are unreadable (\(stateUnreadable))"))
            return
        }
        var state: PushRegistrationState
        if let existing = self.state {
            state = existing
        } else {
            state = .generate()
            self.state = state
            let saved = await saveState()
            // Unregistered while the keys were written: that removal wins.
            guard self.state?.token == state.token else { return }
            guard saved else {
                self.state = nil
                fail(
                    ApplicationError(
                        .registrationFailed,
                        "cannot store the push keys in \(stateDirectory.path): free space there or fix its permissions, then register again"
                    ))
                return
            }
        }
        guard let distributor = await chooseDistributor(on: connection, previous: state.distributor) else {
            fail(
                ApplicationError(
                    .noPushDistributor,
                    "no UnifiedPush distributor on the session bus: run lifecycled with [broker] and [push] in lifecycled.conf (see lifecycled.conf(5)), or install another distributor, then register again"
                ))
            return
        }
        do {
            if distributorTracker?.name != distributor {
                distributorTracker = try await connection.trackNameOwner(distributor)
            }
            var arguments: [String: BusValue] = [
                "service": .string(appID), "token": .string(state.token), "description": .string(appID),
            ]
            if let vapidPublicKey { arguments["vapid"] = .string(vapidPublicKey) }
            let success: String
            let reason: String?
            do {
                let reply = try await connection.call(
                    destination: distributor, path: UnifiedPush.distributorPath, interface: UnifiedPush.distributor2,
                    member: "Register", arguments: [.vardict(arguments)])
                success = UnifiedPush.field("success", in: reply.first)?.stringValue ?? ""
                reason = UnifiedPush.field("reason", in: reply.first)?.stringValue
            } catch let error as BusError where Self.isMissingMethod(error) {
                let reply = try await connection.call(
                    destination: distributor, path: UnifiedPush.distributorPath, interface: UnifiedPush.distributor1,
                    member: "Register", arguments: [.string(appID), .string(state.token), .string(appID)])
                success = reply.first?.stringValue ?? ""
                reason = reply.count > 1 ? reply[1].stringValue : nil
            }
            guard success == UnifiedPush.registrationSucceeded || success == "NEW_ENDPOINT" else {
                fail(Self.error(forReason: reason, distributor: distributor))
                return
            }
            if state.distributor != distributor {
                state.distributor = distributor
                self.state = state
                await saveState()
            }
            logger.info("registered with \(distributor); waiting for its NewEndpoint")
        } catch {
            fail(ApplicationError(.registrationFailed, "Register at \(distributor) failed: \(error)"))
        }
    }

    /// The distributor to register with: the previous one while it is on the bus, else a preferred
    /// one, else the first other (sorted) with an owner, else the first activatable one.
    private func chooseDistributor(on connection: BusConnection, previous: String?) async -> String? {
        let owned: [String]
        let activatable: [String]
        do {
            let names = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "ListNames")
            owned = (names.first?.arrayValue?.compactMap(\.stringValue) ?? []).filter {
                $0.hasPrefix(UnifiedPush.distributorNamePrefix)
            }
            activatable = try await connection.activatableNames().filter {
                $0.hasPrefix(UnifiedPush.distributorNamePrefix)
            }
        } catch {
            logger.info("cannot list the bus's names: \(error)")
            return nil
        }
        let available = Set(owned).union(activatable)
        let order = [previous].compactMap { $0 } + preferredDistributors + owned.sorted() + activatable.sorted()
        return order.first { available.contains($0) }
    }

    private func fail(_ error: ApplicationError) {
        logger.info("remote-notification registration failed: \(error)")
        guard answerPending else { return }
        answerPending = false
        application?.handle(.failedToRegisterForRemoteNotifications(error))
    }

    private func answer(endpoint: String) {
        guard let state else { return }
        do {
            let token = try state.deviceToken(endpoint: endpoint)
            answerPending = false
            application?.handle(.registeredForRemoteNotifications(deviceToken: token.deviceToken))
        } catch {
            fail(ApplicationError(.registrationFailed, "\(error)"))
        }
    }

    static func error(forReason reason: String?, distributor: String) -> ApplicationError {
        let text = "\(distributor) refused the registration (\(reason ?? "no reason"))"
        switch reason.flatMap(UnifiedPush.FailureReason.init(rawValue:)) {
        case .network: return ApplicationError(.pushNetworkUnavailable, text)
        case .actionRequired: return ApplicationError(.pushActionRequired, text)
        case .vapidRequired: return ApplicationError(.pushVAPIDRequired, text)
        case .internalError, nil: return ApplicationError(.registrationFailed, text)
        }
    }

    static func isMissingMethod(_ error: BusError) -> Bool {
        [
            BusError.Name.unknownMethod, "org.freedesktop.DBus.Error.UnknownInterface",
            "org.freedesktop.DBus.Error.UnknownObject",
        ]
        .contains(error.name)
    }

    // MARK: The distributor's calls

    private func answer(_ call: IncomingMethodCall) async {
        let request = call.request
        guard await isFromDistributor(request.sender) else {
            logger.info(
                "refused \(request.interface).\(request.member) from \(request.sender ?? "?"): not the distributor")
            call.reply(
                .failure(
                    BusError(
                        name: "org.freedesktop.DBus.Error.AccessDenied",
                        message: "only the distributor this app registered with may call the connector")))
            return
        }
        let v2 = request.interface == UnifiedPush.connector2
        let arguments = request.arguments
        let token = v2 ? UnifiedPush.field("token", in: arguments.first)?.stringValue : arguments.first?.stringValue
        guard let state, let token, token == state.token else {
            // The specification: calls with an unknown token are ignored.
            logger.info("ignored \(request.member) for a token this app does not hold")
            call.reply(.success(v2 && request.member == "Message" ? [.vardict([:])] : []))
            return
        }
        switch request.member {
        case "Message":
            let bytes = UnifiedPush.messageBytes(v2 ? UnifiedPush.field("message", in: arguments.first) : arguments[1])
            let id = (v2 ? UnifiedPush.field("id", in: arguments.first) : arguments.count > 2 ? arguments[2] : nil)?
                .stringValue
            if let bytes { receive(bytes, id: id, keys: state) }
            call.reply(.success(v2 ? [.vardict(id.map { ["id": .string($0)] } ?? [:])] : []))
        case "NewEndpoint":
            let endpoint = (v2 ? UnifiedPush.field("endpoint", in: arguments.first) : arguments[1])?.stringValue ?? ""
            call.reply(.success([]))
            await newEndpoint(endpoint)
        case "Unregistered":
            call.reply(.success([]))
            var cleared = state
            cleared.endpoint = nil
            cleared.distributor = nil
            self.state = cleared
            await saveState()
            endpointThisRun = nil
            logger.info("the distributor unregistered the app")
            application?.handle(.unregisteredForRemoteNotifications)
        default:
            call.reply(.failure(BusError(name: BusError.Name.unknownMethod, message: "no method \(request.member)")))
        }
    }

    private func isFromDistributor(_ sender: String?) async -> Bool {
        guard let sender, let tracker = distributorTracker else { return false }
        if let owner = tracker.currentOwner { return owner == sender }
        // The owner change may not have reached the tracker yet (the distributor was just activated).
        let owner = try? await connection?.nameOwner(tracker.name)
        return owner == sender
    }

    /// Writes ``state`` as it is when the write starts (none: the file is removed) and returns once
    /// that is on disk: `false` if it could not be written (logged).
    @discardableResult
    private func saveState() async -> Bool {
        await stateFile.persistOrRemove { [weak self] () -> Result<Data?, GroupCommitFile.Failure> in
            guard let state = self?.state else { return .success(nil) }
            do {
                return .success(try state.encoded())
            } catch {
                return .failure(.init(.notEncodable, "cannot encode the push registration", underlying: error))
            }
        } == nil
    }

    private func newEndpoint(_ endpoint: String) async {
        guard var state else { return }
        guard endpoint.utf8.count <= UnifiedPush.maximumEndpointLength, let url = URL(string: endpoint),
            ["https", "http"].contains(url.scheme?.lowercased() ?? "")
        else {
            logger.info("ignored NewEndpoint '\(endpoint)': not an http(s) URL of ≤ 1000 bytes")
            return
        }
        let changed = state.endpoint != endpoint
        endpointThisRun = endpoint
        if changed {
            state.endpoint = endpoint
            self.state = state
            if !(await saveState()) { logger.info("cannot store the endpoint in \(stateDirectory.path)") }
        }
        if answerPending || changed { answer(endpoint: endpoint) }
    }

    private func receive(_ body: [UInt8], id: String?, keys state: PushRegistrationState) {
        if let id, recentMessageIDs.contains(id) {
            logger.info("push \(id) again: delivered already")
            return
        }
        let plaintext: Data
        do {
            plaintext = try WebPushEncryption.decrypt(Data(body), keys: try keys(of: state))
        } catch {
            logger.info("dropped push \(id ?? "without id"): it does not decrypt with this app's keys (\(error))")
            return
        }
        // Remembered only once it decrypted: a garbled copy must not shadow a good redelivery.
        if let id, !id.isEmpty { recentMessageIDs.insert(id) }
        let payload = Self.payload(of: plaintext)
        if launchWindowOpen {
            closeLaunchWindow(with: payload)
        } else {
            deliver(payload)
        }
    }

    /// `state`'s decryption keys, from ``decryptionKeys`` while its key material is the same.
    private func keys(of state: PushRegistrationState) throws -> WebPushKeys {
        if let cached = decryptionKeys, cached.privateKey == state.privateKey, cached.authSecret == state.authSecret {
            return cached.keys
        }
        let keys = try state.keys()
        decryptionKeys = (state.privateKey, state.authSecret, keys)
        return keys
    }

    /// The payload of a decrypted push: a JSON object as it is; any other bytes as `message`.
    static func payload(of plaintext: Data) -> UserInfo {
        if plaintext.first == UInt8(ascii: "{"), let text = String(data: plaintext, encoding: .utf8),
            let userInfo = try? UserInfo(json: text), (try? LifecycledProtocol.validate(userInfo)) != nil
        {
            return userInfo
        }
        if let text = String(data: plaintext, encoding: .utf8) { return ["message": .string(text)] }
        return ["message": .data(plaintext)]
    }
}
