import AppLifecycleSystemd
import SystemdBus
import SystemdBusTesting

/// A window source's update and when the consumer had it.
struct WindowSourceArrival: Sendable {
    var update: WindowSourceUpdate
    var instant: ContinuousClock.Instant
}

/// A started window source on a loop of its own, its updates recorded in order: what the suites of
/// the Wayland sources (wlroots and KWin) read from.
final class WindowSourceFollower<Source: WindowSource>: Sendable {
    let loop: EventLoop
    let source: Source
    let updates = ValueRecorder<WindowSourceArrival>()
    private let pump: Task<Void, Never>

    /// Starts a source made on a new loop; the source and loop are stopped if the start fails.
    ///
    /// - Parameters:
    ///   - loopName: The loop's thread name.
    ///   - makeSource: Makes the source on the loop.
    init(loopName: String, makeSource: (EventLoop) -> Source) async throws {
        loop = try EventLoop(name: loopName)
        source = makeSource(loop)
        let source = source
        let updates = updates
        pump = Task {
            for await update in source.updates { updates.add(WindowSourceArrival(update: update, instant: .now)) }
        }
        do {
            try await source.start()
        } catch {
            stop()
            throw error
        }
    }

    /// Takes updates until a `windows` set satisfies `condition`, and returns it.
    func windows(
        _ what: String, where condition: ([TopLevelWindow]) -> Bool = { _ in true }
    ) async throws -> [TopLevelWindow] {
        try await arrival(what, where: condition).windows
    }

    /// Takes updates until a `windows` set satisfies `condition`, and returns it with its arrival.
    func arrival(
        _ what: String, where condition: ([TopLevelWindow]) -> Bool = { _ in true }
    ) async throws -> (windows: [TopLevelWindow], instant: ContinuousClock.Instant) {
        while true {
            let arrival = try await updates.next(what, hangGuard: .seconds(20))
            if case .windows(let windows) = arrival.update, condition(windows) {
                return (windows, arrival.instant)
            }
        }
    }

    /// Takes updates until an `unavailable` one, and returns its reason.
    func unavailable() async throws -> String {
        while true {
            if case .unavailable(let reason) = try await updates.next("unavailable", hangGuard: .seconds(20)).update {
                return reason
            }
        }
    }

    /// Every `windows` set reported so far.
    var allSets: [[TopLevelWindow]] {
        updates.values.compactMap { if case .windows(let windows) = $0.update { windows } else { nil } }
    }

    func stop() {
        source.stop()
        pump.cancel()
        loop.shutdown()
    }
}
