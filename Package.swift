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
        .library(name: "AppLifecycleSystemd", targets: ["AppLifecycleSystemd"]),
        .executable(name: "lifecycle-example", targets: ["LifecycleExample"]),
        .executable(name: "counter-app", targets: ["CounterApp"]),
        .executable(name: "lifecycle-bench", targets: ["LifecycleBench"]),
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
        .target(name: "SystemdBus", dependencies: ["CSystemd", "CSystemdShim", logging]),
        .target(
            name: "AppLifecycleSystemd",
            dependencies: ["AppLifecycle", "SystemdBus", logging, serviceLifecycle, unixSignals]
        ),
        .executableTarget(
            name: "LifecycleExample",
            dependencies: ["AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", argumentParser, logging],
            path: "Examples/LifecycleExample"
        ),
        .executableTarget(
            name: "CounterApp",
            dependencies: ["AppLifecycle", "AppLifecycleSystemd", argumentParser, logging],
            path: "Examples/CounterApp"
        ),
        // The two executables' shared command-line behaviour (usage errors exit 2).
        .target(name: "CommandLineSupport", dependencies: [argumentParser]),
        .executableTarget(
            name: "lifecycled",
            dependencies: ["AppLifecycle", "AppLifecycleSystemd", "SystemdBus", "CSystemdShim", "CommandLineSupport", argumentParser, logging]
        ),
        .executableTarget(
            name: "lifecyclectl",
            // AppLifecycleSystemd too: lifecyclectl speaks lifecycled's protocol through the same
            // codec and subscriber the apps use, rather than a copy of them.
            dependencies: ["AppLifecycle", "SystemdBus", "AppLifecycleSystemd", "CommandLineSupport", argumentParser]
        ),
        .target(name: "CAllocationCounter", path: "Benchmarks/CAllocationCounter"),
        .executableTarget(
            name: "LifecycleBench",
            dependencies: ["AppLifecycle", "AppLifecycleSystemd", "AppLifecycleTesting", "SystemdBus", "CAllocationCounter", argumentParser],
            path: "Benchmarks/LifecycleBench"
        ),
        .testTarget(name: "AppLifecycleTests", dependencies: ["AppLifecycle", "AppLifecycleTesting"]),
        .testTarget(name: "AppLifecycleTestingTests", dependencies: ["AppLifecycle", "AppLifecycleTesting"]),
        .testTarget(name: "SystemdBusTests", dependencies: ["SystemdBus", "AppLifecycleTesting"]),
        // The fake lifecycled that both the app-side and the lifecyclectl tests talk to.
        .target(
            name: "LifecycledTestSupport",
            dependencies: ["AppLifecycle", "AppLifecycleSystemd", "AppLifecycleTesting", "SystemdBus"],
            path: "Tests/LifecycledTestSupport"
        ),
        .testTarget(
            name: "AppLifecycleSystemdTests",
            dependencies: ["AppLifecycleSystemd", "AppLifecycle", "AppLifecycleTesting", "LifecycledTestSupport"]
        ),
        .testTarget(
            name: "LifecycledTests",
            dependencies: [
                "lifecycled", "lifecyclectl", "AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", "SystemdBus",
                "LifecycledTestSupport",
            ]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["AppLifecycle", "AppLifecycleTesting", "AppLifecycleSystemd", "SystemdBus"]
        ),
    ]
)
