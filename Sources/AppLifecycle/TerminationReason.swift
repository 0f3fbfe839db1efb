import FoundationEssentials

/// Why the host asks the app to terminate.
public enum TerminationReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The system is shutting down or rebooting (logind `PrepareForShutdown(true)`).
    case shutdown
    /// The process received SIGTERM (from systemd or a user).
    case signal
    /// A host (lifecycled, a test, `lifecyclectl simulate terminate`) asked for it.
    case hostRequest = "host-request"
    /// The host reclaims memory and terminates this app to do so.
    case memoryPressure = "memory-pressure"
    /// The session the app was hosted in ended: its session bus closed for good (GLib apps exit
    /// then too), or the process group was orphaned (`SIGHUP`).
    case sessionEnded = "session-ended"
}
