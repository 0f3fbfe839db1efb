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
final class ConnectingBus: Sendable {
    /// The bus and the shutdown hook that closes it; the loop thread's alone.
    private struct State {
        var pointer: OpaquePointer?
        var hookID: UInt64?
    }

    private let state: LoopBoundBox<State>
    private let loop: EventLoop

    /// Takes the bus over and registers the shutdown hook that closes it. Loop thread only.
    init(_ pointer: OpaquePointer, loop: EventLoop) {
        self.loop = loop
        state = LoopBoundBox(State(pointer: pointer), eventLoop: loop)
        let state = self.state
        state.value.hookID = loop.addShutdownHook {
            state.value.hookID = nil
            if let bus = state.value.pointer {
                state.value.pointer = nil
                sd_bus_close_unref(bus)
            }
        }
    }

    /// The bus, while it is still here. Loop thread only.
    var pointer: OpaquePointer? { state.value.pointer }

    /// Closes the bus if it is still here. Loop thread only.
    func close() {
        guard let bus = handOver() else { return }
        sd_bus_close_unref(bus)
    }

    /// Gives up the bus (and the shutdown hook) to the caller; `nil` if it was closed. Loop thread only.
    func handOver() -> OpaquePointer? {
        if let hookID = state.value.hookID { loop.removeShutdownHook(hookID) }
        state.value.hookID = nil
        defer { state.value.pointer = nil }
        return state.value.pointer
    }
}
