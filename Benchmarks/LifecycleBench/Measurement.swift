import Foundation

/// Timing helpers shared by the benchmarks.
enum Measurement {
    /// Nanoseconds per operation: runs `body` in batches of `iterations` until at least
    /// `minimumDuration` passed, `repetitions` times, and returns the median batch.
    static func nanosecondsPerOperation(
        iterations: Int, repetitions: Int = 7, _ body: (Int) -> Void
    ) -> Double {
        body(max(1, iterations / 10))  // warm-up
        var samples: [Double] = []
        for _ in 0..<repetitions {
            let start = ContinuousClock.now
            body(iterations)
            let elapsed = ContinuousClock.now - start
            samples.append(elapsed.nanoseconds / Double(iterations))
        }
        return median(samples)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The value at a percentile (0...100) of some samples, by nearest rank.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// One JSON object per line, keys sorted.
    static func jsonLine(_ fields: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }
}

extension Duration {
    var nanoseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}
