import Synchronization

/// The handle of a match, a signal subscription or an owner-change handler.
///
/// Keep it while you want deliveries, and call ``cancel()`` to stop them. Dropping it does
/// not cancel (the bus keeps the match until the connection closes).
public final class BusSubscription: Sendable {
    private let connection: WeakConnection
    private let box: SlotBox?
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(connection: BusConnection, box: SlotBox) {
        self.connection = WeakConnection(connection)
        self.box = box
        self.onCancel = Mutex(nil)
    }

    init(connection: BusConnection, onCancel: @escaping @Sendable () -> Void) {
        self.connection = WeakConnection(connection)
        self.box = nil
        self.onCancel = Mutex(onCancel)
    }

    /// Stops deliveries and removes the match from the bus.
    ///
    /// Called on the loop thread it takes effect at once; from elsewhere, a delivery already
    /// under way on the loop may still complete. Calling it again does nothing.
    public func cancel() {
        let extra = onCancel.withLock { $0.take() }
        guard let connection = connection.connection else {
            extra?()
            return
        }
        let work: @Sendable () -> Void = { [box] in
            box?.destroySlot()
            extra?()
        }
        if connection.loop.isOnLoopThread { work() } else { connection.loop.perform(work) }
    }
}

/// The userdata of a match: the handler and the one-shot install callback.
final class MatchBox: SlotBox, @unchecked Sendable {
    // Safe: `installed` is set before the slot exists and read/cleared only on the loop thread.
    let handler: @Sendable (OpaquePointer) -> Void
    var installed: ((Result<Void, BusError>) -> Void)?

    init(handler: @escaping @Sendable (OpaquePointer) -> Void) {
        self.handler = handler
    }

    func finishInstall(_ result: Result<Void, BusError>) {
        let installed = self.installed
        self.installed = nil
        installed?(result)
    }

    override func slotDestroyed() {
        finishInstall(.failure(.notConnected))
    }
}
