import AppLifecycle
import Foundation
import Testing

@MainActor
@Suite("Typed notification center")
struct NotificationCenterTests {
    final class Sender: Sendable {}

    @Test("a typed post reaches name observers in the userInfo form")
    func typedToNamed() {
        let center = LifecycleNotificationCenter()
        var received: [LifecycleNotification] = []
        let token = center.addObserver(forName: Application.didReceiveMemoryWarningNotification) { received.append($0) }
        center.post(Application.DidReceiveMemoryWarningMessage(warning: MemoryWarning(level: .medium, source: "psi")))
        #expect(received.count == 1)
        #expect(received.first?.name.rawValue == "UIApplicationDidReceiveMemoryWarningNotification")
        #expect(received.first?.userInfo[ApplicationUserInfoKey.memoryWarningLevel] == "medium")
        _ = token
    }

    @Test("a named post reaches typed observers when its userInfo decodes, and not when it does not")
    func namedToTyped() {
        let center = LifecycleNotificationCenter()
        var levels: [MemoryWarning.Level] = []
        let token = center.addObserver(for: Application.DidReceiveMemoryWarningMessage.self) {
            levels.append($0.warning.level)
        }
        center.post(
            name: Application.didReceiveMemoryWarningNotification,
            userInfo: [ApplicationUserInfoKey.memoryWarningLevel: "critical"])
        center.post(
            name: Application.didReceiveMemoryWarningNotification,
            userInfo: [ApplicationUserInfoKey.memoryWarningLevel: "enormous"])
        center.post(name: Application.didReceiveMemoryWarningNotification)
        #expect(levels == [.critical, .low])
        _ = token
    }

    @Test("delivery follows registration order across typed, named and all-name observers")
    func registrationOrder() {
        let center = LifecycleNotificationCenter()
        var order: [String] = []
        let a = center.addObserver(forName: nil) { _ in order.append("all-1") }
        let b = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in order.append("typed-1") }
        let c = center.addObserver(forName: Application.didBecomeActiveNotification) { _ in order.append("named-1") }
        let d = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in order.append("typed-2") }
        center.post(Application.DidBecomeActiveMessage())
        #expect(order == ["all-1", "typed-1", "named-1", "typed-2"])
        order.removeAll()
        center.post(name: Application.didBecomeActiveNotification)
        #expect(order == ["all-1", "typed-1", "named-1", "typed-2"])
        _ = (a, b, c, d)
    }

    @Test("object filters match only the posting object")
    func objectFilter() {
        let center = LifecycleNotificationCenter()
        let mine = Sender()
        let other = Sender()
        var count = 0
        let token = center.addObserver(for: Application.WillTerminateMessage.self, object: mine) { _ in count += 1 }
        center.post(Application.WillTerminateMessage(), object: other)
        center.post(Application.WillTerminateMessage())
        center.post(Application.WillTerminateMessage(), object: mine)
        #expect(count == 1)
        _ = token
    }

    @Test("re-entrancy: an observer may post, add and remove during a post")
    func reentrancy() {
        let center = LifecycleNotificationCenter()
        var log: [String] = []
        var late: NotificationObservation?
        var victim: NotificationObservation?
        let first = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in
            log.append("first")
            center.post(Application.WillResignActiveMessage())  // nested post completes before the outer continues
            victim?.cancel()  // removed during the post: receives nothing more
            late = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in log.append("late") }
        }
        victim = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in log.append("victim") }
        let nested = center.addObserver(for: Application.WillResignActiveMessage.self) { _ in log.append("nested") }
        center.post(Application.DidBecomeActiveMessage())
        #expect(log == ["first", "nested"])
        log.removeAll()
        late = nil  // dropping the token removes the observer
        center.post(Application.DidBecomeActiveMessage())
        #expect(log == ["first", "nested"])
        #expect(center.observerCount(for: Application.DidBecomeActiveMessage.self) == 2)
        _ = (first, nested, late)
    }

    @Test("a nested post of the same type that removes and adds observers leaves the outer post's snapshot intact")
    func nestedSameTypeRemoval() {
        let center = LifecycleNotificationCenter()
        var log: [String] = []
        var depth = 0
        var victim: NotificationObservation?
        var churn: [NotificationObservation] = []
        var late: NotificationObservation?
        var nestedOnce = false
        let first = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in
            depth += 1
            defer { depth -= 1 }
            log.append("first@\(depth)")
            guard !nestedOnce else { return }
            if depth == 1 {
                center.post(Application.DidBecomeActiveMessage())  // the same type, nested
            } else {
                nestedOnce = true
                // Replace the observer list many times while both posts borrow snapshots of it.
                victim?.cancel()
                for _ in 0..<64 {
                    churn.append(
                        center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in log.append("churn") })
                }
                churn.removeAll()
                late = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in
                    log.append("late@\(depth)")
                }
            }
        }
        victim = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in log.append("victim@\(depth)") }
        let tail = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in log.append("tail@\(depth)") }
        center.post(Application.DidBecomeActiveMessage())
        // Each post delivers to the observers of its own snapshot that are still registered
        // (`depth` counts the `first` calls under way: tail@1 is the nested post, tail@0 the outer).
        #expect(log == ["first@1", "first@2", "tail@1", "tail@0"])
        #expect(center.observerCount(for: Application.DidBecomeActiveMessage.self) == 3)
        log.removeAll()
        center.post(Application.DidBecomeActiveMessage())
        #expect(log == ["first@1", "tail@0", "late@0"])
        _ = (first, tail, late)
    }

    @Test("dropping or cancelling a token removes the observer")
    func tokens() {
        let center = LifecycleNotificationCenter()
        var count = 0
        var token: NotificationObservation? = center.addObserver(for: Application.DidEnterBackgroundMessage.self) { _ in
            count += 1
        }
        center.post(Application.DidEnterBackgroundMessage())
        token = nil
        center.post(Application.DidEnterBackgroundMessage())
        #expect(count == 1)
        var set = Set<NotificationObservation>()
        center.addObserver(forName: nil) { _ in count += 1 }.store(in: &set)
        center.post(name: .init("Anything"))
        set.first?.cancel()
        set.first?.cancel()
        center.post(name: .init("Anything"))
        #expect(count == 2)
        #expect(set.first?.isActive == false)
        _ = token
    }

    @Test("a token cancelled on another thread stops delivery at once, before the center unlinks it")
    func cancelOffMainActor() async {
        let center = LifecycleNotificationCenter()
        var count = 0
        let token = center.addObserver(for: Application.DidBecomeActiveMessage.self) { _ in count += 1 }
        center.post(Application.DidBecomeActiveMessage())
        await Task.detached { token.cancel() }.value
        center.post(Application.DidBecomeActiveMessage())
        #expect(count == 1)
        #expect(!token.isActive)
    }

    @Test("async sequence: bounded buffer drops the oldest by default and counts drops")
    func asyncOverflowDropOldest() async {
        let center = LifecycleNotificationCenter()
        let sequence = center.messages(of: Application.SignificantTimeChangeMessage.self, buffering: .init(capacity: 2))
        for reason in [SignificantTimeChange.Reason.clockSet, .timeZone, .midnight, .daylightSavingTime] {
            center.post(Application.SignificantTimeChangeMessage(change: .init(reason: reason)))
        }
        sequence.cancel()
        var received: [SignificantTimeChange.Reason] = []
        for await message in sequence { received.append(message.change.reason) }
        #expect(received == [.midnight, .daylightSavingTime])
        #expect(sequence.droppedCount == 2)
        #expect(center.observerCount(for: Application.SignificantTimeChangeMessage.self) == 0)
    }

    @Test("async sequence: dropNewest keeps the earliest")
    func asyncOverflowDropNewest() async {
        let center = LifecycleNotificationCenter()
        let sequence = center.notifications(named: nil, buffering: .init(capacity: 2, overflow: .dropNewest))
        for index in 0..<5 { center.post(name: .init("N\(index)")) }
        sequence.cancel()
        var names: [String] = []
        for await notification in sequence { names.append(notification.name.rawValue) }
        #expect(names == ["N0", "N1"])
        #expect(sequence.droppedCount == 3)
    }

    @Test("async sequence: delivers to a consumer on another task, and unregisters when dropped")
    func asyncConsumer() async {
        let center = LifecycleNotificationCenter()
        var sequence: NotificationSequence<Application.DidBecomeActiveMessage>? = center.messages(
            of: Application.DidBecomeActiveMessage.self)
        let consumer = Task { [sequence] in
            var count = 0
            for await _ in sequence! {
                count += 1
                if count == 3 { break }
            }
            return count
        }
        for _ in 0..<3 { center.post(Application.DidBecomeActiveMessage()) }
        #expect(await consumer.value == 3)
        sequence = nil
        for _ in 0..<10 where center.observerCount(for: Application.DidBecomeActiveMessage.self) > 0 {
            await Task.yield()
        }
        #expect(center.observerCount(for: Application.DidBecomeActiveMessage.self) == 0)
    }

    @Test("every UIKit notification keeps UIKit's raw string")
    func rawNames() {
        #expect(Application.didFinishLaunchingNotification.rawValue == "UIApplicationDidFinishLaunchingNotification")
        #expect(Application.didBecomeActiveNotification.rawValue == "UIApplicationDidBecomeActiveNotification")
        #expect(Application.willResignActiveNotification.rawValue == "UIApplicationWillResignActiveNotification")
        #expect(Application.didEnterBackgroundNotification.rawValue == "UIApplicationDidEnterBackgroundNotification")
        #expect(Application.willEnterForegroundNotification.rawValue == "UIApplicationWillEnterForegroundNotification")
        #expect(Application.willTerminateNotification.rawValue == "UIApplicationWillTerminateNotification")
        #expect(
            Application.didReceiveMemoryWarningNotification.rawValue
                == "UIApplicationDidReceiveMemoryWarningNotification")
        #expect(
            Application.significantTimeChangeNotification.rawValue == "UIApplicationSignificantTimeChangeNotification")
        #expect(
            Application.protectedDataWillBecomeUnavailableNotification.rawValue
                == "UIApplicationProtectedDataWillBecomeUnavailable")
        #expect(
            Application.protectedDataDidBecomeAvailableNotification.rawValue
                == "UIApplicationProtectedDataDidBecomeAvailable")
        #expect(
            Application.willChangeStatusBarOrientationNotification.rawValue
                == "UIApplicationWillChangeStatusBarOrientationNotification")
        #expect(
            Application.didChangeStatusBarOrientationNotification.rawValue
                == "UIApplicationDidChangeStatusBarOrientationNotification")
        #expect(
            Application.willChangeStatusBarFrameNotification.rawValue
                == "UIApplicationWillChangeStatusBarFrameNotification")
        #expect(
            Application.didChangeStatusBarFrameNotification.rawValue
                == "UIApplicationDidChangeStatusBarFrameNotification")
    }
}
