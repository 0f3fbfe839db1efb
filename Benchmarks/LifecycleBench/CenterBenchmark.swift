import AppLifecycle
import ArgumentParser
import CAllocationCounter
import Foundation
import Synchronization

/// `lifecycle-bench center`: a typed post and a named post to 1, 10, 100 and 1,000 observers,
/// against Foundation's `NotificationCenter` in the same run.
struct CenterBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "center", abstract: "Typed and named posts against Foundation's NotificationCenter.")

    @Flag(help: "One JSON object per line.")
    var json = false

    @Option(help: "Observer counts to measure.")
    var observers: [Int] = [1, 10, 100, 1000]

    /// The count every observer increments, so no observer is optimised away.
    ///
    /// `@unchecked Sendable` is safe here: every benchmark posts on one thread and both centers
    /// call their observers synchronously on the posting thread, so `value` is never touched
    /// concurrently. A plain increment keeps the observer's own cost out of the comparison.
    final class Counter: @unchecked Sendable {
        var value = 0
        func bump() { value &+= 1 }
    }

    @MainActor
    func run() async throws {
        if !json {
            print("benchmark     observers     ours ns   Foundation ns    ratio   allocs/post")
        }
        for count in observers {
            let typed = measureTyped(observers: count)
            let named = measureNamed(observers: count)
            report("typed-post", count, typed)
            report("named-post", count, named)
        }
    }

    struct Result {
        let ours: Double
        let reference: Double
        let allocationsPerPost: Double
    }

    func report(_ name: String, _ count: Int, _ result: Result) {
        let ratio = result.reference / result.ours
        if json {
            print(
                Measurement.jsonLine([
                    "benchmark": name, "observers": count, "ours_ns": result.ours, "reference_ns": result.reference,
                    "ratio": ratio, "allocations_per_post": result.allocationsPerPost,
                ]))
        } else {
            let padded = name.padding(toLength: 12, withPad: " ", startingAt: 0)
            print(
                "\(padded)  \(String(format: "%9d", count))  \(String(format: "%10.1f", result.ours))  \(String(format: "%14.1f", result.reference))  \(String(format: "%6.1fx", ratio))   \(Measurement.format(result.allocationsPerPost, 3))"
            )
        }
    }

    static func iterations(for observers: Int) -> Int { max(200, 400_000 / observers) }

    @MainActor
    func measureTyped(observers count: Int) -> Result {
        let counter = Counter()
        let center = LifecycleNotificationCenter()
        let tokens = (0..<count).map { _ in
            center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in counter.bump() }
        }
        let message = Application.DidBecomeActiveMessage()
        let iterations = Self.iterations(for: count)
        let ours = Measurement.nanosecondsPerOperation(iterations: iterations) { n in
            for _ in 0..<n { center.post(message) }
        }
        allocation_counter_start()
        for _ in 0..<1000 { center.post(message) }
        let allocations = Double(allocation_counter_stop()) / 1000
        let reference = foundationPost(observers: count, iterations: iterations)
        withExtendedLifetime(tokens) {}
        return Result(ours: ours, reference: reference, allocationsPerPost: allocations)
    }

    @MainActor
    func measureNamed(observers count: Int) -> Result {
        let counter = Counter()
        let center = LifecycleNotificationCenter()
        let name = Application.didBecomeActiveNotification
        let tokens = (0..<count).map { _ in
            center.addObserver(forName: name) { _ in counter.bump() }
        }
        let iterations = Self.iterations(for: count)
        let ours = Measurement.nanosecondsPerOperation(iterations: iterations) { n in
            for _ in 0..<n { center.post(name: name) }
        }
        allocation_counter_start()
        for _ in 0..<1000 { center.post(name: name) }
        let allocations = Double(allocation_counter_stop()) / 1000
        let reference = foundationPost(observers: count, iterations: iterations)
        withExtendedLifetime(tokens) {}
        return Result(ours: ours, reference: reference, allocationsPerPost: allocations)
    }

    /// Foundation's post of the same name to the same number of block observers.
    func foundationPost(observers count: Int, iterations: Int) -> Double {
        let counter = Counter()
        let center = NotificationCenter()
        let name = Notification.Name("UIApplicationDidBecomeActiveNotification")
        let tokens = (0..<count).map { _ in
            center.addObserver(forName: name, object: nil, queue: nil) { _ in counter.bump() }
        }
        let result = Measurement.nanosecondsPerOperation(iterations: iterations) { n in
            for _ in 0..<n { center.post(name: name, object: nil) }
        }
        for token in tokens { center.removeObserver(token) }
        return result
    }
}
