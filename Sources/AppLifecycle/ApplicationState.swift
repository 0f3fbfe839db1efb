/// The execution state of an app (the five states of UIKit's app life cycle).
///
/// UIKit's `applicationState` reports only active, inactive and background; this type also
/// names the two states an app is in when it runs no code: ``notRunning`` and ``suspended``.
/// ``canTransition(to:)`` holds the legal transitions; ``Application`` never takes another.
public enum ApplicationState: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    /// The app has not been launched, or was terminated.
    case notRunning = "not-running"
    /// The app is in the foreground but receives no events (launching, locked, interrupted).
    case inactive
    /// The app is in the foreground and receives events.
    case active
    /// The app runs code but is not visible.
    case background
    /// The app is in memory but runs no code.
    case suspended

    /// Whether the app is visible (``inactive`` or ``active``).
    public var isForeground: Bool { self == .inactive || self == .active }

    /// Whether the app's code runs in this state.
    public var isRunningCode: Bool { self != .notRunning && self != .suspended }

    /// Whether the life cycle allows a direct transition from this state to another.
    ///
    /// The legal transitions: not running → inactive (launch); inactive ↔ active;
    /// inactive ↔ background; background ↔ suspended; and inactive, background or suspended →
    /// not running (termination: the system purges a suspended app without waking it).
    ///
    /// - Parameters:
    ///   - next: The state to move to.
    public func canTransition(to next: ApplicationState) -> Bool {
        switch (self, next) {
        case (.notRunning, .inactive): return true
        case (.inactive, .active), (.active, .inactive): return true
        case (.inactive, .background), (.background, .inactive): return true
        case (.background, .suspended), (.suspended, .background): return true
        case (.inactive, .notRunning), (.background, .notRunning), (.suspended, .notRunning): return true
        default: return false
        }
    }

    /// Every legal transition, as (from, to) pairs, in declaration order.
    public static var legalTransitions: [(from: ApplicationState, to: ApplicationState)] {
        allCases.flatMap { from in allCases.filter { from.canTransition(to: $0) }.map { (from, $0) } }
    }

    /// The raw string (`"not-running"`, `"inactive"`, …).
    public var description: String { rawValue }
}
