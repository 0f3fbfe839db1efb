import CommandLineSupport
import LifecyclePushGateway

// The executable only runs the command; the gateway itself is the LifecyclePushGateway library,
// so the tests and the fuzz targets link the same request decoding the binary runs.
// main: the configuration file's settings, then the command line; parse, run, and exit 2 on a
// usage error or a configuration file that cannot be used.
await PushGatewayCommand.main(commandLine: Array(CommandLine.arguments.dropFirst()))
