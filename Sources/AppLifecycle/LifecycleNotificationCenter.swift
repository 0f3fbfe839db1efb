import FoundationEssentials
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

    @usableFromInline var typedLists: [ObjectIdentifier: TypedObserverListBase] = [:]
    @usableFromInline var typedListsByName: [String: [TypedObserverListBase]] = [:]
    @usableFromInline var namedLists: [String: NamedObserverList] = [:]
    @usableFromInline let allNames = NamedObserverList()
    @usableFromInline var nextSequence: UInt64 = 0
    /// A direct-mapped cache in front of `typedLists`: posting the same few message types
    /// again and again (the common case) skips hashing.
    ///
    /// This and the observer arrays below opt out of dynamic exclusivity checks (a runtime call
    /// per access, a third of a one-observer post): they are touched only on the main actor, and
    /// posting only reads them or takes copies, so no two accesses can overlap.
    @exclusivity(unchecked) @usableFromInline var typeCache = TypeCache()

    /// Creates an empty center (tests and embedders; apps normally use ``default``).
    public init() {}

    // MARK: Adding observers

    /// Adds a typed observer called with every message of a type, optionally only from one object.
    ///
    /// - Parameters:
    ///   - type: The message type; its ``LifecycleMessage/name`` is the notification name it stands for.
    ///   - object: Only messages posted with this object are delivered; `nil` for all.
    ///   - handler: Called on the main actor with each message.
    /// - Returns: A token; the observer is removed when it is cancelled or deinitialised.
    public func addObserver<Message: LifecycleMessage>(
        for type: Message.Type, object: (any AnyObject)? = nil,
        using handler: @escaping @MainActor (Message) -> Void
    ) -> NotificationObservation {
        let list = typedList(for: Message.self)
        let observer = TypedObserver(
            sequence: nextSequenceNumber(), key: .typed(ObjectIdentifier(Message.self)), object: object,
            handler: handler)
        list.append(observer)
        return NotificationObservation(entry: observer, center: self)
    }

    /// Adds a named observer called with every notification of a name (or of all names).
    ///
    /// - Parameters:
    ///   - name: The name to observe, or `nil` for every notification, typed posts included.
    ///   - object: Only notifications posted with this object are delivered; `nil` for all.
    ///   - handler: Called on the main actor with each notification.
    /// - Returns: A token; the observer is removed when it is cancelled or deinitialised.
    public func addObserver(
        forName name: LifecycleNotification.Name?, object: (any AnyObject)? = nil,
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
        let observer = NamedObserver(sequence: nextSequenceNumber(), key: key, object: object, handler: handler)
        list.observers.append(observer)
        return NotificationObservation(entry: observer, center: self)
    }

    // MARK: Posting

    /// Posts a typed message to its typed observers, then (in registration order with them) to
    /// name observers of its name and all-name observers in the userInfo form.
    ///
    /// - Parameters:
    ///   - message: The message; its type decides its name and how its userInfo is encoded.
    ///   - object: The posting object, matched against observers' object filters.
    @inlinable
    public func post<Message: LifecycleMessage>(_ message: Message, object: (any AnyObject & Sendable)? = nil) {
        let objectID = object.map(ObjectIdentifier.init)
        if let list = typeCache.lookup(ObjectIdentifier(Message.self)),
            Self.postToTypedObservers(
                message, list: list, objectID: objectID, allNamesEmpty: allNames.observers.isEmpty)
        {
            return
        }
        let list = typedList(for: Message.self)
        if list.named.observers.isEmpty && allNames.observers.isEmpty {
            Self.deliver(message, to: list.observers, objectID: objectID)
        } else {
            postMixed(message, list: list, object: object)
        }
    }

    /// The general typed post: typed, named and all-name observers merged by registration order.
    @usableFromInline
    func postMixed<Message: LifecycleMessage>(
        _ message: Message, list: TypedObserverList<Message>, object: (any AnyObject & Sendable)?
    ) {
        let typed = list.observers
        let named = list.named.observers
        let all = allNames.observers
        let objectID = object.map(ObjectIdentifier.init)
        let notification = LifecycleNotification(name: Message.name, object: object, userInfo: message.userInfo)
        var t = 0
        var n = 0
        var a = 0
        while true {
            let ts = t < typed.count ? typed[t].sequence : .max
            let ns = n < named.count ? named[n].sequence : .max
            let asq = a < all.count ? all[a].sequence : .max
            if ts == .max && ns == .max && asq == .max { break }
            if ts < ns && ts < asq {
                let observer = typed[t]
                t += 1
                if observer.accepts(objectID) { observer.handler(message) }
            } else if ns < asq {
                let observer = named[n]
                n += 1
                if observer.accepts(objectID) { observer.handler(notification) }
            } else {
                let observer = all[a]
                a += 1
                if observer.accepts(objectID) { observer.handler(notification) }
            }
        }
    }

    /// Posts a named notification to name observers, all-name observers, and the typed observers
    /// of every message type with this name whose userInfo decodes, in registration order.
    ///
    /// - Parameters:
    ///   - name: The notification name; typed observers of every message type with this name receive it too.
    ///   - object: The posting object, matched against observers' object filters.
    ///   - userInfo: The payload.
    public func post(
        name: LifecycleNotification.Name, object: (any AnyObject & Sendable)? = nil, userInfo: UserInfo = UserInfo()
    ) {
        post(LifecycleNotification(name: name, object: object, userInfo: userInfo))
    }

    /// Posts a named notification (see ``post(name:object:userInfo:)``).
    public func post(_ notification: LifecycleNotification) {
        let objectID = notification.object.map(ObjectIdentifier.init)
        let named = namedLists[notification.name.rawValue]?.observers ?? []
        let all = allNames.observers
        let typedLists = typedListsByName[notification.name.rawValue] ?? []
        if typedLists.allSatisfy({ $0.isEmpty }) {
            // Names only: merge the two sorted lists without building a delivery plan.
            var n = 0
            var a = 0
            while n < named.count || a < all.count {
                let observer: NamedObserver
                if a >= all.count || (n < named.count && named[n].sequence < all[a].sequence) {
                    observer = named[n]
                    n += 1
                } else {
                    observer = all[a]
                    a += 1
                }
                if observer.accepts(objectID) { observer.handler(notification) }
            }
            return
        }
        var deliveries: [(sequence: UInt64, deliver: () -> Void)] = []
        for list in typedLists {
            deliveries += list.deliveries(decoding: notification.userInfo, objectID: objectID)
        }
        for observer in named + all {
            deliveries.append(
                (
                    observer.sequence,
                    {
                        if observer.accepts(objectID) { observer.handler(notification) }
                    }
                ))
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
    ///   - type: The message type; its ``LifecycleMessage/name`` is the notification name it stands for.
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
        // A consumer that stops (cancelled, or broke out of the loop) ends the stream: unregister
        // then, even if the sequence value itself lives on somewhere.
        continuation.onTermination = { [weak token] _ in token?.cancel() }
        return NotificationSequence(
            stream: stream,
            subscription: NotificationSubscription(token: token, drops: drops, finish: continuation.finish))
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
        named name: LifecycleNotification.Name?, object: (any AnyObject)? = nil,
        buffering: NotificationBufferingPolicy = .default
    ) -> NotificationSequence<LifecycleNotification> {
        let (stream, continuation) = AsyncStream<LifecycleNotification>.makeStream(
            bufferingPolicy: buffering.streamPolicy)
        let drops = DropCounter()
        let token = addObserver(forName: name, object: object) { notification in
            if case .dropped = continuation.yield(notification) { drops.increment() }
        }
        continuation.onTermination = { [weak token] _ in token?.cancel() }
        return NotificationSequence(
            stream: stream,
            subscription: NotificationSubscription(token: token, drops: drops, finish: continuation.finish))
    }

    // MARK: Introspection

    /// The number of active observers of a message type (typed observers only).
    public func observerCount<Message: LifecycleMessage>(for type: Message.Type) -> Int {
        typedLists[ObjectIdentifier(type)]?.activeCount ?? 0
    }

    /// The number of active name observers of a name, or of all-name observers for `nil`.
    ///
    /// - Parameters:
    ///   - name: The name, or `nil`.
    public func observerCount(forName name: LifecycleNotification.Name?) -> Int {
        let list = name.map { namedLists[$0.rawValue] } ?? allNames
        return list?.observers.count { $0.isActive } ?? 0
    }

    // MARK: Internals

    private func nextSequenceNumber() -> UInt64 {
        nextSequence += 1
        return nextSequence
    }

    private func namedList(for name: String) -> NamedObserverList {
        if let list = namedLists[name] { return list }
        let list = NamedObserverList()
        namedLists[name] = list
        return list
    }

    @inlinable
    func typedList<Message: LifecycleMessage>(for type: Message.Type) -> TypedObserverList<Message> {
        let id = ObjectIdentifier(type)
        if let cached = typeCache.lookup(id) {
            return unsafeDowncast(cached.takeUnretainedValue(), to: TypedObserverList<Message>.self)
        }
        return typedListMiss(for: type)
    }

    @usableFromInline
    func typedListMiss<Message: LifecycleMessage>(for type: Message.Type) -> TypedObserverList<Message> {
        let id = ObjectIdentifier(type)
        let list: TypedObserverList<Message>
        if let existing = typedLists[id] {
            list = unsafeDowncast(existing, to: TypedObserverList<Message>.self)
        } else {
            let name = Message.name.rawValue
            list = TypedObserverList<Message>(named: namedList(for: name))
            typedLists[id] = list
            typedListsByName[name, default: []].append(list)
        }
        typeCache.store(id, list)
        return list
    }

    func unlink(_ entry: ObserverEntry) {
        switch entry.key {
        case .typed(let id):
            typedLists[id]?.remove(entry)
        case .named(let name):
            namedLists[name]?.observers.removeAll { $0 === entry }
        case .allNames:
            allNames.observers.removeAll { $0 === entry }
        }
    }
}
