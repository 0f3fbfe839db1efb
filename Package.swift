// swift-tools-version: 6.1
import PackageDescription

let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let unixSignals: Target.Dependency = .product(name: "UnixSignals", package: "swift-service-lifecycle")

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
        .executable(name: "lifecycle-example", targets: ["LifecycleExample"]),
        .executable(name: "counter-app", targets: ["CounterApp"]),
        .executable(name: "lifecycle-bench", targets: ["LifecycleBench"]),
        .executable(name: "bare-swift-process", targets: ["BareSwiftProcess"]),
        .executable(name: "lifecycled", targets: ["lifecycled"]),
        .executable(name: "lifecyclectl", targets: ["lifecyclectl"]),
    ],
    dependencies: [
        // Logging is the one dependency of the core: every module logs through swift-log.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The example, the benchmark and lifecyclectl parse command lines.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Apps run as a Service in a ServiceGroup; UnixSignals gives an fd-free, event-driven SIGTERM.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
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
        .target(name: "SystemdBusTesting", dependencies: ["SystemdBus", "CLinuxSupport"]),
        // lifecycled's protocol and the app side of it; UnixSignals traps SIGTERM for LifecycledHost.
        .target(name: "LifecycledClient", dependencies: ["AppLifecycle", "SystemdBus", logging, unixSignals]),
        .target(
            name: "AppLifecycleSystemd",
            dependencies: [
                "AppLifecycle", "SystemdBus", "LifecycledClient", "CLinuxSupport", logging,
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
                argumentParser, logging,
            ],
            path: "Examples/LifecycleExample"
        ),
        .executableTarget(
            name: "CounterApp",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "LifecycledClient", "SystemdBus", argumentParser, logging,
            ],
            path: "Examples/CounterApp"
        ),
        // The two executables' shared command-line behaviour (usage errors exit 2).
        .target(name: "CommandLineSupport", dependencies: [argumentParser]),
        .executableTarget(
            name: "lifecycled",
            dependencies: [
                "AppLifecycle", "LifecycledClient", "AppLifecycleSystemd", "SystemdBus", "CLinuxSupport",
                "CommandLineSupport",
                argumentParser, logging,
            ]
        ),
        .executableTarget(
            name: "lifecyclectl",
            // LifecycledClient: lifecyclectl speaks lifecycled's protocol through the same codec and
            // subscriber the apps use, rather than a copy of them; it links no host bridge.
            dependencies: ["AppLifecycle", "SystemdBus", "LifecycledClient", "CommandLineSupport", argumentParser]
        ),
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        // The idle benchmark's reference process: FoundationEssentials and nothing else.
        .executableTarget(name: "BareSwiftProcess", path: "Benchmarks/BareSwiftProcess"),
        .executableTarget(
            name: "LifecycleBench",
            dependencies: [
                "AppLifecycle", "AppLifecycleSystemd", "LifecycledClient", "AppLifecycleTesting", "SystemdBus",
                "SystemdBusTesting", "CAllocationCounter", argumentParser,
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
                "AppLifecycle", "LifecycledClient", "AppLifecycleTesting", "SystemdBus", "SystemdBusTesting",
            ],
            path: "Tests/LifecycledTestSupport"
        ),
        .testTarget(
            name: "LifecycledClientTests",
            dependencies: [
                "LifecycledClient", "AppLifecycle", "AppLifecycleTesting", "SystemdBusTesting", "LifecycledTestSupport",
            ]
        ),
        .testTarget(
            name: "AppLifecycleSystemdTests",
            dependencies: [
                "AppLifecycleSystemd", "LifecycledClient", "AppLifecycle", "AppLifecycleTesting", "SystemdBusTesting",
                "LifecycledTestSupport", unixSignals,
            ]
        ),
        .testTarget(
            name: "AppLifecycleServiceTests",
            dependencies: [
                "AppLifecycleService", "AppLifecycleSystemd", "AppLifecycle", "AppLifecycleTesting", serviceLifecycle,
            ]
        ),
        .testTarget(
            name: "LifecycledTests",
            dependencies: [
                "lifecycled", "AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", "LifecycledClient",
                "SystemdBus", "SystemdBusTesting", "LifecycledTestSupport",
            ]
        ),
        .testTarget(
            name: "LifecyclectlTests",
            dependencies: [
                "lifecyclectl", "AppLifecycle", "AppLifecycleTesting", "LifecycledClient", "SystemdBus",
                "SystemdBusTesting",
                "LifecycledTestSupport", argumentParser,
            ]
        ),
        .testTarget(name: "CommandLineSupportTests", dependencies: ["CommandLineSupport", argumentParser]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", "SystemdBus", "SystemdBusTesting",
            ]
        ),
    ]
)
