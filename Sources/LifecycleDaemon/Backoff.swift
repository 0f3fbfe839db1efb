/// The daemon's one retry rule: each delay doubles, from ``initial`` up to ``maximum``, until a
/// success resets it.
///
/// Used wherever lifecycled tries something again after a failure it cannot fix itself: a state
/// file that could not be written (a full disk), a push its app could not take yet.
struct Backoff: Sendable, Hashable {
    /// The first delay.
    let initial: Duration
    /// The longest delay.
    let maximum: Duration
    /// The last delay handed out, `nil` before the first failure or after a reset.
    private(set) var current: Duration?

    /// Writes of state files: from 1 s, doubled up to 30 s.
    static let stateWrite = Backoff(initial: .seconds(1), maximum: .seconds(30))
    /// Deliveries to an app: from 1 s, doubled up to a minute.
    static let delivery = Backoff(initial: .seconds(1), maximum: .seconds(60))

    /// A backoff that starts at `initial` and doubles up to `maximum`.
    init(initial: Duration, maximum: Duration) {
        precondition(initial > .zero && maximum >= initial, "a backoff needs 0 < initial <= maximum")
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next try: ``initial`` after a reset, else the last one doubled (at most ``maximum``).
    mutating func next() -> Duration {
        let delay = current.map { min($0 * 2, maximum) } ?? initial
        current = delay
        return delay
    }

    /// Starts again from ``initial`` (after a success).
    mutating func reset() {
        current = nil
    }
}
