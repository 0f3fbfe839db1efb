import AppLifecycle
import AppLifecycleTesting
import Foundation
import Glibc
import LifecycledClient
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing
import UnifiedPushClient
import WebPush

/// The app side of UnifiedPush (``UnifiedPushConnector`` under a ``LifecycledHost``) against a
/// stand-in distributor written from the D-Bus specification
/// (`scripts/unifiedpush-standin-distributor.py`), on a private bus where lifecycled is not running:
/// the host runs on its defaults, and still owns the app's id and serves the connector there.
@Suite("UnifiedPushConnector against a stand-in distributor")
@MainActor
struct UnifiedPushConnectorTests {
    nonisolated static let appID = "org.example.PushApp"
    static let connectorPath = "/org/unifiedpush/Connector"

    // MARK: Tests

    @Test(
        "register: Register carries the app's name and a token; NewEndpoint becomes didRegister with a token of that endpoint and 65-byte key; the keys file is 0600"
    )
    func registers() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)

            let register = try #require(try await env.standIn.received("Register").first)
            let fields = try #require(register.args.first as? [String: Any])
            #expect(fields["service"] as? String == Self.appID)
            let connectorToken = try #require(fields["token"] as? String)
            #expect(!connectorToken.isEmpty && connectorToken.utf8.count <= 100)
            #expect(register.sender != nil)

            let endpoint = try #require(try await env.standIn.endpoints(for: connectorToken).last)
            #expect(token.endpoint.absoluteString == endpoint)
            #expect(endpoint.hasPrefix("https://push.example.net/push/"))
            #expect(token.publicKey.count == 65 && token.publicKey.first == 0x04)
            #expect(token.authSecret.count == 16)
            #expect(app.app.isRegisteredForRemoteNotifications)
            #expect(app.delegate.seen.map(\.kind) == ["registered"])

            var info = stat()
            #expect(stat(env.stateFile, &info) == 0, "remote-notifications.json exists")
            #expect(info.st_mode & 0o777 == 0o600)
        }
    }

    @Test(
        "a push encrypted to the token's keys reaches didReceiveRemoteNotification(_:fetchCompletionHandler:) with its JSON payload; the reply carries the id"
    )
    func deliversAnEncryptedPush() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            let json = #"{"kind":"greeting","n":1,"text":"hello"}"#
            let reply = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(json, to: token), id: "m-1")
            #expect(UnifiedPush.field("id", in: reply.first)?.stringValue == "m-1")
            try await app.waitForSeen(2)
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received"])
            #expect(app.delegate.seen.last?.payload == (try UserInfo(json: json)))
            #expect(
                app.recorder.delegateCalls.filter { $0.contains("RemoteNotification") } == [
                    "application(_:didRegisterForRemoteNotificationsWithDeviceToken:)",
                    "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
                ])
        }
    }

    @Test(
        "a Message with an id the connector already accepted (the broker's redelivery after lifecycled died before its PUBACK) is answered with its id and reaches the app once"
    )
    func aRepeatedIDReachesTheAppOnce() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            let first = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"once"}"#, to: token), id: "m-again")
            // The repeat is encrypted again (a new salt): recognised by its id, not its bytes.
            let again = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"once"}"#, to: token), id: "m-again")
            let next = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"next"}"#, to: token), id: "m-next")
            #expect(UnifiedPush.field("id", in: first.first)?.stringValue == "m-again")
            #expect(UnifiedPush.field("id", in: again.first)?.stringValue == "m-again")
            #expect(UnifiedPush.field("id", in: next.first)?.stringValue == "m-next")
            try await app.waitForSeen(3)
            await app.settle()
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received", "received"])
            #expect(app.delegate.seen.compactMap { $0.payload?["n"]?.stringValue } == ["once", "next"])
        }
    }

    @Test("the record of accepted ids keeps the last 1,024 and forgets the oldest first")
    func theRecordOfAcceptedIDsIsBounded() {
        var record = RecentMessageIDs()
        let first = record.insert("id-0")
        let again = record.insert("id-0")
        #expect(first && !again)
        for index in 1..<RecentMessageIDs.capacity { record.insert("id-\(index)") }
        #expect(record.contains("id-0") && record.contains("id-\(RecentMessageIDs.capacity - 1)"))
        record.insert("id-\(RecentMessageIDs.capacity)")
        #expect(!record.contains("id-0"))
        #expect(record.contains("id-1") && record.contains("id-\(RecentMessageIDs.capacity)"))
        // A forgotten id is accepted again (it is that old: not a redelivery).
        let forgotten = record.insert("id-0")
        #expect(forgotten)
        #expect(!record.contains("id-1"))
    }

    @Test("random bytes, and a push encrypted to other keys, are dropped; the next good push is delivered")
    func dropsWhatDoesNotDecrypt() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            var generator = SystemRandomNumberGenerator()
            let noise = Data((0..<200).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
            let other = WebPushKeys()
            let toOtherKeys = try WebPushEncryption.encrypt(
                Data(#"{"n":"other keys"}"#.utf8), receiverPublicKey: other.publicKey, authSecret: other.authSecret)
            _ = try await env.standIn.sendMessage(token: connectorToken, noise, id: "noise")
            _ = try await env.standIn.sendMessage(token: connectorToken, toOtherKeys, id: "other")
            _ = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"good"}"#, to: token), id: "good")

            try await app.waitForSeen(2)
            await app.settle()
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received"])
            #expect(app.delegate.seen.last?.payload?["n"] == .string("good"))
        }
    }

    @Test("a Message from a connection that is not the distributor is refused with AccessDenied and not delivered")
    func refusesSpoofedMessages() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            let spoofed = try Self.encrypt(#"{"n":"spoofed"}"#, to: token)
            let error = await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: Self.appID, path: Self.connectorPath, interface: UnifiedPush.connector2,
                    member: "Message",
                    arguments: [
                        .vardict([
                            "token": .string(connectorToken), "message": UnifiedPush.byteArray(spoofed),
                            "id": .string("spoofed"),
                        ])
                    ])
            }
            #expect(error?.name == "org.freedesktop.DBus.Error.AccessDenied")
            // Connector1 too, and NewEndpoint: the app's endpoint stays the distributor's.
            let v1Error = await #expect(throws: BusError.self) {
                _ = try await env.connection.call(
                    destination: Self.appID, path: Self.connectorPath, interface: UnifiedPush.connector1,
                    member: "NewEndpoint",
                    arguments: [.string(connectorToken), .string("https://evil.example/steal")])
            }
            #expect(v1Error?.name == "org.freedesktop.DBus.Error.AccessDenied")

            _ = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"real"}"#, to: token), id: "real")
            try await app.waitForSeen(2)
            await app.settle()
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received"])
            #expect(app.delegate.seen.last?.payload?["n"] == .string("real"))
        }
    }

    @Test("a Message for a token the app does not hold is ignored")
    func ignoresUnknownTokens() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            let reply = try await env.standIn.sendMessage(
                token: "not-this-apps-token", Self.encrypt(#"{"n":"stray"}"#, to: token), id: "stray")
            #expect(UnifiedPush.field("id", in: reply.first) == nil)
            _ = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(#"{"n":"mine"}"#, to: token), id: "mine")
            try await app.waitForSeen(2)
            await app.settle()
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received"])
            #expect(app.delegate.seen.last?.payload?["n"] == .string("mine"))
        }
    }

    @Test(
        "a new endpoint calls didRegister again; a restarted app registers again with the same token and keys, and gets the endpoint back"
    )
    func newEndpointAndRestart() async throws {
        try await withStandIn { env in
            let first = PushApp(env)
            var firstStopped = false
            defer { if !firstStopped { first.stop() } }
            await first.start()
            #expect(!first.app.isRegisteredForRemoteNotifications, "registered before any registration")
            first.app.registerForRemoteNotifications()
            let original = try await first.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()

            let changed = try await env.standIn.changeEndpoint(token: connectorToken)
            let renewed = try await first.waitForRegistration(2)
            #expect(renewed.endpoint.absoluteString == changed)
            #expect(changed != original.endpoint.absoluteString)
            #expect(renewed.publicKey == original.publicKey && renewed.authSecret == original.authSecret)
            #expect(first.delegate.seen.map(\.kind) == ["registered", "registered"])

            first.stop()
            firstStopped = true
            let released = try await eventually(hangGuard: .seconds(15)) {
                try await env.connection.nameOwner(Self.appID) == nil
            }
            try #require(released, "the stopped app releases its name")

            let second = PushApp(env)
            defer { second.stop() }
            await second.start()
            // The kept endpoint: registered from launch on, before any callback, as iOS keeps it.
            #expect(second.app.isRegisteredForRemoteNotifications, "the registration did not survive the relaunch")
            #expect(second.delegate.seen.isEmpty)
            second.app.registerForRemoteNotifications()
            let again = try await second.waitForRegistration(1)
            #expect(again.endpoint.absoluteString == changed)
            #expect(again.publicKey == original.publicKey && again.authSecret == original.authSecret)
            #expect(second.delegate.seen.map(\.kind) == ["registered"])

            let registers = try await env.standIn.received("Register")
            #expect(registers.count >= 2)
            #expect(
                registers.allSatisfy { ($0.args.first as? [String: Any])?["token"] as? String == connectorToken })
            // Every call the stand-in made reached a connector (none before the app owned its name).
            let failed = try await env.standIn.calls().filter { $0.error != nil }
            #expect(failed.isEmpty, "\(failed.map { "\($0.member): \($0.error ?? "")" })")
        }
    }

    @Test("Unregistered from the distributor: isRegisteredForRemoteNotifications turns false")
    func distributorUnregisters() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            _ = try await app.waitForRegistration(1)
            #expect(app.app.isRegisteredForRemoteNotifications)
            let connectorToken = try await env.standIn.registeredToken()

            try await env.standIn.sendUnregistered(token: connectorToken)
            let unregistered = await eventually(hangGuard: .seconds(15)) {
                !app.app.isRegisteredForRemoteNotifications
            }
            #expect(unregistered)
            #expect(app.delegate.seen.map(\.kind) == ["registered"])
        }
    }

    @Test("a distributor refusing with NETWORK: didFailToRegister with pushNetworkUnavailable")
    func refusedForNetwork() async throws {
        try await withStandIn(arguments: ["--refuse", "NETWORK"]) { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            try await app.waitForSeen(1)
            #expect(app.delegate.seen.map(\.kind) == ["failed"])
            #expect(app.delegate.seen.first?.error?.code == .pushNetworkUnavailable)
            #expect(!app.app.isRegisteredForRemoteNotifications)
            #expect(try await env.standIn.received("Register").count == 1)
            #expect(try await env.standIn.calls().filter { $0.direction == "sent" }.isEmpty)
        }
    }

    @Test("no distributor on the bus: didFailToRegister with noPushDistributor")
    func noDistributor() async throws {
        try await withStandIn(startsStandIn: false) { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            try await app.waitForSeen(1)
            #expect(app.delegate.seen.map(\.kind) == ["failed"])
            #expect(app.delegate.seen.first?.error?.code == .noPushDistributor)
            #expect(!app.app.isRegisteredForRemoteNotifications)
        }
    }

    @Test("a version-1 distributor: Register(sss), NewEndpoint(ss) and Message(says) work the same")
    func versionOneDistributor() async throws {
        try await withStandIn(arguments: ["--v1"]) { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            let token = try await app.waitForRegistration(1)

            let register = try #require(try await env.standIn.received("Register").first)
            #expect(register.interface == UnifiedPush.distributor1)
            #expect(register.args.first as? String == Self.appID)
            let connectorToken = try #require(register.args.dropFirst().first as? String)
            #expect(token.endpoint.absoluteString == (try await env.standIn.endpoints(for: connectorToken).last))

            let json = #"{"kind":"v1","n":2}"#
            _ = try await env.standIn.sendMessage(
                token: connectorToken, Self.encrypt(json, to: token), id: "v1-1")
            try await app.waitForSeen(2)
            #expect(app.delegate.seen.map(\.kind) == ["registered", "received"])
            #expect(app.delegate.seen.last?.payload == (try UserInfo(json: json)))
            #expect(try await env.standIn.calls().allSatisfy { $0.interface.hasSuffix("1") })
        }
    }

    @Test(
        "unregisterForRemoteNotifications: Unregister with the token reaches the distributor; the keys file is removed")
    func appUnregisters() async throws {
        try await withStandIn { env in
            let app = PushApp(env)
            defer { app.stop() }
            await app.start()
            app.app.registerForRemoteNotifications()
            _ = try await app.waitForRegistration(1)
            let connectorToken = try await env.standIn.registeredToken()
            #expect(FileManager.default.fileExists(atPath: env.stateFile))

            app.app.unregisterForRemoteNotifications()
            #expect(!app.app.isRegisteredForRemoteNotifications)
            let unregistered = try await eventually(hangGuard: .seconds(15)) {
                try await !env.standIn.received("Unregister").isEmpty
            }
            try #require(unregistered)
            let unregister = try #require(try await env.standIn.received("Unregister").first)
            #expect(unregister.interface == UnifiedPush.distributor2)
            #expect((unregister.args.first as? [String: Any])?["token"] as? String == connectorToken)
            #expect(!FileManager.default.fileExists(atPath: env.stateFile))
            #expect(app.delegate.seen.map(\.kind) == ["registered"])
        }
    }

    // MARK: Fixtures

    static func encrypt(_ json: String, to token: RemoteNotificationDeviceToken) throws -> Data {
        try WebPushEncryption.encrypt(
            Data(json.utf8), receiverPublicKey: token.publicKey, authSecret: token.authSecret)
    }

    /// A private bus, the stand-in on it (unless `startsStandIn` is false), the test's own
    /// connection, and a state home; all stopped (the stand-in by its pid) even when `body` fails.
    func withStandIn(
        arguments: [String] = [], startsStandIn: Bool = true, _ body: @MainActor (Environment) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "unifiedpush-connector")
        defer { directory.remove() }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let loop = try EventLoop(name: "push-test")
        defer { loop.shutdown() }
        let connection = try await BusConnection(
            .address(bus.address), loop: loop, description: "push-test", timeout: .seconds(10))
        defer { connection.close() }
        let standIn = try await StandIn.start(
            on: bus, connection: connection, logPath: directory.appending("standin.log"), arguments: arguments,
            starts: startsStandIn)
        defer { standIn.stop() }
        let environment = Environment(
            bus: bus, connection: connection, standIn: standIn, stateHome: directory.appending("state"))
        do {
            try await body(environment)
        } catch {
            Issue.record("stand-in log:\n\(standIn.output)")
            throw error
        }
    }

    struct Environment {
        let bus: PrivateBus
        let connection: BusConnection
        let standIn: StandIn
        let stateHome: String
        var stateFile: String { stateHome + "/" + UnifiedPushConnectorTests.appID + "/remote-notifications.json" }
    }

    /// What the delegate saw, in order.
    struct Seen {
        var kind: String
        var deviceToken: Data?
        var error: ApplicationError?
        var payload: UserInfo?
    }

    @MainActor final class PushDelegate: ApplicationDelegate {
        var seen: [Seen] = []

        func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)
        {
            seen.append(Seen(kind: "registered", deviceToken: deviceToken))
        }

        func application(_ application: Application, didFailToRegisterForRemoteNotificationsWithError error: any Error)
        {
            seen.append(
                Seen(kind: "failed", error: error as? ApplicationError ?? ApplicationError(.host, "\(error)")))
        }

        func application(
            _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
            fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
        ) {
            seen.append(Seen(kind: "received", payload: userInfo))
            completionHandler(.newData)
        }
    }

    /// An in-process app under a LifecycledHost on the private bus (lifecycled is not running there).
    @MainActor final class PushApp {
        let host: LifecycledHost
        let app: Application
        let delegate = PushDelegate()
        let recorder: LifecycleRecorder

        init(_ environment: Environment) {
            host = LifecycledHost(
                configuration: .init(
                    appID: UnifiedPushConnectorTests.appID, busAddress: .address(environment.bus.address),
                    environment: ["XDG_STATE_HOME": environment.stateHome], handlesTerminationSignals: false))
            app = Application(
                delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
                configuration: .init(
                    applicationIdentifier: UnifiedPushConnectorTests.appID, isStateRestorationEnabled: false))
            recorder = LifecycleRecorder(application: app)
        }

        func start() async {
            await host.prepare(app)
            app.launch(options: host.launchOptions)
        }

        func stop() { host.stop() }

        /// Waits until the delegate saw `count` calls (bounded).
        func waitForSeen(_ count: Int) async throws {
            let delegate = self.delegate
            let arrived = await eventually(hangGuard: .seconds(15)) { delegate.seen.count >= count }
            try #require(arrived, "the delegate saw \(delegate.seen.map(\.kind)), waiting for \(count) calls")
        }

        /// Waits for the `count`th didRegister and decodes its token.
        func waitForRegistration(_ count: Int) async throws -> RemoteNotificationDeviceToken {
            let delegate = self.delegate
            let arrived = await eventually(hangGuard: .seconds(15)) {
                delegate.seen.filter { $0.kind == "registered" }.count >= count
            }
            try #require(
                arrived,
                "the delegate saw \(delegate.seen.map(\.kind) + delegate.seen.compactMap(\.error).map(\.description))")
            let data = try #require(delegate.seen.filter { $0.kind == "registered" }[count - 1].deviceToken)
            return try RemoteNotificationDeviceToken(deviceToken: data)
        }

        /// Lets events already queued for the app run (a dropped push would have arrived by now:
        /// the connector answers Message after handing the push to the app).
        func settle() async {
            for _ in 0..<20 { await Task.yield() }
        }
    }
}

/// The stand-in distributor process and its control interface (`org.example.StandIn`).
final class StandIn: Sendable {
    static let name = "standin"
    static let busName = UnifiedPush.distributorNamePrefix + name
    static let control = "org.example.StandIn"
    /// `scripts/unifiedpush-standin-distributor.py`; this file is three levels below the root.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/unifiedpush-standin-distributor.py").path

    let process: ChildProcess?
    let logPath: String
    /// The test's connection, which calls the control interface.
    let connection: BusConnection

    private init(process: ChildProcess?, logPath: String, connection: BusConnection) {
        self.process = process
        self.logPath = logPath
        self.connection = connection
    }

    /// Starts the stand-in and waits (bounded) until it printed `ready`; a stand-in that is not
    /// ready is stopped by its pid before this throws.
    static func start(
        on bus: PrivateBus, connection: BusConnection, logPath: String, arguments: [String], starts: Bool
    ) async throws -> StandIn {
        guard starts else { return StandIn(process: nil, logPath: logPath, connection: connection) }
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let child = try ChildProcess.spawn(
            "/usr/bin/python3", [script, name] + arguments, environment: environment, stdout: .file(logPath))
        let standIn = StandIn(process: child, logPath: logPath, connection: connection)
        let ready = await eventually(hangGuard: .seconds(20)) {
            child.hasExited || standIn.output.contains("ready\n")
        }
        guard ready, !child.hasExited else {
            standIn.stop()
            throw FixtureError("the stand-in distributor did not start:\n\(standIn.output)")
        }
        return standIn
    }

    /// SIGTERM to its own pid, SIGKILL after 5 s.
    func stop() {
        process?.terminateAndWait(escalatingAfter: .seconds(5))
    }

    var output: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// One entry of `Calls()`.
    struct Call: @unchecked Sendable {
        var direction: String
        var interface: String
        var member: String
        var args: [Any]
        var sender: String?
        var error: String?
    }

    func calls() async throws -> [Call] {
        let reply = try await connection.call(
            destination: Self.busName, path: UnifiedPush.distributorPath, interface: Self.control, member: "Calls")
        let text = try #require(reply.first?.stringValue)
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        return entries.map {
            Call(
                direction: $0["direction"] as? String ?? "", interface: $0["interface"] as? String ?? "",
                member: $0["member"] as? String ?? "", args: $0["args"] as? [Any] ?? [],
                sender: $0["sender"] as? String, error: $0["error"] as? String)
        }
    }

    /// The distributor calls received with this member, in order.
    func received(_ member: String) async throws -> [Call] {
        try await calls().filter { $0.direction == "received" && $0.member == member }
    }

    /// The token of the first Register (v2).
    func registeredToken() async throws -> String {
        let register = try #require(try await received("Register").first)
        return try #require((register.args.first as? [String: Any])?["token"] as? String)
    }

    /// The endpoints sent to the connector for a token, in order.
    func endpoints(for token: String) async throws -> [String] {
        try await calls().filter { $0.direction == "sent" && $0.member == "NewEndpoint" }.compactMap { call in
            if let fields = call.args.first as? [String: Any] {
                return fields["token"] as? String == token ? fields["endpoint"] as? String : nil
            }
            return call.args.first as? String == token ? call.args.dropFirst().first as? String : nil
        }
    }

    func sendMessage(token: String, _ body: Data, id: String) async throws -> [BusValue] {
        try await connection.call(
            destination: Self.busName, path: UnifiedPush.distributorPath, interface: Self.control,
            member: "SendMessage",
            arguments: [
                .string(UnifiedPushConnectorTests.appID), .string(token), UnifiedPush.byteArray(body), .string(id),
            ])
    }

    func changeEndpoint(token: String) async throws -> String {
        let reply = try await connection.call(
            destination: Self.busName, path: UnifiedPush.distributorPath, interface: Self.control,
            member: "ChangeEndpoint", arguments: [.string(UnifiedPushConnectorTests.appID), .string(token)])
        return try #require(reply.first?.stringValue)
    }

    func sendUnregistered(token: String) async throws {
        _ = try await connection.call(
            destination: Self.busName, path: UnifiedPush.distributorPath, interface: Self.control,
            member: "SendUnregistered", arguments: [.string(UnifiedPushConnectorTests.appID), .string(token)])
    }
}
