import AppLifecycle
import Foundation

/// Records an app's delegate calls and notifications in one timeline, and checks their order.
///
/// A delegate call is recorded only when the delegate really implements the method (the
/// protocol's default does not count), at the moment it is called; a notification is recorded
/// when it is delivered. Both carry the app's state at that moment.
@MainActor
public final class LifecycleRecorder {
    /// One recorded event.
    public struct Entry: Sendable, Hashable, Codable, CustomStringConvertible {
        /// What kind of event.
        public enum Kind: String, Sendable, Hashable, Codable {
            /// A delegate method was called.
            case delegate
            /// A notification was delivered.
            case notification
        }

        /// What kind of event.
        public var kind: Kind
        /// The delegate method's Swift name, or the notification's name.
        public var name: String
        /// The app's state when it happened.
        public var state: ApplicationState
        /// The notification's userInfo (empty for delegate calls).
        public var userInfo: UserInfo

        /// Creates an entry.
        ///
        /// - Parameters:
        ///   - kind: What kind of event.
        ///   - name: The method's or notification's name.
        ///   - state: The app's state.
        ///   - userInfo: The notification's userInfo.
        public init(kind: Kind, name: String, state: ApplicationState, userInfo: UserInfo = UserInfo()) {
            self.kind = kind
            self.name = name
            self.state = state
            self.userInfo = userInfo
        }

        /// `delegate applicationDidBecomeActive(_:) [active]` or `notification Name [state] {userInfo}`.
        public var description: String {
            let info = userInfo.isEmpty ? "" : " \(userInfo)"
            return "\(kind.rawValue) \(name) [\(state)]\(info)"
        }
    }

    /// Everything recorded, in order.
    public private(set) var entries: [Entry] = []
    /// Called with each entry as it is recorded (the example streams its timeline with it).
    public var onEntry: (@MainActor (Entry) -> Void)?
    /// Whether state-change notifications (`ApplicationStateDidChangeNotification`) are recorded (default `false`).
    public var recordsStateChanges = false

    private weak var application: Application?
    private var pending: [(name: String, flushed: Bool)] = []
    private var observation: NotificationObservation?

    /// Starts recording an app's delegate calls and the notifications it posts.
    ///
    /// - Parameters:
    ///   - application: The app; the recorder becomes its `Application/delegateCallTracer`.
    public init(application: Application) {
        self.application = application
        application.delegateCallTracer = { [weak self] call in self?.trace(call) }
        observation = application.notificationCenter.addObserver(forName: nil, object: application) {
            [weak self] notification in
            self?.record(notification)
        }
    }

    /// The names recorded, in order.
    public var names: [String] { entries.map(\.name) }

    /// The delegate methods called, in order.
    public var delegateCalls: [String] { entries.filter { $0.kind == .delegate }.map(\.name) }

    /// The notifications delivered, in order.
    public var notificationNames: [String] { entries.filter { $0.kind == .notification }.map(\.name) }

    /// Forgets everything recorded so far.
    public func clear() { entries.removeAll() }

    /// The entries for a name.
    ///
    /// - Parameters:
    ///   - name: A delegate method's Swift name or a notification's name.
    public func entries(named name: String) -> [Entry] { entries.filter { $0.name == name } }

    /// The number of times a name was recorded.
    ///
    /// - Parameters:
    ///   - name: A delegate method's Swift name or a notification's name.
    public func count(of name: String) -> Int { entries.count { $0.name == name } }

    /// Checks that the names appear in this order (other entries may come between them).
    ///
    /// - Parameters:
    ///   - expected: Names in the order they must appear.
    /// - Throws: ``OrderError`` naming the first name not found in order, with the timeline.
    public func verifyOrder(_ expected: [String]) throws(OrderError) {
        var index = entries.startIndex
        for name in expected {
            guard let found = entries[index...].firstIndex(where: { $0.name == name }) else {
                throw OrderError(
                    .outOfOrder, "expected \(name) after position \(index) in order \(expected); recorded:\n" + timeline
                )
            }
            index = found + 1
        }
    }

    /// Checks that the names appear in this order with nothing else between them.
    ///
    /// - Parameters:
    ///   - expected: Names that must appear consecutively, in this order.
    /// - Throws: ``OrderError`` with the timeline when they do not.
    public func verifyConsecutive(_ expected: [String]) throws(OrderError) {
        let recorded = names
        guard !expected.isEmpty else { return }
        if recorded.count >= expected.count {
            for start in 0...(recorded.count - expected.count)
            where Array(recorded[start..<start + expected.count]) == expected {
                return
            }
        }
        throw OrderError(.notConsecutive, "expected consecutive \(expected); recorded:\n" + timeline)
    }

    /// Checks that a name was never recorded.
    ///
    /// - Throws: ``OrderError`` with the timeline when it was.
    public func verifyAbsent(_ name: String) throws(OrderError) {
        guard count(of: name) == 0 else { throw OrderError(.recorded, "\(name) was recorded:\n" + timeline) }
    }

    /// The timeline, one entry per line.
    public var timeline: String { entries.map(\.description).joined(separator: "\n") }

    // MARK: Recording

    private func trace(_ call: Application.DelegateCall) {
        switch call {
        case .willCall(let name):
            pending.append((name, false))
        case .didCall(let name, let implemented):
            guard let frame = pending.popLast() else { return }
            if implemented && !frame.flushed {
                append(Entry(kind: .delegate, name: name, state: application?.applicationState ?? .notRunning))
            }
        }
    }

    private func record(_ notification: LifecycleNotification) {
        if !recordsStateChanges && notification.name == Application.stateDidChangeNotification { return }
        flushPending()
        append(
            Entry(
                kind: .notification, name: notification.name.rawValue,
                state: application?.applicationState ?? .notRunning, userInfo: notification.userInfo))
    }

    /// A notification during a delegate call proves the method is implemented (defaults post
    /// nothing): record the call first, so the timeline keeps the real order.
    private func flushPending() {
        for index in pending.indices where !pending[index].flushed {
            pending[index].flushed = true
            append(
                Entry(kind: .delegate, name: pending[index].name, state: application?.applicationState ?? .notRunning))
        }
    }

    private func append(_ entry: Entry) {
        entries.append(entry)
        onEntry?(entry)
    }
}
