import SystemdBus

extension Backoff {
    /// lifecycled's writes of state files (a full disk): from 1 s, doubled up to 30 s.
    static let stateWrite = Backoff(initial: .seconds(1), maximum: .seconds(30))
    /// lifecycled's deliveries to an app that cannot take them yet: from 1 s, doubled up to a minute.
    static let delivery = Backoff(initial: .seconds(1), maximum: .seconds(60))
}
