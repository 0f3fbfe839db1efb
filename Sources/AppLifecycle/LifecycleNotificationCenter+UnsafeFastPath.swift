import Synchronization

// The notification center's unsafe fast path, in one place.
//
// A typed post to typed observers is the hot path of every app (one post per lifecycle callback,
// fanned out to every subscriber), and the project promises it is at least 20 times faster than
// Foundation's NotificationCenter with no allocation. Safe Swift spends most of a post on
// retain/release per observer, a runtime executor check per isolated closure call and dynamic
// exclusivity checks. This file removes them, and each removal rests on an invariant written
// beside it:
//
// - Observer lists and snapshots are borrowed unretained (`Unmanaged`, `_withUnsafeGuaranteedRef`):
//   `typedLists` holds every list for the center's lifetime, and a snapshot replaced while a post
//   iterates it is kept in `retired` until `postingDepth` is back to zero.
// - Handlers are stored with their main-actor isolation erased (`unsafeBitCast` of a synchronous
//   global-actor function type, which has the same representation): only the main-actor center
//   creates observers and calls them.
// - `@exclusivity(unchecked)` storage is touched only on the main actor, and a post only reads it
//   or takes copies, so no two accesses overlap.
// - `TypeCache` holds unretained lists under the same lifetime rule as the borrowed lists.
//
// What guards it:
// - `lifecycle-bench center` (release) measures the typed post against Foundation's center and
//   counts heap allocations per post with a malloc interposer.
// - `make asan` (part of `make test`) runs the core's tests in an optimised AddressSanitizer build;
//   a nested same-type post that churns observers while the outer post's borrowed snapshot is in
//   use ("NotificationCenterTests") hits heap-use-after-free if the snapshot retirement is broken.
//   Only -O drops the retains that would hide such a bug, hence the release build.
//
// Change anything here only with both of them run before and after.

extension LifecycleNotificationCenter {
    /// The fast path of a typed post (typed observers only), with the list borrowed unretained:
    /// every list is held by `typedLists` for the center's lifetime.
    ///
    /// Nonisolated so that its closures carry no isolation (an isolated closure costs a runtime
    /// executor check per call); called only from ``post(_:object:)`` on the main actor.
    ///
    /// - Returns: `false` when the post needs the general path (name or all-name observers).
    @inlinable
    nonisolated static func postToTypedObservers<Message: LifecycleMessage>(
        _ message: Message, list: Unmanaged<TypedObserverListBase>, objectID: ObjectIdentifier?, allNamesEmpty: Bool
    ) -> Bool {
        list._withUnsafeGuaranteedRef { base in
            let list = unsafeDowncast(base, to: TypedObserverList<Message>.self)
            guard allNamesEmpty && list.named.observers.isEmpty else { return false }
            // The snapshot is borrowed, not retained: while `postingDepth` is above zero a
            // snapshot the list replaces (an observer added or removed meanwhile) is kept in
            // `retired`, so the one this loop reads outlives the loop.
            list.postingDepth &+= 1
            Unmanaged.passUnretained(list.snapshot)._withUnsafeGuaranteedRef { snapshot in
                deliver(message, in: snapshot, objectID: objectID)
            }
            list.postingDepth &-= 1
            if list.postingDepth == 0 && !list.retired.isEmpty { list.retired.removeAll() }
            return true
        }
    }

    /// The typed post loop over a borrowed snapshot; each observer is borrowed too.
    @inlinable
    nonisolated static func deliver<Message>(
        _ message: Message, in snapshot: ObserverSnapshot<Message>, objectID: ObjectIdentifier?
    ) {
        snapshot.observers.withUnsafeBufferPointer { buffer in
            for index in buffer.indices {
                Unmanaged.passUnretained(buffer[index])._withUnsafeGuaranteedRef { observer in
                    observer.deliver(message, ifAccepts: objectID)
                }
            }
        }
    }

    /// The typed post loop, over a snapshot of the observers.
    ///
    /// The snapshot keeps every observer alive for the whole loop (removing an observer
    /// meanwhile makes the center copy its array, not free this one), so each observer is
    /// borrowed without a retain/release pair, which would otherwise be most of a post's cost.
    @inlinable
    nonisolated static func deliver<Message>(
        _ message: Message, to observers: ContiguousArray<TypedObserver<Message>>, objectID: ObjectIdentifier?
    ) {
        let span = observers.span
        for index in span.indices {
            Unmanaged.passUnretained(span[index])._withUnsafeGuaranteedRef { observer in
                observer.deliver(message, ifAccepts: objectID)
            }
        }
    }
}

/// The shared part of an observer registration: its order, its list, and whether it is active.
///
/// The base class of ``TypedObserver`` and ``NamedObserver``, so that the post loop finds the
/// active flag in the observer itself. A ``NotificationObservation`` holds an observer through
/// this class only, from any thread; that is safe (hence `@unchecked Sendable`) because every
/// stored property declared here is immutable except `active`, which is atomic, and the
/// subclasses' own properties are read and written only by the main-actor center.
@usableFromInline
class ObserverEntry: @unchecked Sendable {
    enum ListKey: Sendable {
        case typed(ObjectIdentifier)
        case named(String)
        case allNames
    }

    @usableFromInline let sequence: UInt64
    let key: ListKey
    @usableFromInline let active = Atomic<Bool>(true)

    init(sequence: UInt64, key: ListKey) {
        self.sequence = sequence
        self.key = key
    }

    @inlinable
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Marks the entry inactive; returns whether it was active.
    func deactivate() -> Bool {
        active.exchange(false, ordering: .acquiringAndReleasing)
    }
}

/// A direct-mapped cache of eight type → list slots, indexed by the type's metadata address.
@MainActor @usableFromInline
struct TypeCache {
    @usableFromInline var keys = ContiguousArray<ObjectIdentifier?>(repeating: nil, count: 8)
    /// Unretained: every list is also held by `typedLists`, which never removes one, so a list
    /// outlives the cache entries that point at it.
    @usableFromInline var lists = ContiguousArray<Unmanaged<TypedObserverListBase>?>(repeating: nil, count: 8)

    @usableFromInline init() {}

    @inlinable @inline(__always)
    static func slot(_ id: ObjectIdentifier) -> Int { Int(truncatingIfNeeded: UInt(bitPattern: id) >> 4) & 7 }

    @inlinable @inline(__always)
    func lookup(_ id: ObjectIdentifier) -> Unmanaged<TypedObserverListBase>? {
        let slot = Self.slot(id)
        guard keys[slot] == id else { return nil }
        return lists[slot]
    }

    @usableFromInline
    mutating func store(_ id: ObjectIdentifier, _ list: TypedObserverListBase) {
        let slot = Self.slot(id)
        keys[slot] = id
        lists[slot] = Unmanaged.passUnretained(list)
    }
}

/// One observer: its registration, its object filter and its handler (typed observers get a
/// message, named and all-name observers a ``LifecycleNotification``).
///
/// Not actor-isolated, so that the post loop can call it through a guaranteed reference without
/// a runtime executor check per observer. The handler is a main-actor closure stored with its
/// isolation erased (a synchronous global-actor function has the same representation as a plain
/// one); that is safe because only ``LifecycleNotificationCenter``, which is main-actor
/// isolated, creates observers and calls ``deliver(_:ifAccepts:)``.
@usableFromInline
final class TypedObserver<Message>: ObserverEntry, @unchecked Sendable {
    @usableFromInline let filterID: ObjectIdentifier?
    @usableFromInline weak var filterObject: AnyObject?
    @usableFromInline let handler: (Message) -> Void

    @MainActor
    init(sequence: UInt64, key: ListKey, object: AnyObject?, handler: @escaping @MainActor (Message) -> Void) {
        self.filterID = object.map(ObjectIdentifier.init)
        self.filterObject = object
        self.handler = unsafeBitCast(handler, to: ((Message) -> Void).self)
        super.init(sequence: sequence, key: key)
    }

    /// Whether the observer is active and its filter (if any) matches the posting object.
    @inlinable @inline(__always)
    func accepts(_ posted: ObjectIdentifier?) -> Bool {
        guard isActive else { return false }
        guard let filterID else { return true }
        return filterID == posted && filterObject != nil
    }

    /// Calls the handler when ``accepts(_:)``.
    @inlinable @inline(__always)
    func deliver(_ message: Message, ifAccepts posted: ObjectIdentifier?) {
        if accepts(posted) { handler(message) }
    }
}

/// One named or all-name observer: a typed observer whose payload is the named notification.
@usableFromInline
typealias NamedObserver = TypedObserver<LifecycleNotification>

/// Name observers of one name (or all names). Not actor-isolated so the nonisolated post path
/// can read it; only the main-actor center creates, reads and mutates it.
@usableFromInline
final class NamedObserverList {
    @exclusivity(unchecked) @usableFromInline var observers: ContiguousArray<NamedObserver> = []
    init() {}
}

/// Typed observers of one message type. Not actor-isolated so the nonisolated post path can
/// borrow it; only the main-actor center creates, reads and mutates it.
@usableFromInline
class TypedObserverListBase {
    @usableFromInline let named: NamedObserverList
    init(named: NamedObserverList) { self.named = named }
    var isEmpty: Bool { true }
    var activeCount: Int { 0 }
    func remove(_ entry: ObserverEntry) {}
    func deliveries(decoding userInfo: UserInfo, objectID: ObjectIdentifier?) -> [(
        sequence: UInt64, deliver: () -> Void
    )] { [] }
}

@usableFromInline
final class TypedObserverList<Message: LifecycleMessage>: TypedObserverListBase {
    /// The observers, as an immutable snapshot replaced on every change (a post borrows it).
    @exclusivity(unchecked) @usableFromInline var snapshot = ObserverSnapshot<Message>([])
    /// How many posts are iterating a borrowed snapshot now (nested posts count each).
    @exclusivity(unchecked) @usableFromInline var postingDepth = 0
    /// Snapshots replaced while a post was iterating them, kept alive until the posts end.
    @exclusivity(unchecked) @usableFromInline var retired: [AnyObject] = []

    /// The observers, in registration order.
    @usableFromInline var observers: ContiguousArray<TypedObserver<Message>> { snapshot.observers }

    func append(_ observer: TypedObserver<Message>) {
        replace(with: snapshot.observers + [observer])
    }

    private func replace(with observers: ContiguousArray<TypedObserver<Message>>) {
        if postingDepth > 0 { retired.append(snapshot) }
        snapshot = ObserverSnapshot(observers)
    }

    override var isEmpty: Bool { observers.isEmpty }

    override var activeCount: Int { observers.count { $0.isActive } }

    override func remove(_ entry: ObserverEntry) {
        replace(with: observers.filter { $0 !== entry })
    }

    override func deliveries(decoding userInfo: UserInfo, objectID: ObjectIdentifier?) -> [(
        sequence: UInt64, deliver: () -> Void
    )] {
        let current = observers
        guard !current.isEmpty, let message = Message(userInfo: userInfo) else { return [] }
        return current.map { observer in
            (
                observer.sequence,
                {
                    if observer.accepts(objectID) { observer.handler(message) }
                }
            )
        }
    }
}

/// An immutable list of typed observers, replaced as a whole when the list changes.
@usableFromInline
final class ObserverSnapshot<Message> {
    @usableFromInline let observers: ContiguousArray<TypedObserver<Message>>

    init(_ observers: ContiguousArray<TypedObserver<Message>>) { self.observers = observers }
}
