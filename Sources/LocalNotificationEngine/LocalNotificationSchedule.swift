import AppLifecycle
import AppLifecycleSystemd
import DesktopIntegration
import FoundationEssentials

/// The local notifications a host keeps for its apps, ordered by when they fire next.
///
/// Pure and synchronous: the owner (lifecycled, on its main actor) arms one `CLOCK_REALTIME`
/// alarm at ``earliestInstant()``, takes what is due with ``takeDue(now:)`` when it goes off, and
/// calls ``setTimeZone(_:now:)`` when the local zone changes. A min-heap with lazy deletion keeps
/// scheduling and taking at O(log n), and finding the next instant after a clock change at
/// O(1) (the instants do not depend on what the clock reads, only on the zone).
package struct LocalNotificationSchedule: Sendable {
    /// A notification's identity: its app and its identifier.
    package struct Key: Sendable, Hashable, Comparable {
        /// The app.
        package var appID: String
        /// The notification's identifier.
        package var identifier: String
        /// Creates a key.
        package init(appID: String, identifier: String) {
            self.appID = appID
            self.identifier = identifier
        }
        /// By app, then identifier.
        package static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.appID, lhs.identifier) < (rhs.appID, rhs.identifier)
        }
    }

    /// A notification that is due, with the occurrence that fires.
    package struct Firing: Sendable, Hashable {
        /// The notification (its ``ScheduledLocalNotification/occurrence`` is the one firing).
        package var notification: ScheduledLocalNotification
        /// The instant it was due (seconds since the epoch).
        package var instant: Double
        /// Whether it stays scheduled for a later occurrence.
        package var repeats: Bool
    }

    private struct Entry: Sendable {
        var notification: ScheduledLocalNotification
        var instant: Double
        var generation: UInt64
    }

    private struct HeapItem: Sendable {
        var instant: Double
        var generation: UInt64
        var key: Key
        func precedes(_ other: HeapItem) -> Bool {
            instant != other.instant ? instant < other.instant : generation < other.generation
        }
    }

    private var entries: [Key: Entry] = [:]
    private var heap: [HeapItem] = []
    private var nextGeneration: UInt64 = 0
    /// The local time zone the instants are computed in.
    package private(set) var timeZone: any UTCOffsetRules

    /// An empty schedule.
    ///
    /// - Parameters:
    ///   - timeZone: The local time zone (``SystemLocalTime`` in a daemon).
    package init(timeZone: any UTCOffsetRules) {
        self.timeZone = timeZone
    }

    /// How many notifications are scheduled.
    package var count: Int { entries.count }

    /// Schedules a notification, replacing one with the same app and identifier.
    ///
    /// - Parameters:
    ///   - notification: The notification; from its ``ScheduledLocalNotification/occurrence`` on,
    ///     the first occurrence not before `now` is the next (a non-repeating one in the past is due at once).
    ///   - now: Seconds since the epoch.
    /// - Returns: The notification it replaced, if any.
    @discardableResult
    package mutating func insert(_ notification: ScheduledLocalNotification, now: Double) -> ScheduledLocalNotification?
    {
        var notification = notification
        let (occurrence, instant) = notification.nextOccurrence(notBefore: now, in: timeZone)
        notification.occurrence = occurrence
        let key = notification.key
        let generation = nextGeneration
        nextGeneration += 1
        let old = entries.updateValue(
            Entry(notification: notification, instant: instant, generation: generation), forKey: key)
        push(HeapItem(instant: instant, generation: generation, key: key))
        compactIfStale()
        return old?.notification
    }

    /// Removes one notification.
    ///
    /// - Returns: It, or `nil` when it was not scheduled.
    @discardableResult
    package mutating func remove(_ key: Key) -> ScheduledLocalNotification? {
        defer { compactIfStale() }
        return entries.removeValue(forKey: key)?.notification
    }

    /// Removes every notification of an app.
    ///
    /// - Returns: The ones removed.
    @discardableResult
    package mutating func removeAll(appID: String) -> [ScheduledLocalNotification] {
        let keys = entries.keys.filter { $0.appID == appID }
        defer { compactIfStale() }
        return keys.compactMap { entries.removeValue(forKey: $0)?.notification }
    }

    /// The scheduled notifications of one app (all apps for `nil`) with their next instants,
    /// soonest first.
    package func notifications(appID: String? = nil) -> [(notification: ScheduledLocalNotification, instant: Double)] {
        entries.lazy.filter { appID == nil || $0.key.appID == appID }
            .map { ($0.value.notification, $0.value.instant, $0.key) }
            .sorted { ($0.1, $0.2) < ($1.1, $1.2) }
            .map { ($0.0, $0.1) }
    }

    /// A notification and its next instant.
    package func entry(_ key: Key) -> (notification: ScheduledLocalNotification, instant: Double)? {
        entries[key].map { ($0.notification, $0.instant) }
    }

    /// The next instant any notification fires at (seconds since the epoch), or `nil` when empty.
    package mutating func earliestInstant() -> Double? {
        dropStaleTop()
        return heap.first?.instant
    }

    /// Takes every notification due at `now`, soonest first: a non-repeating one leaves the
    /// schedule; a repeating one fires once, however many occurrences it missed (the machine
    /// slept, the clock jumped), and stays with its first occurrence after `now`.
    package mutating func takeDue(now: Double) -> [Firing] {
        var firings: [Firing] = []
        while true {
            dropStaleTop()
            guard let top = heap.first, top.instant <= now else { break }
            popTop()
            guard let entry = entries[top.key] else { continue }
            let repeats = entry.notification.repeatInterval != nil
            firings.append(Firing(notification: entry.notification, instant: entry.instant, repeats: repeats))
            entries[top.key] = nil
            if repeats {
                var next = entry.notification
                next.occurrence += 1
                // Its first occurrence strictly after now: the missed ones are skipped.
                insert(next, now: now.nextUp)
            }
        }
        return firings
    }

    /// Recomputes every instant in a new local time zone: floating notifications move to the
    /// new zone's clock, and repeats stay at their local time.
    ///
    /// - Parameters:
    ///   - timeZone: The new local zone.
    ///   - now: Seconds since the epoch (an occurrence the change put in the past is due at once).
    package mutating func setTimeZone(_ timeZone: any UTCOffsetRules, now: Double) {
        self.timeZone = timeZone
        heap.removeAll(keepingCapacity: true)
        for (key, entry) in entries {
            var updated = entry
            // Not re-advanced past `now`: an occurrence the change moved into the past fires now.
            updated.instant = entry.notification.fireInstant(occurrence: entry.notification.occurrence, in: timeZone)
            entries[key] = updated
            heap.append(HeapItem(instant: updated.instant, generation: updated.generation, key: key))
        }
        heapify()
    }

    // MARK: Heap

    private func isCurrent(_ item: HeapItem) -> Bool { entries[item.key]?.generation == item.generation }

    private mutating func dropStaleTop() {
        while let top = heap.first, !isCurrent(top) { popTop() }
    }

    /// Rebuilds the heap from the entries when stale items outnumber live ones, so memory stays
    /// proportional to what is scheduled however often notifications are replaced.
    private mutating func compactIfStale() {
        guard heap.count > 64, heap.count > 2 * entries.count else { return }
        heap = entries.map { HeapItem(instant: $0.value.instant, generation: $0.value.generation, key: $0.key) }
        heapify()
    }

    private mutating func push(_ item: HeapItem) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        siftDown(0)
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].precedes(heap[smallest]) { smallest = left }
            if right < heap.count, heap[right].precedes(heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func heapify() {
        guard heap.count > 1 else { return }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }
}
