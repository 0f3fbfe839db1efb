import ArgumentParser
import BrokerLink
import CommandLineSupport
import FoundationEssentials
import Glibc
import Logging
import Metrics
import NIOCore
import NIOPosix
import NIOSSL
import Prometheus
import ServiceLifecycle
import SystemdBus

/// The `lifecycle-push-gateway` command: the fleet's Web Push front door (RFC 8030, RFC 8292).
///
/// `lifecycle-push-gateway --listen 127.0.0.1:8080 --public-url https://push.example.net
/// --broker mqtt://127.0.0.1:1883 --username gateway --password-file FILE [--ca-file F
/// --certificate-file F --key-file F] [--client-id ID] [--idle-timeout S] [--header-timeout S]
/// [--body-timeout S] [--max-connections N] [--tls-certificate F --tls-key F]` (``ConnectionLimits``)
///
/// With `--tls-certificate` and `--tls-key` it serves HTTPS itself (swift-nio-ssl), without a proxy
/// in front; the files are read once, at start. `GET /metrics` serves the ``GatewayMetrics`` as
/// Prometheus text: ``run()`` bootstraps swift-metrics with swift-prometheus's registry, once.
///
/// It keeps no state beyond the broker's retained registrations, so several instances can run
/// behind one load balancer (each with its own client id, the default). It runs as a
/// swift-service-lifecycle `ServiceGroup` of the ``BrokerPushLink`` and the ``GatewayServer``,
/// whose graceful-shutdown signals are SIGTERM and SIGINT: it stops accepting, finishes the
/// requests in flight (``GatewayServer/shutdownGrace``), disconnects from the broker and exits 0.
/// Exit status 1: it cannot start (the port is taken, the password file is unreadable); 2: a usage
/// error, or a configuration file that cannot be used. Every long option can also be set in the
/// configuration file (``defaultConfigurationPath``, or `--config`), under `[gateway]` with the same
/// name (``ConfigurationFileArguments``). The `lifecycle-push-gateway` executable's main calls
/// ``main(commandLine:)``.
package struct PushGatewayCommand: AsyncParsableCommand, UsageErrorExit {
    /// The command's name and help.
    package static let configuration = CommandConfiguration(
        commandName: "lifecycle-push-gateway",
        abstract: "Accept Web Push messages (RFC 8030, VAPID) and publish them to devices through an MQTT broker.",
        version: PackageVersion.current)

    /// The configuration file read when there is no `--config`, if it exists.
    package static let defaultConfigurationPath = "/etc/applifecycle/push-gateway.conf"
    /// The configuration file's one section.
    package static let configurationSection = "gateway"

    /// The environment variable read for the broker password when there is no `--password-file`.
    static let passwordVariable = "LIFECYCLE_PUSH_GATEWAY_PASSWORD"

    @Option(
        help: ArgumentHelp(
            "A file of settings: any long option under [\(Self.configurationSection)] (listen = 127.0.0.1:8080); "
                + "the command line wins (default: \(Self.defaultConfigurationPath) if it exists).",
            valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("The address and port to listen on (port 0: any free port).", valueName: "host:port"))
    var listen = "127.0.0.1:8080"

    @Option(
        name: .customLong("public-url"),
        help: ArgumentHelp(
            "The origin app servers reach this gateway at: VAPID's audience, the start of endpoints and Locations.",
            valueName: "url"))
    var publicURL: String

    @Option(help: ArgumentHelp("The MQTT broker.", valueName: "mqtt://host:port|mqtts://host:port"))
    var broker = "mqtt://127.0.0.1:1883"

    @Option(help: "The broker user name.")
    var username: String?

    @Option(
        name: .customLong("password-file"),
        help: ArgumentHelp("A file holding the broker password (else $\(Self.passwordVariable)).", valueName: "file"))
    var passwordFile: String?

    @Option(
        name: .customLong("ca-file"), help: ArgumentHelp("CA certificates for the broker's TLS.", valueName: "file"))
    var caFile: String?

    @Option(
        name: .customLong("certificate-file"),
        help: ArgumentHelp("A client certificate for the broker's TLS.", valueName: "file"))
    var certificateFile: String?

    @Option(name: .customLong("key-file"), help: ArgumentHelp("The client certificate's key.", valueName: "file"))
    var keyFile: String?

    @Option(
        name: .customLong("client-id"),
        help: ArgumentHelp("The MQTT client id (default: lifecycle-push-gateway-<random>).", valueName: "id"))
    var clientID: String?

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Close a connection with no request in progress after this long (longer than a load balancer's usual 60 s).",
            valueName: "seconds"))
    var idleTimeout: Double = Self.seconds(ConnectionLimits.defaultIdleTimeout)

    @Option(
        name: .customLong("header-timeout"),
        help: ArgumentHelp(
            "A request's head must arrive within this long of its first byte, else 408 and close.",
            valueName: "seconds"))
    var headerTimeout: Double = Self.seconds(ConnectionLimits.defaultHeaderTimeout)

    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp(
            "A request's body must arrive within this long of its head, else 408 and close.",
            valueName: "seconds"))
    var bodyTimeout: Double = Self.seconds(ConnectionLimits.defaultBodyTimeout)

    @Option(
        name: .customLong("max-connections"),
        help: ArgumentHelp(
            "Connections open at once; more are accepted and closed at once (default: \(ConnectionLimits.connectionCeiling), or the open-file limit less \(ConnectionLimits.reservedDescriptors) when that is lower).",
            valueName: "count"))
    var maximumConnections: Int?

    @Option(
        name: .customLong("tls-certificate"),
        help: ArgumentHelp(
            "Serve HTTPS with this certificate chain (PEM, the server's certificate first).", valueName: "file"))
    var tlsCertificate: String?

    @Option(
        name: .customLong("tls-key"), help: ArgumentHelp("The TLS certificate's private key (PEM).", valueName: "file"))
    var tlsKey: String?

    /// An unparsed command (ArgumentParser fills the options in).
    package init() {}

    /// Checks the options (exit status 2 on failure).
    package func validate() throws {
        guard ListenAddress(listen) != nil else {
            throw ValidationError(
                "--listen must be HOST:PORT (for example 127.0.0.1:8080 or [::1]:8080), not '\(listen)'")
        }
        guard PublicURL.normalize(publicURL) != nil else {
            throw ValidationError("--public-url must be an http or https origin without a path, not '\(publicURL)'")
        }
        do {
            _ = try BrokerConfiguration(url: broker, clientID: clientID ?? "check")
        } catch {
            throw ValidationError("--broker: \(error)")
        }
        if (certificateFile == nil) != (keyFile == nil) {
            throw ValidationError("--certificate-file and --key-file go together")
        }
        if (tlsCertificate == nil) != (tlsKey == nil) {
            throw ValidationError("--tls-certificate and --tls-key go together")
        }
        for (name, path) in [
            ("--ca-file", caFile), ("--certificate-file", certificateFile), ("--key-file", keyFile),
            ("--tls-certificate", tlsCertificate), ("--tls-key", tlsKey),
        ] {
            if let path, path.isEmpty { throw ValidationError("\(name) must not be empty") }
        }
        if let passwordFile, passwordFile.isEmpty { throw ValidationError("--password-file must not be empty") }
        for (name, value) in [
            ("--idle-timeout", idleTimeout), ("--header-timeout", headerTimeout), ("--body-timeout", bodyTimeout),
        ] where !(value > 0 && value <= Self.longestTimeout) {
            throw ValidationError("\(name) must be more than 0 and at most \(Int(Self.longestTimeout)) seconds")
        }
        if let maximumConnections, maximumConnections < 1 {
            throw ValidationError("--max-connections must be at least 1")
        }
    }

    /// The longest timeout the options take: a day.
    static let longestTimeout: Double = 86_400

    /// The connection limits the options set.
    var connectionLimits: ConnectionLimits {
        ConnectionLimits(
            idleTimeout: Self.timeAmount(idleTimeout), headerTimeout: Self.timeAmount(headerTimeout),
            bodyTimeout: Self.timeAmount(bodyTimeout),
            maximumConnections: maximumConnections ?? ConnectionLimits.defaultMaximumConnections())
    }

    private static func seconds(_ amount: TimeAmount) -> Double {
        Double(amount.nanoseconds) / 1e9
    }

    private static func timeAmount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    /// Reads the configuration file, then parses the settings and the command line and runs the
    /// gateway (``UsageErrorExit/runMain(arguments:explain:)``); a file that cannot be used is a
    /// usage error (exit status 2) naming the file, the line and what to do.
    ///
    /// - Parameters:
    ///   - commandLine: The arguments after the program name.
    package static func main(commandLine: [String]) async {
        let arguments: ConfigurationFileArguments
        do {
            arguments = try ConfigurationFileArguments(
                commandLine: commandLine, defaultPath: defaultConfigurationPath, section: configurationSection,
                command: Self.self)
        } catch {
            StandardError.write(line: "lifecycle-push-gateway: \(error.message)")
            Glibc.exit(ExitStatus.usage)
        }
        await runMain(arguments: arguments.arguments, explain: arguments.explain)
    }

    /// Runs the gateway until SIGTERM or SIGINT.
    ///
    /// - Throws: `ExitCode(1)` when it cannot start.
    package func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        let logger = Logger(label: "lifecycle-push-gateway")
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[GatewayMetrics.publishLatency] = Self.publishLatencyBuckets
        MetricsSystem.bootstrap(factory)
        do {
            try await serve(logger: logger, metricsText: { registry.emitToString() })
        } catch {
            StandardError.write(line: "lifecycle-push-gateway: \(error)")
            throw ExitCode(1)
        }
    }

    /// The publish latency histogram's buckets: a push to a broker on the same host takes well under
    /// a millisecond, one across a network a few; past a second it is close to a timeout.
    static let publishLatencyBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(100), .milliseconds(250), .seconds(1), .seconds(5),
    ]

    /// Runs the broker link and the HTTP server as one service group until SIGTERM or SIGINT.
    ///
    /// - Parameters:
    ///   - logger: The gateway's log.
    ///   - metricsText: The Prometheus text of the bootstrapped registry, for `GET /metrics`.
    private func serve(logger: Logger, metricsText: @escaping @Sendable () -> String) async throws {
        let address = ListenAddress(listen)!
        let publicURL = PublicURL.normalize(self.publicURL)!
        var configuration = try BrokerConfiguration(
            url: broker, clientID: clientID ?? "lifecycle-push-gateway-\(UUID().uuidString.prefix(8).lowercased())",
            username: username, password: try password())
        configuration.caFile = caFile
        configuration.certificateFile = certificateFile
        configuration.keyFile = keyFile
        // Nothing queued for the gateway is worth keeping: its subscription is sent again and the
        // retained registrations re-read on every connect.
        configuration.cleanSession = true

        let tls = try serverTLS()
        let limits = connectionLimits
        if let openFiles = ConnectionLimits.openFileLimit(),
            limits.maximumConnections > openFiles - ConnectionLimits.reservedDescriptors
        {
            logger.warning(
                "--max-connections leaves too few file descriptors: accepts will pause on EMFILE",
                metadata: ["max-connections": "\(limits.maximumConnections)", "open-file-limit": "\(openFiles)"])
        }
        let brokerLoop = try EventLoop(name: "broker")
        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, System.coreCount))
        defer { brokerLoop.shutdown() }
        let registrations = RegistrationTable()
        let metrics = GatewayMetrics()
        let link = BrokerPushLink(
            configuration: configuration, loop: brokerLoop, registrations: registrations, logger: logger,
            metrics: metrics)
        let gateway = PushGateway(
            registrations: registrations, publisher: link, publicURL: publicURL, logger: logger, metrics: metrics,
            metricsText: metricsText)
        let server = GatewayServer(
            address: address, group: group, gateway: gateway, limits: limits, tls: tls, logger: logger)
        // A graceful shutdown stops the services in reverse order: the server first (it finishes
        // the requests in flight, which may still publish), then the broker link.
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: link), .init(service: server)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        do {
            try await services.run()
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
        try? await group.shutdownGracefully()
        logger.notice("stopped")
    }

    /// The TLS server context of `--tls-certificate` and `--tls-key`, or `nil` without them.
    private func serverTLS() throws -> NIOSSLContext? {
        guard let tlsCertificate, let tlsKey else { return nil }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(tlsCertificate)
        } catch {
            throw GatewayStartError(
                .tls, "--tls-certificate: cannot read a PEM certificate chain from \(tlsCertificate)", underlying: error
            )
        }
        guard !chain.isEmpty else {
            throw GatewayStartError(.tls, "--tls-certificate: \(tlsCertificate) holds no PEM certificate")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: tlsKey, format: .pem)
        } catch {
            throw GatewayStartError(.tls, "--tls-key: cannot read a PEM private key from \(tlsKey)", underlying: error)
        }
        do {
            return try NIOSSLContext(
                configuration: .makeServerConfiguration(
                    certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)))
        } catch {
            throw GatewayStartError(
                .tls, "--tls-certificate and --tls-key do not make a TLS server (is the key the certificate's?)",
                underlying: error)
        }
    }

    /// The broker password: the file's first line, else the environment variable, else none.
    private func password() throws -> String? {
        if let passwordFile {
            do {
                return try BrokerConfiguration.password(fromFile: passwordFile)
            } catch {
                throw GatewayStartError(.passwordFile, "--password-file: \(error.message)", underlying: error)
            }
        }
        return ProcessInfo.processInfo.environment[Self.passwordVariable]
    }
}
