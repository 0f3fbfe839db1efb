import BrokerTestSupport
import Foundation
import SystemdBusTesting
import Testing
import WebPush

/// The built gateway serving HTTPS itself (`--tls-certificate`, `--tls-key`) with a certificate of
/// a CA made for the test by `openssl`, reached by `lifectl push` (swift-nio-ssl) and by pywebpush
/// (Python's `requests`, OpenSSL), neither of which trusts that CA unless told to.
extension GatewayIntegrationTests {
    /// A Push API subscription for `token` at the public origin, and its keys.
    func subscription() throws -> (json: String, keys: WebPushKeys) {
        let keys = WebPushKeys()
        let json = """
            {"endpoint":"https://push.example.net/push/\(Self.token)",\
            "keys":{"p256dh":"\(Base64URL.encode(keys.publicKey))","auth":"\(Base64URL.encode(keys.authSecret))"}}
            """
        return (json, keys)
    }

    /// Runs `lifectl push` with `arguments`; its exit status and what it wrote (stdout and stderr).
    func lifectlPush(_ arguments: [String], in directory: TemporaryDirectory) async throws -> (
        status: Int32, output: String
    ) {
        let ctl = try #require(BuiltProducts.path(of: "lifecyclectl"), "lifecyclectl is not built")
        let outputPath = directory.appending("lifectl-\(UUID().uuidString).out")
        let child = try ChildProcess.spawn(ctl, ["push"] + arguments, stdout: .file(outputPath))
        let status = try await offThread { child.waitForExit() }
        return (status, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }

    /// The push service's refusals and an absent service are told with what to do (issue 20, part 5),
    /// not as a bare status or NIO's connection error.
    @Test func lifectlPushRefusalsSayWhatToDo() async throws {
        let directory = try TemporaryDirectory(prefix: "push-refusals")
        try await register(vapid: Base64URL.encode(VAPIDSigningKey().publicKey))
        let gateway = try await startGateway()
        #expect(await waitForRegistrations(1, at: gateway))
        let (json, _) = try subscription()
        let tokenFile = try directory.write("token.json", json)
        let unknownFile = try directory.write(
            "unknown.json", json.replacingOccurrences(of: Self.token, with: "unknown_token_0123456789ab"))

        let unauthorized = try await lifectlPush(["--gateway", gateway.url, "@" + tokenFile, "{}"], in: directory)
        #expect(unauthorized.status == 1)
        #expect(
            unauthorized.output.contains(
                "401 Unauthorized: this subscription requires VAPID authorization; this subscription was made with an application server key: sign with its private key, --vapid-key FILE"
            ), "\(unauthorized.output)")
        let unknown = try await lifectlPush(["--gateway", gateway.url, "@" + unknownFile, "{}"], in: directory)
        #expect(unknown.status == 1)
        #expect(
            unknown.output.contains("404 Not Found: no such subscription; the push service knows no subscription"),
            "\(unknown.output)")
        #expect(gateway.stop() == 0)
        let absent = try await lifectlPush(["--gateway", gateway.url, "@" + tokenFile, "{}"], in: directory)
        #expect(absent.status == 1)
        #expect(
            absent.output.contains(
                "cannot connect to 127.0.0.1:\(gateway.port): nothing listens there (connection refused): check the URL's host and port"
            ), "\(absent.output)")
        #expect(!absent.output.contains("SingleConnectionFailure"))
    }

    @Test func lifectlPushOverHTTPSTrustsTheGivenCAAndNoOther() async throws {
        let authority = try TestCertificateAuthority()
        let stranger = try TestCertificateAuthority()
        try await register()
        let gateway = try await startGateway(tls: authority)
        #expect(gateway.url.hasPrefix("https://"))
        #expect(await waitForRegistrations(1, at: gateway, tls: authority))
        let receiver = try await DeviceClient(broker: broker, device: "device-1")
        let (json, keys) = try subscription()
        let tokenFile = try authority.directory.write("token.json", json)
        let payload = #"{"aps":{"alert":"over TLS"}}"#

        let sent = try await lifectlPush(
            ["--gateway", gateway.url, "--ca-file", authority.caPath, "@" + tokenFile, payload],
            in: authority.directory)
        #expect(sent.status == 0, "\(sent.output)")
        #expect(sent.output.hasPrefix("201 Created https://push.example.net/message/"), "\(sent.output)")
        #expect(await eventually(hangGuard: .seconds(10)) { receiver.envelopes.count == 1 })
        let envelope = try #require(receiver.envelopes.first)
        let plaintext = try WebPushEncryption.decrypt(Data(envelope.body), keys: keys)
        #expect(String(decoding: plaintext, as: UTF8.self) == payload)

        // Without --ca-file the system's CAs are asked, and none of them signed the certificate.
        let untrusted = try await lifectlPush(
            ["--gateway", gateway.url, "@" + tokenFile, payload], in: authority.directory)
        #expect(untrusted.status == 1, "\(untrusted.output)")
        #expect(
            untrusted.output.contains(
                "the TLS certificate of 127.0.0.1 is not signed by a CA in the system's CA certificates: give the certificate of the CA that issued it (PEM) with --ca-file FILE"
            ), "\(untrusted.output)")
        // Another CA is no better, and the message names its file.
        let wrongCA = try await lifectlPush(
            ["--gateway", gateway.url, "--ca-file", stranger.caPath, "@" + tokenFile, payload], in: authority.directory)
        #expect(wrongCA.status == 1, "\(wrongCA.output)")
        #expect(wrongCA.output.contains("is not signed by a CA in \(stranger.caPath)"), "\(wrongCA.output)")
        // An unreadable CA file is a usage error.
        let missing = try await lifectlPush(
            [
                "--gateway", gateway.url, "--ca-file", authority.directory.appending("none.pem"), "@" + tokenFile,
                payload,
            ],
            in: authority.directory)
        #expect(missing.status == 2, "\(missing.output)")
        #expect(missing.output.contains("--ca-file: cannot read"), "\(missing.output)")

        // Nothing but the one trusted push got through, and the gateway still serves.
        #expect(receiver.envelopes.count == 1)
        let health = try await HTTPExchange.send("GET", "\(gateway.url)/health", caFile: authority.caPath)
        #expect(health.status == 200)
        #expect(gateway.stop() == 0)
    }

    @Test func pywebpushReachesTheTLSGatewayWithTheCAAsItsBundle() async throws {
        let python = try #require(
            [
                ProcessInfo.processInfo.environment["WEBPUSH_PYTHON"],
                Self.packageRoot + "/.build/webpush-venv/bin/python",
            ]
            .compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no Python with pywebpush: run scripts/webpush-venv.sh")
        let authority = try TestCertificateAuthority()
        try await register()
        let gateway = try await startGateway(tls: authority)
        #expect(await waitForRegistrations(1, at: gateway, tls: authority))
        let receiver = try await DeviceClient(broker: broker, device: "device-1")
        let (json, keys) = try subscription()
        let tokenFile = try authority.directory.write("token.json", json)
        let script = try authority.directory.write(
            "send.py",
            """
            import json, sys, requests
            from pywebpush import webpush, WebPushException
            subscription = json.load(open(sys.argv[1]))
            subscription["endpoint"] = subscription["endpoint"].replace("https://push.example.net", sys.argv[2])
            session = requests.Session()
            session.trust_env = False  # else $REQUESTS_CA_BUNDLE overrides verify
            session.verify = sys.argv[3] if sys.argv[3] != "-" else True
            try:
                response = webpush(subscription, data='{"from":"pywebpush"}', ttl=60, content_encoding="aes128gcm",
                                   requests_session=session)
                print(response.status_code)
            except requests.exceptions.SSLError as error:
                print("SSLError", error)
            """)
        let trusted = try await offThread {
            try ChildProcess.run(python, [script, tokenFile, gateway.url, authority.caPath])
        }
        #expect(trusted.status == 0 && trusted.output.contains("201"), "\(trusted.output)")
        #expect(await eventually(hangGuard: .seconds(10)) { receiver.envelopes.count == 1 })
        let envelope = try #require(receiver.envelopes.first)
        let plaintext = try WebPushEncryption.decrypt(Data(envelope.body), keys: keys)
        #expect(String(decoding: plaintext, as: UTF8.self) == #"{"from":"pywebpush"}"#)
        // With its default bundle (certifi's), requests refuses the certificate.
        let refused = try await offThread { try ChildProcess.run(python, [script, tokenFile, gateway.url, "-"]) }
        #expect(
            refused.output.contains("SSLError") && refused.output.contains("CERTIFICATE_VERIFY_FAILED"),
            "\(refused.output)")
        #expect(receiver.envelopes.count == 1)
        #expect(gateway.stop() == 0)
    }

    @Test func tlsOptionsGoTogetherAndUnreadableFilesStopTheStart() async throws {
        let executable = try #require(BuiltProducts.path(of: "lifecycle-push-gateway"))
        let authority = try TestCertificateAuthority()
        let base = ["--public-url", "https://push.example.net", "--listen", "127.0.0.1:0", "--broker", broker.url]
        for arguments in [["--tls-certificate", authority.certificatePath], ["--tls-key", authority.keyPath]] {
            let result = try await offThread { try ChildProcess.run(executable, base + arguments) }
            #expect(result.status == 2, "\(arguments)")
        }
        let outputPath = authority.directory.appending("gateway.out")
        let child = try ChildProcess.spawn(
            executable,
            base + ["--tls-certificate", authority.directory.appending("none.pem"), "--tls-key", authority.keyPath],
            stdout: .file(outputPath))
        #expect(try await offThread { child.waitForExit() } == 1)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        #expect(output.contains("--tls-certificate: cannot read a PEM certificate chain from"), "\(output)")
        // The CA's certificate with the server's key: not a pair.
        let mismatched = try ChildProcess.spawn(
            executable, base + ["--tls-certificate", authority.caPath, "--tls-key", authority.keyPath],
            stdout: .file(outputPath))
        #expect(try await offThread { mismatched.waitForExit() } == 1)
        let mismatchOutput = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        #expect(mismatchOutput.contains("do not make a TLS server"), "\(mismatchOutput)")
    }

    /// The package root: three levels above this file.
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
}
