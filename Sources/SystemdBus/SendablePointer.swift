import CSystemd
import Glibc
import Logging
import Synchronization

/// A raw pointer handed to the loop thread to be used there only.
struct SendablePointer: @unchecked Sendable {
    // Safe: used only to move an sd-bus pointer into a closure that runs on the loop thread,
    // which is the only thread that dereferences it.
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
}
