import AppLifecycle
import DesktopIntegration
import FoundationEssentials
import LifecycledProtocol
import Synchronization
import UnifiedPushClient

/// Whether (and how) this process is hosted by `lifecycled`, readable from any thread.
///
/// A ``LifecycledHost`` keeps one up to date: the app id it registered under, whether the
/// daemon accepted the registration, the daemon's current unique name and the last host facts
/// it reported. Code that is not on the main actor (a worker thread, a logging backend, a
/// health check) reads ``snapshot`` or ``isHosted`` without hopping to the app.
///
/// ``environmentAppID(in:)`` answers the simpler question "was this process launched by
/// `lifecycled`?" before any host exists.
public final class LifecycledHostStatus: Sendable {
    /// One consistent view of the hosting state.
    public struct Snapshot: Sendable, Equatable {
        /// The app id the host registers (or registered) under; `nil` before ``LifecycledHost/prepare(_:)``.
        public var appID: String?
        /// Whether the current daemon instance accepted `RegisterApp`.
        public var isRegistered = false
        /// The unique bus name of the daemon, or `nil` while it is not running.
        public var daemonOwner: String?
        /// The host facts last received (`sleeping`, `locked`, `session-active`, `foreground`).
        public var hostFacts = UserInfo()
        /// How many times the app registered (more than one after a daemon restart).
        public var registrations = 0

        /// Creates an empty snapshot.
        ///
        /// Everything is unset: no app id, not registered, no daemon, no facts.
        public init() {}
    }

    private let state = Mutex(Snapshot())

    /// Creates a status with nothing known yet.
    ///
    /// A ``LifecycledHost`` creates its own; you normally read ``LifecycledHost/status``.
    public init() {}

    /// The current state.
    public var snapshot: Snapshot { state.withLock { $0 } }

    /// Whether the process is registered with a running `lifecycled` right now.
    public var isHosted: Bool { state.withLock { $0.isRegistered && $0.daemonOwner != nil } }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLock { body(&$0) }
    }

    /// The app id `lifecycled` gave this process in `$LIFECYCLE_APP_ID`, if it is a valid one.
    ///
    /// A process `lifecycled` launched always has it; its presence is how an app tells, before
    /// connecting anywhere, that it is meant to be hosted.
    ///
    /// - Parameters:
    ///   - environment: The environment to read (default: the process's).
    public static func environmentAppID(in environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String?
    {
        guard let id = environment[LifecycledProtocol.appIDEnvironment], LifecycledProtocol.isValidAppID(id) else {
            return nil
        }
        return id
    }
}
