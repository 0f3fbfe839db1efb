import Logging

/// The logger the window-source tests hand their sources (libraries take a `Logger`).
let testLogger = Logger(label: "AppLifecycleSystemdTests.windows")
