import FoundationEssentials
import Glibc

/// A host with no event sources: the app launches, becomes active, and runs until something
/// calls ``Application/handle(_:)`` with ``HostEvent/terminate(_:)``.
@MainActor
public final class ProcessOnlyHost: ApplicationHost {
    /// The real scheduler.
    public let scheduler: any LifecycleScheduler = SystemLifecycleScheduler()
    /// Creates the host.
    public init() {}
}
