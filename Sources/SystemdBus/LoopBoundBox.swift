/// A value that only one event loop's thread may touch, checked on every access.
///
/// In the style of swift-nio's `NIOLoopBoundBox`: the box may be handed between threads (it is
/// `Sendable`), but ``value`` may be read or written on its loop's thread only. Every access
/// asserts that (debug and test builds; release builds do not check), so a call from the wrong
/// thread fails at once in the tests instead of racing with the loop.
///
/// It is the one audited home of loop-confined state in SystemdBus: a type whose mutable state
/// lives in a box needs no `@unchecked Sendable` argument of its own.
public final class LoopBoundBox<Value>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `storage` is read and written only through `value`, whose
    // accessors assert that the caller runs on `loop`'s thread, and one thread never overlaps
    // itself. The initial value is stored before the box can be shared: `init` happens-before any
    // hand-over of the box to another thread (a Swift concurrency hand-over or `perform`).
    private var storage: Value

    /// The loop whose thread owns the value.
    public let loop: EventLoop

    /// Creates a box holding `value` for `loop`'s thread.
    ///
    /// May be called on any thread: nothing else can reach the box yet.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - loop: The loop whose thread alone may then read and write it.
    public init(_ value: Value, loop: EventLoop) {
        self.storage = value
        self.loop = loop
    }

    /// The value; loop thread only (asserted).
    public var value: Value {
        _read {
            loop.preconditionOnLoopThread()
            yield storage
        }
        _modify {
            loop.preconditionOnLoopThread()
            yield &storage
        }
    }
}
