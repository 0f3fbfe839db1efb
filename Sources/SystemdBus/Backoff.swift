/// The project's one retry rule: each delay doubles, from ``initial`` up to ``maximum``, until a
/// success resets it; optionally with jitter.
///
/// Everything that tries again after a failure it cannot fix itself takes its delays from a
/// `Backoff`: lifecycled's state-file writes (a full disk) and deliveries to an app not ready yet,
/// the MQTT connection's reconnects (``jitter`` ½, so a fleet does not come back in lock step after
/// a broker restart), the host bridge's bus reconnects, and the push gateway's pause when `accept`
/// runs out of descriptors.
///
/// It is a value that counts, not a timer: the caller sleeps or arms its own timer for the delay
/// ``next()`` returns, so tests can step it without a clock.
///
/// ```swift
/// var backoff = Backoff(initial: .seconds(1), maximum: .seconds(30))
/// while true {
///     do { try write(); backoff.reset(); break } catch { try await Task.sleep(for: backoff.next()) }
/// }
/// ```
public struct Backoff: Sendable, Hashable {
    /// The first delay after a reset.
    public let initial: Duration
    /// The longest delay.
    public let maximum: Duration
    /// The share of each delay that may be cut at random: 0 (the default) none, ½ a delay
    /// anywhere from half to all of it. A delay is never cut below ``initial``.
    public let jitter: Double
    /// The last delay before jitter, `nil` before the first failure or after a reset.
    public private(set) var current: Duration?

    /// A backoff that starts at `initial` and doubles up to `maximum`.
    ///
    /// - Parameters:
    ///   - initial: The first delay; more than zero.
    ///   - maximum: The longest delay; at least `initial`.
    ///   - jitter: The share of each delay that may be cut at random, 0 to 1.
    public init(initial: Duration, maximum: Duration, jitter: Double = 0) {
        precondition(initial > .zero && maximum >= initial, "a backoff needs 0 < initial <= maximum")
        precondition((0...1).contains(jitter), "a backoff's jitter is a share from 0 to 1")
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay before the next try: ``initial`` after a reset, else the last one doubled (at most
    /// ``maximum``), less a random share of at most ``jitter`` (never below ``initial``).
    public mutating func next() -> Duration {
        var random = SystemRandomNumberGenerator()
        return next(using: &random)
    }

    /// ``next()`` with the jitter drawn from `generator` (a seeded one in tests).
    public mutating func next<Generator: RandomNumberGenerator>(using generator: inout Generator) -> Duration {
        let delay = current.map { min($0 * 2, maximum) } ?? initial
        current = delay
        guard jitter > 0 else { return delay }
        return max(delay * Double.random(in: (1 - jitter)...1, using: &generator), initial)
    }

    /// Starts again from ``initial`` (after a success).
    public mutating func reset() {
        current = nil
    }
}
