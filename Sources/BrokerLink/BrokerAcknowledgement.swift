import Synchronization
import SystemdBus

/// The acknowledgement of one delivered message: call ``acknowledge()`` once the message is
/// persisted locally or delivered, and only then does the broker get its PUBACK.
///
/// For a QoS 1 message the connection stops writing (it goes on reading) from the moment
/// libmosquitto hands it over until every acknowledgement of that connection is given (see
/// ``BrokerConnection``'s "Acknowledgement gating"): PUBACKs leave in the order the messages came,
/// all of them once the last outstanding one is given, so a holder may have several messages under
/// way at once (up to the broker's in-flight window) and acknowledge them in any order. QoS 0
/// messages have nothing to acknowledge: their acknowledgement is a no-op.
///
/// Dropping an acknowledgement without calling ``acknowledge()`` keeps the connection gated: it
/// ends by keep-alive and the broker redelivers the message.
public final class BrokerAcknowledgement: Sendable {
    private let core: LoopBoundBox<ConnectionCore>?
    private let id: UInt64
    private let generation: UInt64
    private let done: Atomic<Bool>

    /// Whether this acknowledgement holds the connection back (a QoS 1 message under gating).
    public var isGating: Bool { core != nil }

    init(core: LoopBoundBox<ConnectionCore>, id: UInt64, generation: UInt64) {
        self.core = core
        self.id = id
        self.generation = generation
        self.done = Atomic(false)
    }

    private init() {
        self.core = nil
        self.id = 0
        self.generation = 0
        self.done = Atomic(true)
    }

    /// An acknowledgement with nothing to do (QoS 0, or a handler that does not gate).
    static let none = BrokerAcknowledgement()

    /// Lets the broker have the PUBACK of this message (and, once no other acknowledgement of the
    /// connection is outstanding, lets the connection read and write again).
    ///
    /// Call it from any thread, any time; it hops to the loop thread and returns at once. Calling
    /// it again does nothing; so does calling it after the connection the message came on has
    /// dropped (the broker redelivers the message on the next connection, with a new
    /// acknowledgement).
    public func acknowledge() {
        guard let core, !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let id = id
        let generation = generation
        core.loop.perform { core.value.acknowledge(id: id, generation: generation) }
    }
}
