import SystemdBusTesting

/// A throw-away certificate authority made with the `openssl` command in a temporary directory: a
/// self-signed P-256 CA and one server certificate it signed for `127.0.0.1` and `localhost`, valid
/// for a day. Nothing else trusts it: a client that is not given ``caPath`` must refuse the server.
public final class TestCertificateAuthority: Sendable {
    /// The directory of the PEM files (removed by `deinit`).
    public let directory: TemporaryDirectory
    /// The CA's certificate (PEM): what a client trusts.
    public var caPath: String { directory.appending("ca.pem") }
    /// The server's certificate (PEM), signed by the CA.
    public var certificatePath: String { directory.appending("server.pem") }
    /// The server certificate's private key (PEM).
    public var keyPath: String { directory.appending("server.key") }

    /// Makes the CA and the server certificate.
    ///
    /// - Throws: ``FixtureError`` with openssl's output when a step fails.
    public init() throws {
        directory = try TemporaryDirectory(prefix: "test-ca")
        let extensions = try directory.write(
            "server.ext",
            """
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1, DNS:localhost

            """)
        let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + newKey + [
                "-keyout", directory.appending("ca.key"), "-out", caPath, "-days", "1", "-subj",
                "/CN=AppLifecycle Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ],
            ["req"] + newKey + [
                "-keyout", keyPath, "-out", directory.appending("server.csr"), "-subj", "/CN=127.0.0.1",
            ],
            [
                "x509", "-req", "-in", directory.appending("server.csr"), "-CA", caPath, "-CAkey",
                directory.appending("ca.key"), "-CAcreateserial", "-out", certificatePath, "-days", "1", "-extfile",
                extensions,
            ],
        ]
        for arguments in steps {
            let result = try ChildProcess.run("/usr/bin/openssl", arguments)
            guard result.status == 0 else {
                directory.remove()
                throw FixtureError("openssl \(arguments.first ?? ""): exit \(result.status): \(result.output)")
            }
        }
    }

    deinit {
        directory.remove()
    }
}
