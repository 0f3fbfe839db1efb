import Foundation
import Synchronization

/// Delivers typed and named lifecycle notifications to observers, in registration order.
///
/// The center is main-actor isolated, as UIKit's lifecycle notifications are all posted on
/// the main thread; observers run synchronously on the main actor inside ``post(_:object:)``.
/// Code on other actors subscribes with an `AsyncSequence` (``messages(of:object:buffering:)``,
/// ``notifications(named:object:buffering:)``).
///
/// ## Typed and named forms
///
/// Every ``LifecycleMessage`` has a named form. A typed post reaches typed observers of its
/// type and, in the userInfo form, name observers of its name and observers of all names. A
/// named post reaches name observers and, when its userInfo decodes into the message type,
/// typed observers of every message type with that name. Foundation's `NotificationCenter`
/// does neither.
///
/// ## Order and re-entrancy
///
/// One post delivers to its observers in the order they were added, across typed, named and
/// all-name observers. An observer may post, add or remove observers while it runs: a nested
/// post is delivered completely before the outer one continues; an observer added during a
/// post receives the next post, not the current one; an observer removed during a post
/// receives nothing more, not even later in the current post.
///
/// ## Cost
///
/// A typed post to typed observers does one dictionary lookup by type and calls each closure:
/// it allocates nothing in steady state. The userInfo form is built only when a name observer
/// or all-name observer is registered.
@MainActor
public final class LifecycleNotificationCenter {
    /// The process's shared center; ``Application`` posts here unless given another.
    public static let `default` = LifecycleNotificationCenter()

    private var typedLists: [ObjectIdentifier: TypedObserverListBase] = [:]
    private var typedListsByName: [String: [TypedObserverListBase]] = [:]
    private var namedLists: [String: NamedObserverList] = [:]
    private let allNames = NamedObserverList()
    private var nextSequence: UInt64 = 0

    /// Creates an empty center (tests and embedders; apps normally use ``default``).
    public init() {}

    // MARK: Adding observers

    /// Adds a typed observer called with every message of a type, optionally only from one object.
    ///
    /// - Parameters:
    ///   - type: The message type.
    ///   - object: Only messages posted with this object are delivered; `nil` for all.
    ///   - handler: Called on the main actor with each message.
    /// - Returns: A token; the observer is removed when it is cancelled or deinitialised.
    public func addObserver<Message: LifecycleMessage>(
        for type: Message.Type, object: (any AnyObject)? = nil,
        using handler: @escaping @MainActor (Message) -> Void
    ) -> NotificationObservation {
        let list = typedList(for: Message.self)
        let entry = makeEntry(key: .typed(ObjectIdentifier(Message.self)))
        list.entries.append(TypedEntry(entry: entry, filter: ObjectFilter(object), handler: handler))
        return NotificationObservation(entry: entry, center: self)
    }

    /// Adds a named observer called with every notification of a name (or of all names).
    ///
    /// - Parameters:
    ///   - name: The name to observe, or `nil` for every notification, typed posts included.
    ///   - object: Only notifications posted with this object are delivered; `nil` for all.
    ///   - handler: Called on the main actor with each notification.
    /// - Returns: A token; the observer is removed when it is cancelled or deinitialised.
    public func addObserver(
        forName name: Notification.Name?, object: (any AnyObject)? = nil,
        using handler: @escaping @MainActor (LifecycleNotification) -> Void
    ) -> NotificationObservation {
        let list: NamedObserverList
        let key: ObserverEntry.ListKey
        if let name {
            list = namedList(for: name.rawValue)
            key = .named(name.rawValue)
        } else {
            list = allNames
            key = .allNames
        }
        let entry = makeEntry(key: key)
        list.entries.append(NamedEntry(entry: entry, filter: ObjectFilter(object), handler: handler))
        return NotificationObservation(entry: entry, center: self)
    }

    // MARK: Posting

    /// Posts a typed message to its typed observers, then (in registration order with them) to
    /// name observers of its name and all-name observers in the userInfo form.
    ///
    /// - Parameters:
    ///   - message: The message.
    ///   - object: The posting object, matched against observers' object filters.
    @inlinable
    public func post<Message: LifecycleMessage>(_ message: Message, object: (any AnyObject & Sendable)? = nil) {
        _post(message, object: object)
    }

    @usableFromInline
    func _post<Message: LifecycleMessage>(_ message: Message, object: (any AnyObject & Sendable)?) {
        let list = typedList(for: Message.self)
        let typed = list.entries
        let named = list.named.entries
        let all = allNames.entries
        let objectID = object.map(ObjectIdentifier.init)
        if named.isEmpty && all.isEmpty {
            for observer in typed where observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) {
                observer.handler(message)
            }
            return
        }
        let notification = LifecycleNotification(name: Message.name, object: object, userInfo: message.userInfo)
        var t = 0, n = 0, a = 0
        while true {
            let ts = t < typed.count ? typed[t].entry.sequence : .max
            let ns = n < named.count ? named[n].entry.sequence : .max
            let asq = a < all.count ? all[a].entry.sequence : .max
            if ts == .max && ns == .max && asq == .max { break }
            if ts < ns && ts < asq {
                let observer = typed[t]
                t += 1
                if observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) { observer.handler(message) }
            } else if ns < asq {
                let observer = named[n]
                n += 1
                if observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) { observer.handler(notification) }
            } else {
                let observer = all[a]
                a += 1
                if observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) { observer.handler(notification) }
            }
        }
    }

    /// Posts a named notification to name observers, all-name observers, and the typed observers
    /// of every message type with this name whose userInfo decodes, in registration order.
    ///
    /// - Parameters:
    ///   - name: The name.
    ///   - object: The posting object, matched against observers' object filters.
    ///   - userInfo: The payload.
    public func post(name: Notification.Name, object: (any AnyObject & Sendable)? = nil, userInfo: UserInfo = UserInfo()) {
        post(LifecycleNotification(name: name, object: object, userInfo: userInfo))
    }

    /// Posts a named notification (see ``post(name:object:userInfo:)``).
    ///
    /// - Parameters:
    ///   - notification: The notification.
    public func post(_ notification: LifecycleNotification) {
        let objectID = notification.object.map(ObjectIdentifier.init)
        var deliveries: [(sequence: UInt64, deliver: () -> Void)] = []
        for list in typedListsByName[notification.name.rawValue] ?? [] {
            deliveries += list.deliveries(decoding: notification.userInfo, objectID: objectID)
        }
        let named = namedLists[notification.name.rawValue]?.entries ?? []
        for observer in named + allNames.entries {
            deliveries.append((observer.entry.sequence, {
                if observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) {
                    observer.handler(notification)
                }
            }))
        }
        deliveries.sort { $0.sequence < $1.sequence }
        for delivery in deliveries { delivery.deliver() }
    }

    // MARK: Async sequences

    /// Returns the messages of a type as an `AsyncSequence`, from this call on.
    ///
    /// The observer is registered at once, so nothing posted after this call is missed. The
    /// sequence buffers at most the policy's capacity of undelivered messages; see
    /// ``NotificationBufferingPolicy`` for what happens when a slow consumer lets it fill up.
    /// The observer is removed when iteration ends or the sequence is dropped.
    ///
    /// - Parameters:
    ///   - type: The message type.
    ///   - object: Only messages posted with this object; `nil` for all.
    ///   - buffering: The buffer's capacity and overflow policy.
    public func messages<Message: LifecycleMessage>(
        of type: Message.Type, object: (any AnyObject)? = nil,
        buffering: NotificationBufferingPolicy = .default
    ) -> NotificationSequence<Message> {
        let (stream, continuation) = AsyncStream<Message>.makeStream(bufferingPolicy: buffering.streamPolicy)
        let drops = DropCounter()
        let token = addObserver(for: type, object: object) { message in
            if case .dropped = continuation.yield(message) { drops.increment() }
        }
        return NotificationSequence(stream: stream, subscription: NotificationSubscription(token: token, drops: drops, finish: continuation.finish))
    }

    /// Returns the named notifications of a name (or of all names) as an `AsyncSequence`.
    ///
    /// Behaves like ``messages(of:object:buffering:)``, delivering ``LifecycleNotification`` values.
    ///
    /// - Parameters:
    ///   - name: The name, or `nil` for every notification.
    ///   - object: Only notifications posted with this object; `nil` for all.
    ///   - buffering: The buffer's capacity and overflow policy.
    public func notifications(
        named name: Notification.Name?, object: (any AnyObject)? = nil,
        buffering: NotificationBufferingPolicy = .default
    ) -> NotificationSequence<LifecycleNotification> {
        let (stream, continuation) = AsyncStream<LifecycleNotification>.makeStream(bufferingPolicy: buffering.streamPolicy)
        let drops = DropCounter()
        let token = addObserver(forName: name, object: object) { notification in
            if case .dropped = continuation.yield(notification) { drops.increment() }
        }
        return NotificationSequence(stream: stream, subscription: NotificationSubscription(token: token, drops: drops, finish: continuation.finish))
    }

    // MARK: Introspection

    /// The number of active observers of a message type (typed observers only).
    ///
    /// - Parameters:
    ///   - type: The message type.
    public func observerCount<Message: LifecycleMessage>(for type: Message.Type) -> Int {
        typedLists[ObjectIdentifier(type)]?.activeCount ?? 0
    }

    /// The number of active name observers of a name, or of all-name observers for `nil`.
    ///
    /// - Parameters:
    ///   - name: The name, or `nil`.
    public func observerCount(forName name: Notification.Name?) -> Int {
        let list = name.map { namedLists[$0.rawValue] } ?? allNames
        return list?.entries.count { $0.entry.isActive } ?? 0
    }

    // MARK: Internals

    private func makeEntry(key: ObserverEntry.ListKey) -> ObserverEntry {
        nextSequence += 1
        return ObserverEntry(sequence: nextSequence, key: key)
    }

    private func namedList(for name: String) -> NamedObserverList {
        if let list = namedLists[name] { return list }
        let list = NamedObserverList()
        namedLists[name] = list
        return list
    }

    @usableFromInline
    func typedList<Message: LifecycleMessage>(for type: Message.Type) -> TypedObserverList<Message> {
        if let list = typedLists[ObjectIdentifier(type)] {
            return unsafeDowncast(list, to: TypedObserverList<Message>.self)
        }
        let name = Message.name.rawValue
        let list = TypedObserverList<Message>(named: namedList(for: name))
        typedLists[ObjectIdentifier(type)] = list
        typedListsByName[name, default: []].append(list)
        return list
    }

    func unlink(_ entry: ObserverEntry) {
        switch entry.key {
        case .typed(let id):
            typedLists[id]?.remove(entry)
        case .named(let name):
            namedLists[name]?.entries.removeAll { $0.entry === entry }
        case .allNames:
            allNames.entries.removeAll { $0.entry === entry }
        }
    }
}

/// The shared part of an observer registration: its order, its list, and whether it is active.
///
/// Sendable because every stored property is immutable except `active`, which is atomic.
final class ObserverEntry: Sendable {
    enum ListKey: Sendable {
        case typed(ObjectIdentifier)
        case named(String)
        case allNames
    }

    let sequence: UInt64
    let key: ListKey
    private let active = Atomic<Bool>(true)

    init(sequence: UInt64, key: ListKey) {
        self.sequence = sequence
        self.key = key
    }

    @usableFromInline
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Marks the entry inactive; returns whether it was active.
    func deactivate() -> Bool {
        active.exchange(false, ordering: .acquiringAndReleasing)
    }
}

/// An observer's object filter: matches the same live object only.
@usableFromInline
struct ObjectFilter {
    let id: ObjectIdentifier
    weak var object: AnyObject?

    init?(_ object: AnyObject?) {
        guard let object else { return nil }
        self.id = ObjectIdentifier(object)
        self.object = object
    }

    @usableFromInline @inline(__always)
    static func matches(_ filter: ObjectFilter?, _ posted: ObjectIdentifier?) -> Bool {
        guard let filter else { return true }
        return filter.id == posted && filter.object != nil
    }
}

@usableFromInline
struct TypedEntry<Message> {
    let entry: ObserverEntry
    let filter: ObjectFilter?
    let handler: @MainActor (Message) -> Void
}

@usableFromInline
struct NamedEntry {
    let entry: ObserverEntry
    let filter: ObjectFilter?
    let handler: @MainActor (LifecycleNotification) -> Void
}

@MainActor @usableFromInline
final class NamedObserverList {
    var entries: [NamedEntry] = []
}

@MainActor @usableFromInline
class TypedObserverListBase {
    let named: NamedObserverList
    init(named: NamedObserverList) { self.named = named }
    var activeCount: Int { 0 }
    func remove(_ entry: ObserverEntry) {}
    func deliveries(decoding userInfo: UserInfo, objectID: ObjectIdentifier?) -> [(sequence: UInt64, deliver: () -> Void)] { [] }
}

@MainActor @usableFromInline
final class TypedObserverList<Message: LifecycleMessage>: TypedObserverListBase {
    var entries: [TypedEntry<Message>] = []

    override var activeCount: Int { entries.count { $0.entry.isActive } }

    override func remove(_ entry: ObserverEntry) {
        entries.removeAll { $0.entry === entry }
    }

    override func deliveries(decoding userInfo: UserInfo, objectID: ObjectIdentifier?) -> [(sequence: UInt64, deliver: () -> Void)] {
        let observers = entries
        guard !observers.isEmpty, let message = Message(userInfo: userInfo) else { return [] }
        return observers.map { observer in
            (observer.entry.sequence, {
                if observer.entry.isActive && ObjectFilter.matches(observer.filter, objectID) { observer.handler(message) }
            })
        }
    }
}
