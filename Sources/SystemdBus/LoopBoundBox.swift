/// A value that only one event loop's thread may touch, checked on every access.
///
/// As strict as swift-nio's `NIOLoopBoundBox`: the box may be handed between threads (it is
/// `Sendable`), but ``value`` may be read or written on its loop's thread only, and every access
/// checks that with a `precondition`, in release builds too, so a call from the wrong thread stops
/// the program instead of racing with the loop. A value goes in on the loop thread
/// (``init(_:eventLoop:)``), or from any thread when nothing else can reach it: `nil`
/// (``makeEmptyBox(valueType:eventLoop:)``), a `Sendable` value
/// (``makeBoxSendingValue(_:as:eventLoop:)-9n7t1``), or a value the compiler proves is sent, no
/// longer reachable from the sender (``makeBoxSendingValue(_:as:eventLoop:)-9eadt``).
///
/// It is the one audited home of loop-confined state in SystemdBus: a type whose mutable state
/// lives in a box needs no `@unchecked Sendable` argument of its own.
public final class LoopBoundBox<Value>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `storage` is read and written only through `value`, whose
    // accessors precondition that the caller runs on `loop`'s thread, and one thread never overlaps
    // itself. The initial value is either stored on the loop thread itself, or is nil, Sendable, or
    // `sending` (checked by the compiler: no other reference to it survives in the caller).
    private var storage: Value

    /// The loop whose thread owns the value.
    public let loop: EventLoop

    private init(uncheckedValue value: Value, loop: EventLoop) {
        self.storage = value
        self.loop = loop
    }

    /// Creates a box holding `value` for `loop`'s thread; called on that thread (preconditioned).
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - eventLoop: The loop whose thread alone may then read and write it.
    public convenience init(_ value: Value, eventLoop: EventLoop) {
        eventLoop.preconditionInEventLoop()
        self.init(uncheckedValue: value, loop: eventLoop)
    }

    /// Creates a box holding `nil`, from any thread: the loop fills it later.
    ///
    /// - Parameters:
    ///   - valueType: The type of the value the box will hold.
    ///   - eventLoop: The loop whose thread alone may read and write it.
    /// - Returns: The empty box.
    public static func makeEmptyBox<Wrapped>(
        valueType: Wrapped.Type = Wrapped.self, eventLoop: EventLoop
    ) -> LoopBoundBox<Value> where Value == Wrapped? {
        LoopBoundBox(uncheckedValue: nil, loop: eventLoop)
    }

    /// Creates a box holding a `Sendable` value, from any thread.
    ///
    /// - Parameters:
    ///   - value: The initial value.
    ///   - as: The value's type, where inference needs it.
    ///   - eventLoop: The loop whose thread alone may then read and write it.
    /// - Returns: The box.
    public static func makeBoxSendingValue(
        _ value: Value, as: Value.Type = Value.self, eventLoop: EventLoop
    ) -> LoopBoundBox<Value> where Value: Sendable {
        LoopBoundBox(uncheckedValue: value, loop: eventLoop)
    }

    /// Creates a box holding a value that is sent into it, from any thread.
    ///
    /// `sending` makes the compiler check that the caller keeps no reference to the value (or
    /// anything it holds) once the box has it, so only the loop thread can reach it afterwards.
    ///
    /// - Parameters:
    ///   - value: The initial value, given up by the caller.
    ///   - as: The value's type, where inference needs it.
    ///   - eventLoop: The loop whose thread alone may then read and write it.
    /// - Returns: The box.
    public static func makeBoxSendingValue(
        _ value: sending Value, as: Value.Type = Value.self, eventLoop: EventLoop
    ) -> LoopBoundBox<Value> {
        LoopBoundBox(uncheckedValue: value, loop: eventLoop)
    }

    /// The value; loop thread only (preconditioned, in release builds too).
    public var value: Value {
        _read {
            loop.preconditionInEventLoop()
            yield storage
        }
        _modify {
            loop.preconditionInEventLoop()
            yield &storage
        }
    }
}
