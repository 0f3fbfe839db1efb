// swift-tools-version: 6.1
import PackageDescription

let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioEmbedded: Target.Dependency = .product(name: "NIOEmbedded", package: "swift-nio")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics")
let prometheus: Target.Dependency = .product(name: "Prometheus", package: "swift-prometheus")

let package = Package(
    name: "AppLifecycle",
    products: [
        .library(name: "AppLifecycle", targets: ["AppLifecycle"]),
        .library(name: "AppLifecycleTesting", targets: ["AppLifecycleTesting"]),
        .library(name: "SystemdBus", targets: ["SystemdBus"]),
        .library(name: "SystemdBusTesting", targets: ["SystemdBusTesting"]),
        .library(name: "LifecycledClient", targets: ["LifecycledClient"]),
        .library(name: "AppLifecycleSystemd", targets: ["AppLifecycleSystemd"]),
        .library(name: "AppLifecycleService", targets: ["AppLifecycleService"]),
        .library(name: "WebPush", targets: ["WebPush"]),
        .library(name: "BrokerLink", targets: ["BrokerLink"]),
        .library(name: "LifecycledProtocol", targets: ["LifecycledProtocol"]),
        .library(name: "FleetProtocol", targets: ["FleetProtocol"]),
        .library(name: "DesktopIntegration", targets: ["DesktopIntegration"]),
        .library(name: "InProcessHost", targets: ["InProcessHost"]),
        .library(name: "AppLifecycleMain", targets: ["AppLifecycleMain"]),
        .executable(name: "lifecycle-example", targets: ["LifecycleExample"]),
        .executable(name: "counter-app", targets: ["CounterApp"]),
        .executable(name: "lifecycle-bench", targets: ["LifecycleBench"]),
        .executable(name: "bare-swift-process", targets: ["BareSwiftProcess"]),
        .executable(name: "lifecycled", targets: ["lifecycled"]),
        .executable(name: "lifecyclectl", targets: ["lifecyclectl"]),
        .executable(name: "lifecycle-push-gateway", targets: ["lifecycle-push-gateway"]),
    ],
    dependencies: [
        // Logging is the one dependency of the core: every module logs through swift-log.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The example, the benchmark and lifecyclectl parse command lines.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Apps run as a Service in a ServiceGroup; UnixSignals gives an fd-free, event-driven SIGTERM.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Web Push (RFC 8291 aes128gcm, RFC 8292 VAPID): P-256 ECDH and ECDSA, HKDF, AES-GCM. Version 4
        // builds on FoundationEssentials (3.x imports all of Foundation, and ICU with it).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        // HTTP/1.1: the Web Push gateway's server, and the small client (HTTPClientSupport) that
        // lifecyclectl push and the benchmark POST with. lifecycled and the apps do not link it.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS on those NIO channels: `lifecyclectl push` to an https:// gateway (NIOSSLClientHandler, the
        // system's trust roots or --ca-file) and the gateway serving TLS itself (--tls-certificate). NIO's
        // own TLS rather than async-http-client, which would bring a second HTTP stack. BoringSSL is built
        // in, so lifecycled, which links none of NIO, stays free of it.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // The gateway's metrics API (Counter, Timer, Gauge): its library records through it, backend-free.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // The backend the gateway's command bootstraps: Prometheus text on GET /metrics.
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .target(name: "AppLifecycle", dependencies: [logging]),
        .target(name: "AppLifecycleTesting", dependencies: ["AppLifecycle"]),
        .systemLibrary(
            name: "CSystemd",
            pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]
        ),
        .target(name: "CSystemdShim", dependencies: ["CSystemd"]),
        // The Linux calls Swift's Glibc module lacks (timerfd, pidfd, clone3, closefrom, mkostemp, spawn).
        .target(name: "CLinuxSupport"),
        .target(name: "SystemdBus", dependencies: ["CSystemd", "CSystemdShim", logging]),
        // D-Bus fixtures: private bus daemons, python-dbusmock, child processes.
        .target(name: "SystemdBusTesting", dependencies: ["SystemdBus", "CLinuxSupport", logging]),
        // The whole contract of org.applifecycle.Lifecycled1 (members, signatures, errors, limits, the
        // userInfo and command codecs) and the UnifiedPush D-Bus names lifecycled serves: declared once,
        // shared by the daemon, its clients and lifecyclectl.
        .target(name: "LifecycledProtocol", dependencies: ["AppLifecycle", "SystemdBus"]),
        // The fleet's wire formats: topics, push envelopes, registration records, device identity.
        // Base64URLCoding, not WebPush: lifecycled links FleetProtocol and must not link swift-crypto.
        .target(name: "FleetProtocol", dependencies: ["Base64URLCoding", "CSystemd"]),
        // What both hosts use of the desktop: desktop entries, MIME apps, the URL opener,
        // org.freedesktop.Application, org.freedesktop.Notifications, the idle inhibitor.
        .target(
            name: "DesktopIntegration", dependencies: ["AppLifecycle", "SystemdBus", "LifecycledProtocol", logging]),
        // The one group-commit writer of the state files lifecycled and apps keep (fsync off the main actor).
        .target(name: "DurableState", dependencies: ["AppLifecycle", "SystemdBus", logging]),
        // The one local-notification engine: schedule, its file and writer, the CLOCK_REALTIME alarm, banners.
        // It takes local time and the kernel's clock interfaces from the bridge.
        .target(
            name: "LocalNotificationEngine",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "LifecycledProtocol", "DesktopIntegration",
                "DurableState",
                "CLinuxSupport", logging,
            ]
        ),
        // Background fetch's one scheduler, for lifecycled's apps and SystemdHost's one app: when each app
        // is due, coalesced wake-ups, the result rule, the device's conditions, and its state file.
        .target(
            name: "FetchScheduling",
            dependencies: ["AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "LifecycledProtocol", logging]
        ),
        // The app's UnifiedPush connector, its registration state and Web Push decryption (only apps link it).
        .target(
            name: "UnifiedPushClient",
            dependencies: ["AppLifecycle", "SystemdBus", "LifecycledProtocol", "DurableState", "WebPush", logging]
        ),
        // The app side of lifecycled: LifecycledHost (its signals from the bridge) and LifecycleSubscriber.
        .target(
            name: "LifecycledClient",
            dependencies: [
                "AppLifecycle", "SystemdBus", "AppLifecycleSystemd", "LifecycledProtocol", "DesktopIntegration",
                "UnifiedPushClient", logging,
            ]
        ),
        // The host bridge: the machine's facts (logind, clocks, memory pressure, ...) as HostEvents.
        .target(
            name: "AppLifecycleSystemd",
            // UnixSignals (swift-service-lifecycle's small module, not ServiceLifecycle): SIGTERM and SIGINT as events.
            // CWayland and CXCB: the window sources' libwayland-client and libxcb, loaded only when that source starts.
            dependencies: ["AppLifecycle", "SystemdBus", "CLinuxSupport", "CWayland", "CXCB", logging, unixSignals]
        ),
        // libxcb (<xcb/xcb.h> from libxcb1-dev) loaded with dlopen when the X11 window source starts, not
        // linked: a process without an X display never maps it (nor libXau, libXdmcp, libbsd, libmd).
        .target(name: "CXCB", dependencies: ["CLinuxSupport"]),
        // The in-process host: SystemdHost runs one app on the bridge, without lifecycled.
        .target(
            name: "InProcessHost",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "LifecycledProtocol", "DesktopIntegration",
                "LocalNotificationEngine", "UnifiedPushClient", "FetchScheduling", "DurableState", logging,
            ]
        ),
        // Host selection and main, above both hosts.
        .target(
            name: "AppLifecycleMain",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "InProcessHost", "LifecycledClient", "LifecycledProtocol",
                "SystemdBus", logging,
            ]
        ),
        // An app as a swift-service-lifecycle Service. A module of its own so that lifecycled, which
        // links the host bridge, does not carry ServiceLifecycle and swift-async-algorithms (2 MiB of
        // idle RSS, measured).
        .target(name: "AppLifecycleService", dependencies: ["AppLifecycle", serviceLifecycle]),
        .executableTarget(
            name: "LifecycleExample",
            dependencies: [
                "AppLifecycle", "AppLifecycleTesting", "SystemdBus", "SystemdBusTesting", "AppLifecycleSystemd",
                "InProcessHost", "LifecycledProtocol", argumentParser, logging,
            ],
            path: "Examples/LifecycleExample"
        ),
        .executableTarget(
            name: "CounterApp",
            dependencies: [
                "AppLifecycle", "AppLifecycleMain", "InProcessHost", "AppLifecycleSystemd", "LifecycledClient",
                "LifecycledProtocol", "SystemdBus", argumentParser, logging,
            ],
            path: "Examples/CounterApp"
        ),
        // Web Push's message encryption and VAPID, shared by apps, lifecyclectl and the gateway.
        // (It re-exports Base64URLCoding: base64url is the text form of its keys, salts and tokens.)
        .target(name: "WebPush", dependencies: ["Base64URLCoding", crypto]),
        // Base64url (RFC 4648 §5) without swift-crypto, for FleetProtocol and through it lifecycled.
        .target(name: "Base64URLCoding"),
        // libmosquitto (<mosquitto.h> from libmosquitto-dev) loaded with dlopen when a connection starts,
        // not linked: lifecycled without a broker never maps it or OpenSSL (1.7 MiB of idle RSS, measured).
        .target(name: "CMosquitto", dependencies: ["CLinuxSupport"]),
        // libwayland-client (<wayland-client-core.h> from libwayland-dev) loaded with dlopen when a Wayland
        // window source starts, and the wlroots foreign-toplevel protocol's interface tables, written by hand.
        .target(name: "CWayland", dependencies: ["CLinuxSupport"]),
        // An MQTT client (libmosquitto) on a SystemdBus event loop: transport only, no fleet schema.
        .target(name: "BrokerLink", dependencies: ["CMosquitto", "SystemdBus", logging]),
        // The gateway's logic: routing, the checks of a push request, the HTTP/1.1 server and its limits,
        // the broker link and the command, which runs the server and the link as a ServiceGroup.
        // A library so that its request decoding can be fuzzed.
        .target(
            name: "LifecyclePushGateway",
            dependencies: [
                "WebPush", "FleetProtocol", "BrokerLink", "SystemdBus", "CommandLineSupport", argumentParser, logging,
                nioCore, nioPosix, nioHTTP1, nioSSL, serviceLifecycle, metrics, prometheus,
            ]
        ),
        // The `lifecycle-push-gateway` binary: a main that runs LifecyclePushGateway's command.
        .executableTarget(
            name: "lifecycle-push-gateway", dependencies: ["LifecyclePushGateway", "CommandLineSupport"]),
        // The two executables' shared command-line behaviour (usage errors exit 2).
        .target(name: "CommandLineSupport", dependencies: [argumentParser]),
        // A small HTTP/1.1 client on swift-nio, over TCP or TLS (swift-nio-ssl), an app server's side of the
        // gateway: what `lifecyclectl push` and the benchmark's pushes send. Its own module so that neither
        // links the gateway.
        .target(name: "HTTPClientSupport", dependencies: [nioCore, nioPosix, nioHTTP1, nioSSL]),
        // lifecycled's logic: the registry, policy, hosted apps, local notifications, the push
        // distributor and the fleet link. A library so that its decoders can be fuzzed and its main stays thin.
        .target(
            name: "LifecycleDaemon",
            dependencies: [
                "AppLifecycle", "LifecycledProtocol", "AppLifecycleSystemd", "DesktopIntegration",
                "LocalNotificationEngine", "DurableState", "FetchScheduling", "SystemdBus", "CLinuxSupport",
                "BrokerLink",
                "FleetProtocol", "CommandLineSupport", logging,
            ]
        ),
        .executableTarget(
            name: "lifecycled",
            dependencies: [
                "LifecycleDaemon", "AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "CommandLineSupport",
                argumentParser, logging,
            ]
        ),
        .executableTarget(
            name: "lifecyclectl",
            // LifecycledProtocol and LifecycledClient: lifecyclectl speaks lifecycled's protocol through the
            // same codecs and subscriber the apps use, rather than a copy of them (LifecycledClient brings
            // the bridge's signal watcher and the push client with it; lifecyclectl uses neither).
            // WebPush, HTTPClientSupport and BrokerLink: `push` encrypts and POSTs as an app server
            // does, `fleet` reads the broker.
            dependencies: [
                "AppLifecycle", "SystemdBus", "LifecycledProtocol", "LifecycledClient", "DesktopIntegration",
                "CommandLineSupport", "WebPush", "HTTPClientSupport", "BrokerLink", "FleetProtocol", argumentParser,
                logging,
            ]
        ),
        // libFuzzer targets for every decoder of outside input, one binary (Fuzz/README.md). The normal
        // build links a main that only explains how to run them; `make fuzz-smoke` builds it with
        // -DFUZZING and -sanitize=fuzzer,address.
        .executableTarget(
            name: "LifecycleFuzz",
            dependencies: [
                "LifecycleDaemon", "LifecyclePushGateway", "LifecycledProtocol", "DesktopIntegration",
                "LocalNotificationEngine", "FetchScheduling", "UnifiedPushClient", "AppLifecycleSystemd",
                "AppLifecycle",
                "SystemdBus",
                "CSystemd", "WebPush", "BrokerLink", "FleetProtocol", crypto, logging, nioCore,
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            path: "Fuzz/LifecycleFuzz"
        ),
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        // The idle benchmark's reference process: FoundationEssentials and nothing else.
        .executableTarget(name: "BareSwiftProcess", path: "Benchmarks/BareSwiftProcess"),
        .executableTarget(
            name: "LifecycleBench",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "InProcessHost", "LifecycledProtocol", "LifecycledClient",
                "AppLifecycleTesting", "SystemdBus", "SystemdBusTesting", "CAllocationCounter", "BrokerLink",
                "FleetProtocol", "BrokerTestSupport", "WebPush", "HTTPClientSupport", "LifecycleDaemon",
                "FetchScheduling",
                argumentParser, logging,
            ],
            path: "Benchmarks/LifecycleBench"
        ),
        .testTarget(name: "AppLifecycleTests", dependencies: ["AppLifecycle", "AppLifecycleTesting"]),
        .testTarget(name: "AppLifecycleTestingTests", dependencies: ["AppLifecycle", "AppLifecycleTesting"]),
        .testTarget(name: "SystemdBusTests", dependencies: ["SystemdBus", "SystemdBusTesting"]),
        .testTarget(name: "SystemdBusTestingTests", dependencies: ["SystemdBusTesting"]),
        // The fake lifecycled that both the app-side and the lifecyclectl tests talk to.
        .target(
            name: "LifecycledTestSupport",
            dependencies: [
                "AppLifecycle", "LifecycledProtocol", "LifecycledClient", "AppLifecycleTesting", "SystemdBus",
                "SystemdBusTesting",
            ],
            path: "Tests/LifecycledTestSupport"
        ),
        .testTarget(
            name: "LifecycledProtocolTests", dependencies: ["LifecycledProtocol", "AppLifecycle", "SystemdBus"]),
        .testTarget(name: "FleetProtocolTests", dependencies: ["FleetProtocol", "WebPush"]),
        .testTarget(
            name: "DesktopIntegrationTests",
            // LifecycledClient: the URL opener is also tested as an app reaches it, through its host.
            dependencies: [
                "DesktopIntegration", "LifecycledClient", "AppLifecycle", "SystemdBus", "SystemdBusTesting",
            ]
        ),
        .testTarget(
            name: "DurableStateTests", dependencies: ["DurableState", "AppLifecycle", "SystemdBusTesting", logging]),
        .testTarget(
            name: "FetchSchedulingTests",
            dependencies: [
                "FetchScheduling", "AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "SystemdBusTesting", logging,
            ]
        ),
        .testTarget(
            name: "LocalNotificationEngineTests",
            dependencies: [
                "LocalNotificationEngine", "AppLifecycleSystemd", "AppLifecycle", "SystemdBus", "SystemdBusTesting",
                "DesktopIntegration", logging,
            ]
        ),
        .testTarget(
            name: "AppLifecycleMainTests",
            dependencies: [
                "AppLifecycleMain", "InProcessHost", "AppLifecycleSystemd", "LifecycledClient", "LifecycledProtocol",
                "AppLifecycle", "AppLifecycleTesting", "SystemdBus", "SystemdBusTesting", "LifecycledTestSupport",
                logging,
            ]
        ),
        .testTarget(
            name: "LifecycledClientTests",
            dependencies: [
                "LifecycledClient", "LifecycledProtocol", "DesktopIntegration", "UnifiedPushClient", "AppLifecycle",
                "AppLifecycleTesting", "SystemdBus", "SystemdBusTesting", "LifecycledTestSupport", "WebPush", logging,
            ]
        ),
        .testTarget(
            name: "AppLifecycleSystemdTests",
            dependencies: [
                "AppLifecycleSystemd", "InProcessHost", "LifecycledProtocol", "AppLifecycle", "AppLifecycleTesting",
                "SystemdBus", "SystemdBusTesting", "LifecycledTestSupport", "CWayland", unixSignals,
            ]
        ),
        .testTarget(
            name: "AppLifecycleServiceTests",
            dependencies: [
                "AppLifecycleService", "AppLifecycleSystemd", "InProcessHost", "AppLifecycle", "AppLifecycleTesting",
                serviceLifecycle,
            ]
        ),
        .testTarget(
            name: "LifecycledTests",
            dependencies: [
                "lifecycled", "LifecycleDaemon", "AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd",
                "LifecycledProtocol", "LifecycledClient", "DesktopIntegration", "LocalNotificationEngine",
                "UnifiedPushClient", "FleetProtocol", "FetchScheduling", "AppLifecycleMain", "SystemdBus",
                "SystemdBusTesting", "LifecycledTestSupport",
                "BrokerLink", "BrokerTestSupport", "WebPush", logging,
            ]
        ),
        .testTarget(
            name: "LifecyclectlTests",
            dependencies: [
                "lifecyclectl", "AppLifecycle", "AppLifecycleTesting", "LifecycledProtocol", "LifecycledClient",
                "SystemdBus", "SystemdBusTesting", "LifecycledTestSupport", "BrokerTestSupport", argumentParser,
            ]
        ),
        .testTarget(name: "CommandLineSupportTests", dependencies: ["CommandLineSupport", argumentParser]),
        .testTarget(name: "WebPushTests", dependencies: ["WebPush", "SystemdBusTesting", crypto]),
        // A real mosquitto broker for the tests: its own config, port, persistence directory and ACL.
        .target(
            name: "BrokerTestSupport",
            dependencies: ["SystemdBusTesting", "BrokerLink", "SystemdBus"],
            path: "Tests/BrokerTestSupport"
        ),
        .testTarget(
            name: "BrokerLinkTests",
            dependencies: ["BrokerLink", "FleetProtocol", "BrokerTestSupport", "SystemdBus", "SystemdBusTesting"]
        ),
        .testTarget(
            name: "LifecyclePushGatewayTests",
            dependencies: [
                "LifecyclePushGateway", "lifecycle-push-gateway", "WebPush", "FleetProtocol", "BrokerLink",
                "BrokerTestSupport", "SystemdBus", "SystemdBusTesting", "HTTPClientSupport", logging, nioCore,
                nioEmbedded, metrics,
            ]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", "InProcessHost", "DesktopIntegration",
                "LocalNotificationEngine", "SystemdBus", "SystemdBusTesting", "WebPush", logging,
            ]
        ),
    ]
)
