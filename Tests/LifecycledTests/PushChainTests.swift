import AppLifecycle
import AppLifecycleTesting
import BrokerLink
import BrokerTestSupport
import Foundation
import Glibc
import LifecycledClient
import SystemdBus
import SystemdBusTesting
import Testing
import UnifiedPushClient
import WebPush

@testable import LifecycleDaemon

/// A delegate that records what the remote-notification callbacks received.
@MainActor
private final class PushDelegate: ApplicationDelegate {
    var tokens: [Data] = []
    var payloads: [UserInfo] = []
    func application(_ application: Application, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        tokens.append(deviceToken)
    }
    func application(
        _ application: Application, didReceiveRemoteNotification userInfo: UserInfo,
        fetchCompletionHandler completionHandler: @escaping @Sendable (BackgroundFetchResult) -> Void
    ) {
        payloads.append(userInfo)
        completionHandler(.newData)
    }
}

/// The whole chain: an app server (lifecyclectl push, or pywebpush) → lifecycle-push-gateway →
/// mosquitto → lifecycled → the app's delegate; and an operator's view with lifecyclectl fleet.
@Suite("Web Push through the gateway, the broker and lifecycled to the delegate", .serialized, .timeLimit(.minutes(3)))
@MainActor
struct PushChainTests {
    static let publicURL = "https://push.example.net"

    @Test func lifecyclectlAndPywebpushReachTheDelegate() async throws {
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        let rig = try await FleetRig(endpointURL: Self.publicURL)
        let gateway = try await GatewayProcess(
            brokerURL: rig.broker.url, password: "pw-gateway", publicURL: Self.publicURL)
        let vapid = VAPIDSigningKey()
        try await withDaemon(fleetConfiguration: rig.configurationPath) { h in
            #expect(await eventually { h.daemon.push?.fleet?.isConnected == true })
            let id = "org.example.Chain"
            let host = LifecycledHost(
                configuration: .init(
                    appID: id, busAddress: .address(h.bus.address),
                    environment: [
                        "XDG_STATE_HOME": h.directory.path + "/xdg",
                        UnifiedPushConnector.vapidKeyEnvironment: vapid.publicKeyBase64URL,
                    ], handlesTerminationSignals: false))
            let delegate = PushDelegate()
            let app = Application(
                delegate: delegate, host: host, notificationCenter: LifecycleNotificationCenter(),
                configuration: .init(applicationIdentifier: id, isStateRestorationEnabled: false))
            let recorder = LifecycleRecorder(application: app)
            let running = Task { @MainActor in await app.run() }
            defer { running.cancel() }
            try await h.client.log.waitForState(id, .active)
            app.registerForRemoteNotifications()
            #expect(await eventually { !delegate.tokens.isEmpty })
            let token = try #require(delegate.tokens.first)
            let subscription = try RemoteNotificationDeviceToken(deviceToken: token)
            #expect(subscription.endpoint.absoluteString.hasPrefix(Self.publicURL + "/push/"))
            let tokenFile = try h.directory.write("token.json", String(decoding: token, as: UTF8.self))
            let keyFile = try h.directory.write("vapid.key", Base64URL.encode(vapid.rawRepresentation))

            // lifecyclectl push, as an app server: encrypted to the token's keys, signed with VAPID.
            let sent = try await runTool(
                ctl,
                [
                    "push", "--gateway", gateway.url, "--vapid-key", keyFile, "@" + tokenFile,
                    #"{"from":"lifecyclectl"}"#,
                ])
            #expect(sent.status == 0, "\(sent.stderr)\n\(gateway.log)")
            #expect(sent.stdout.hasPrefix("201 Created \(Self.publicURL)/message/"), "\(sent.stdout)")
            #expect(await eventually { delegate.payloads.count == 1 }, "\(recorder.timeline)")
            #expect(delegate.payloads.first?["from"]?.stringValue == "lifecyclectl")
            try recorder.verifyConsecutive([
                "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)",
                "ApplicationDidReceiveRemoteNotificationNotification",
            ])

            // The app registered its server's VAPID key: a push without it is refused (401),
            // with another key forbidden (403); nothing reaches the app.
            let unsigned = try await runTool(ctl, ["push", "--gateway", gateway.url, "@" + tokenFile, "{}"])
            #expect(unsigned.status == 1 && unsigned.stderr.contains("401"), "\(unsigned.stderr)")
            let otherKey = try h.directory.write("other.key", Base64URL.encode(VAPIDSigningKey().rawRepresentation))
            let forged = try await runTool(
                ctl, ["push", "--gateway", gateway.url, "--vapid-key", otherKey, "@" + tokenFile, "{}"])
            #expect(forged.status == 1 && forged.stderr.contains("403"), "\(forged.stderr)")

            // pywebpush, an implementation no one here wrote, encrypts and signs the same way.
            let python = try #require(
                [
                    ProcessInfo.processInfo.environment["WEBPUSH_PYTHON"],
                    packageRoot + "/.build/webpush-venv/bin/python",
                ]
                .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) },
                "no Python with pywebpush: run scripts/webpush-venv.sh")
            let script = try h.directory.write(
                "send.py",
                """
                import json, sys
                from pywebpush import webpush
                subscription = json.load(open(sys.argv[1]))
                subscription["endpoint"] = subscription["endpoint"].replace("\(Self.publicURL)", sys.argv[2])
                response = webpush(subscription, data='{"from":"pywebpush"}', vapid_private_key=sys.argv[3],
                                   vapid_claims={"sub": "mailto:ops@example.net", "aud": "\(Self.publicURL)"},
                                   ttl=60, content_encoding="aes128gcm")
                print(response.status_code)
                """)
            let pywebpush = try await runTool(
                python, [script, tokenFile, gateway.url, Base64URL.encode(vapid.rawRepresentation)])
            #expect(pywebpush.status == 0 && pywebpush.stdout.contains("201"), "\(pywebpush.stdout)\(pywebpush.stderr)")
            #expect(await eventually { delegate.payloads.count == 2 }, "\(recorder.timeline)")
            #expect(delegate.payloads.last?["from"]?.stringValue == "pywebpush")
            #expect(delegate.payloads.count == 2, "a refused push was delivered")

            // In the background (a background task keeps it from suspending): the fetch variant there.
            let task = app.beginBackgroundTask(withName: "upload")
            app.handle(.foreground(false))
            #expect(app.applicationState == .background)
            let background = try await runTool(
                ctl,
                ["push", "--gateway", gateway.url, "--vapid-key", keyFile, "@" + tokenFile, #"{"from":"background"}"#])
            #expect(background.status == 0, "\(background.stderr)")
            #expect(await eventually { delegate.payloads.count == 3 }, "\(recorder.timeline)")
            #expect(delegate.payloads.last?["from"]?.stringValue == "background")
            #expect(
                recorder.entries.last {
                    $0.name == "application(_:didReceiveRemoteNotification:fetchCompletionHandler:)"
                }?
                .state == .background)
            app.endBackgroundTask(task)
            app.handle(.foreground(true))

            // The operator's view of the fleet.
            let operatorPassword = try h.directory.write("operator.password", "pw-operator\n")
            let fleet = ["--broker", rig.broker.url, "--username", "operator", "--password-file", operatorPassword]
            let devices = try await runTool(ctl, ["fleet", "devices"] + fleet)
            #expect(
                devices.status == 0 && devices.stdout == "device-one\tonline\n", "\(devices.stdout)\(devices.stderr)")
            // The app's return to the foreground travels app → lifecycled → broker: wait for the
            // retained state to say so (reading it at once raced that chain under load).
            var apps = (status: Int32(0), stdout: "", stderr: "")
            #expect(
                await eventually(hangGuard: .seconds(15), pause: .milliseconds(200)) {
                    apps = (try? await runTool(ctl, ["fleet", "apps"] + fleet)) ?? apps
                    return apps.stdout.contains("device-one\t\(id)\tactive")
                }, "\(apps.stdout)\(apps.stderr)")
            let monitor = try await runTool(ctl, ["fleet", "monitor", "--timeout", "1.5"] + fleet)
            #expect(monitor.stdout.contains("device-one presence online"), "\(monitor.stdout)\(monitor.stderr)")
            #expect(monitor.stdout.contains("device-one \(id) state"), "\(monitor.stdout)")
            let refused = try await runTool(
                ctl, ["fleet", "devices", "--broker", rig.broker.url, "--username", "operator"])
            // A refused login is the broker's answer, not a usage error: exit 1, with what to check.
            #expect(
                refused.status == 1 && refused.stderr.contains("refused the login")
                    && refused.stderr.contains("check --username and --password-file"), "\(refused.stderr)")
        }
        #expect(gateway.stop() == 0)
    }

    var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }
}
