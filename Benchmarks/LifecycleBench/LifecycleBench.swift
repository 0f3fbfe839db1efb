import ArgumentParser

/// `lifecycle-bench`: measures AppLifecycle against a reference measured in the same run.
///
/// Every benchmark prints ratios against its reference (these machines are noisy, so absolute
/// numbers from another run mean little) and, with `--json`, one JSON object per line.
@main
struct LifecycleBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lifecycle-bench",
        abstract: "Benchmarks AppLifecycle against references measured in the same run.",
        subcommands: [
            CenterBenchmark.self, LatencyBenchmark.self, SleepDelayBenchmark.self, FanoutBenchmark.self,
            ThroughputBenchmark.self, IdleBenchmark.self, NotificationBenchmark.self, PushBenchmark.self,
            FleetBenchmark.self, ForegroundBenchmark.self, FetchBenchmark.self, FanoutWorker.self,
        ],
        defaultSubcommand: CenterBenchmark.self)
}
