import AppLifecycle

/// What the daemon does about a memory warning, decided from the hosted apps' states and sizes.
///
/// iOS's order: suspended apps are purged first (they run no code, so they lose nothing
/// they could save, and ending them frees memory without waking anyone), largest resident
/// set first so the fewest apps are ended; only then do the apps that run code get
/// `applicationDidReceiveMemoryWarning`, also largest first. Apps that are not running take
/// no part. Ties are broken by id so the plan is deterministic. Pure logic: the caller
/// carries it out (``AppProcess/terminate(policy:onStep:)`` and a bus signal).
struct MemoryPressurePlan: Sendable, Hashable {
    /// One hosted app as the plan sees it.
    struct App: Sendable, Hashable {
        /// The app's id.
        var id: String
        /// Its lifecycle state.
        var state: ApplicationState
        /// Its resident set size in bytes (``AppProcess/residentBytes``; 0 if unknown).
        var residentBytes: UInt64

    }

    /// The suspended apps to end, in order.
    let terminate: [String]
    /// The running apps to send the memory warning to, in order (after the terminations).
    let warn: [String]

    /// Builds the plan.
    ///
    /// - Parameters:
    ///   - apps: The hosted apps.
    init(apps: [App]) {
        func largestFirst(_ lhs: App, _ rhs: App) -> Bool {
            lhs.residentBytes != rhs.residentBytes ? lhs.residentBytes > rhs.residentBytes : lhs.id < rhs.id
        }
        terminate = apps.filter { $0.state == .suspended }.sorted(by: largestFirst).map(\.id)
        warn = apps.filter { $0.state.isRunningCode }.sorted(by: largestFirst).map(\.id)
    }
}
