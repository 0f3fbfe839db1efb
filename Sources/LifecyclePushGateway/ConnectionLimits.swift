import Glibc
import NIOCore

/// How long a connection may take and how many may be open: what keeps slow or idle clients from
/// holding the gateway's connections and file descriptors for good.
///
/// A connection is *idle* while no request is in progress (before its first byte, and after each
/// response); from the first byte of a request, its whole head must arrive within
/// ``headerTimeout``; from the end of the head, its whole body within ``bodyTimeout``. While the
/// gateway itself works on a request (the broker's PUBACK) no read deadline runs.
package struct ConnectionLimits: Sendable, Equatable {
    /// How long a connection may stay open with no request in progress.
    package var idleTimeout: TimeAmount
    /// How long a request's head may take to arrive, from its first byte.
    package var headerTimeout: TimeAmount
    /// How long a request's body may take to arrive, from the end of its head.
    package var bodyTimeout: TimeAmount
    /// How many connections may be open at once; more are accepted and closed at once.
    package var maximumConnections: Int

    /// Creates limits.
    package init(
        idleTimeout: TimeAmount = Self.defaultIdleTimeout, headerTimeout: TimeAmount = Self.defaultHeaderTimeout,
        bodyTimeout: TimeAmount = Self.defaultBodyTimeout, maximumConnections: Int = Self.defaultMaximumConnections()
    ) {
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.maximumConnections = maximumConnections
    }

    /// 75 s: longer than the 60 s idle timeout of the load balancers commonly put in front (AWS ALB,
    /// nginx upstream pools), so the balancer, not the gateway, ends a pooled connection and never
    /// sends a request onto one the gateway is closing.
    package static let defaultIdleTimeout = TimeAmount.seconds(75)
    /// 10 s: a push request's head is well under 8 KiB (its longest field is the VAPID token).
    package static let defaultHeaderTimeout = TimeAmount.seconds(10)
    /// 10 s: a body is at most 4,096 bytes (``PushGateway/maximumBodySize``).
    package static let defaultBodyTimeout = TimeAmount.seconds(10)
    /// The connection cap's upper default.
    package static let connectionCeiling = 1024
    /// File descriptors kept free of connections: stdio, the listener, each event loop's epoll,
    /// eventfd and timerfd, the broker's socket and the files it opens on a reconnect, and the one
    /// an over-the-cap connection is accepted into before it is closed.
    package static let reservedDescriptors = 32

    /// 1,024, or fewer when the open-file limit (`RLIMIT_NOFILE`) leaves less than that after
    /// ``reservedDescriptors``: connections then never exhaust the descriptors (at least 1).
    package static func defaultMaximumConnections() -> Int {
        guard let limit = openFileLimit() else { return connectionCeiling }
        return max(1, min(connectionCeiling, limit - reservedDescriptors))
    }

    /// The soft `RLIMIT_NOFILE`, or `nil` when unlimited or unknown.
    package static func openFileLimit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return Int(clamping: limit.rlim_cur)
    }
}
