import CommandLineSupport
import LifecyclePushGateway

// The executable only runs the command; the gateway itself is the LifecyclePushGateway library,
// so the tests and the fuzz targets link the same request decoding the binary runs.
// runMain: parse, run, and exit 2 on a usage error (UsageErrorExit).
await PushGatewayCommand.runMain()
