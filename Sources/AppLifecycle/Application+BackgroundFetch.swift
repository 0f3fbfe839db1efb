import FoundationEssentials

extension Application {
    /// `UIApplicationBackgroundFetchIntervalMinimum`: fetch as often as the system allows.
    ///
    /// As in UIKit, the value is 0; the host raises every interval to its own floor (lifecycled's
    /// is 15 minutes, iOS's practice: `FetchSchedule.minimumInterval` in the daemon).
    public nonisolated static let backgroundFetchIntervalMinimum: TimeInterval = 0

    /// `UIApplicationBackgroundFetchIntervalNever`: never fetch in the background (the default).
    public nonisolated static let backgroundFetchIntervalNever: TimeInterval = .greatestFiniteMagnitude

    /// The name of the background task a host sees while a background fetch's completion handler
    /// has not been called: begun when `application(_:performFetchWithCompletionHandler:)` is
    /// called, ended (after the ``performFetchNotification`` with the result) when the handler is.
    /// lifecycled learns from it that a fetch it started has completed.
    public nonisolated static let backgroundFetchTaskName = "application(_:performFetchWithCompletionHandler:)"

    /// Asks for background fetches at most this often (`setMinimumBackgroundFetchInterval(_:)`).
    ///
    /// The host wakes (or launches) the app in the background when a fetch is due and calls
    /// `application(_:performFetchWithCompletionHandler:)`; the app has
    /// ``Configuration/completionHandlerDeadline`` (30 s) to call the handler, and is ended if it
    /// does not. Until this is called the interval is ``backgroundFetchIntervalNever``, as in UIKit.
    /// Only an app whose manifest declares the `fetch` background mode is woken.
    ///
    /// - Parameters:
    ///   - minimumBackgroundFetchInterval: Seconds between fetches at least:
    ///     ``backgroundFetchIntervalMinimum`` (or any value below the host's floor) for as often as
    ///     the host allows, ``backgroundFetchIntervalNever`` to stop. A negative value is taken as
    ///     ``backgroundFetchIntervalMinimum``; NaN is refused (logged, nothing changes).
    public func setMinimumBackgroundFetchInterval(_ minimumBackgroundFetchInterval: TimeInterval) {
        guard !minimumBackgroundFetchInterval.isNaN else {
            logger.info("setMinimumBackgroundFetchInterval(nan) ignored")
            return
        }
        let interval = max(minimumBackgroundFetchInterval, Self.backgroundFetchIntervalMinimum)
        guard interval != backgroundFetchInterval else { return }
        backgroundFetchInterval = interval
        host.application(self, didSetMinimumBackgroundFetchInterval: interval)
    }

    /// The interval the app last asked for (``backgroundFetchIntervalNever`` until it asks).
    public var minimumBackgroundFetchInterval: TimeInterval { backgroundFetchInterval }
}
