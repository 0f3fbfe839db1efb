import FoundationEssentials
import Glibc

/// A host with no event sources: the app launches, becomes active, and runs until something
/// calls ``Application/handle(_:)`` with ``HostEvent/terminate(_:)``.
@MainActor
public final class ProcessOnlyHost: ApplicationHost {
    /// The real scheduler.
    public let scheduler: any LifecycleScheduler = SystemLifecycleScheduler()
    /// The app's last `setMinimumBackgroundFetchInterval(_:)`, recorded: this host has no
    /// event sources, so nothing fetches unless someone sends ``HostEvent/backgroundFetch``.
    public private(set) var minimumBackgroundFetchInterval = Application.backgroundFetchIntervalNever
    /// Creates the host.
    public init() {}
    /// Records the interval.
    public func application(
        _ application: Application, didSetMinimumBackgroundFetchInterval interval: TimeInterval
    ) {
        minimumBackgroundFetchInterval = interval
    }
}
