/// A change of a ``BrokerConnection``'s state, reported on the loop thread to the handler of
/// ``BrokerConnection/setEventHandler(_:)`` and through ``BrokerConnection/events``.
public enum BrokerConnectionEvent: Sendable, Equatable {
    /// The broker accepted the connection (CONNACK 0). `sessionPresent` says whether it resumed
    /// the persistent session (subscriptions and queued messages kept); subscriptions are sent
    /// again either way.
    case connected(sessionPresent: Bool)
    /// The broker refused the connection (CONNACK return code, for example "not authorised"); the
    /// connection tries again after its backoff.
    case connectionRefused(BrokerError)
    /// The connection ended; a `lost` one is attempted again after the backoff.
    case disconnected(DisconnectReason)

    /// Why a connection ended.
    public enum DisconnectReason: Sendable, Equatable {
        /// ``BrokerConnection/stop()``: a clean DISCONNECT, no Last Will; the connection is over.
        case stopped
        /// ``BrokerConnection/abort()`` (or a stop while acknowledgements were outstanding): the
        /// socket was closed without DISCONNECT, so the broker publishes the Last Will.
        case aborted
        /// The socket failed, the broker closed it, a connection attempt failed, or keep-alive
        /// expired; a reconnect follows.
        case lost(BrokerError)
    }
}
