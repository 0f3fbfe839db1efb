import CSystemd
import Glibc
import Logging
import Synchronization

/// A bus between its start and the end of ``BusConnection/init(_:loop:description:timeout:)``.
///
/// It owns the sd-bus object until the connection takes it over. If the loop shuts down
/// meanwhile, its shutdown hook closes the bus (without flushing: a flush waits for a bus that
/// never got running), which fails the pending `GetId` at once, so the open ends and nothing
/// leaks. Loop thread only, apart from being handed between tasks.
final class ConnectingBus: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every member is read and written on the loop thread only
    // (in closures run by `loop`, or in its shutdown hook).
    private(set) var pointer: OpaquePointer?
    private let loop: EventLoop
    private var hookID: UInt64?

    init(_ pointer: OpaquePointer, loop: EventLoop) {
        self.pointer = pointer
        self.loop = loop
        hookID = loop.addShutdownHook { [self] in
            hookID = nil
            close()
        }
    }

    /// Closes the bus if it is still here. Loop thread only.
    func close() {
        loop.preconditionOnLoopThread()
        guard let bus = handOver() else { return }
        sd_bus_close_unref(bus)
    }

    /// Gives up the bus (and the shutdown hook) to the caller; `nil` if it was closed. Loop thread only.
    func handOver() -> OpaquePointer? {
        loop.preconditionOnLoopThread()
        if let hookID { loop.removeShutdownHook(hookID) }
        hookID = nil
        defer { pointer = nil }
        return pointer
    }
}
