import Dispatch

/// Tells whether the caller runs on the main actor, from a nonisolated context.
///
/// On Linux an `async` main parks the real main thread and libdispatch drains the main queue
/// (the main actor's executor) from another thread, so `Thread.isMainThread` does not answer
/// this. A dispatch-specific value set on the main queue does: it is visible exactly to code
/// running on that queue.
enum MainActorContext {
    private static let key = DispatchSpecificKey<UInt8>()
    private static let installed: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: 1)
        return true
    }()

    /// Whether the current code runs on the main queue, hence on the main actor.
    static var isCurrent: Bool {
        _ = installed
        return DispatchQueue.getSpecific(key: key) != nil
    }

    /// Runs `body` on the main actor: at once when already there, else in a new main-actor task.
    static func run(_ body: @escaping @MainActor @Sendable () -> Void) {
        if isCurrent {
            MainActor.assumeIsolated { body() }
        } else {
            Task { @MainActor in body() }
        }
    }
}
