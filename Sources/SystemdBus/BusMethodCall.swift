import Synchronization

/// One incoming call of an exported method, decoded, as handed to its handler.
public struct BusMethodCall: Sendable {
    /// What to do once the successful reply has gone out (``afterReply(_:)``).
    final class FollowUps: Sendable {
        private let actions = Mutex<[@Sendable () -> Void]>([])
        func append(_ action: @escaping @Sendable () -> Void) { actions.withLock { $0.append(action) } }
        func take() -> [@Sendable () -> Void] {
            actions.withLock { actions in
                defer { actions.removeAll() }
                return actions
            }
        }
    }

    /// The caller's unique name, for example `:1.42` (`nil` on a peer-to-peer connection).
    public var sender: String?
    /// The caller's credentials from the bus daemon (uid, pid), or `nil` if they could not be
    /// obtained (the caller already left, or a peer-to-peer connection).
    public var credentials: BusCredentials?
    /// The object path that was called.
    public var path: String
    /// The interface that was called.
    public var interface: String
    /// The method name.
    public var member: String
    /// The decoded arguments; sd-bus has already checked them against the declared signature.
    public var arguments: [BusValue]
    let followUps = FollowUps()

    /// Creates a call value (mainly for tests of handlers).
    ///
    /// - Parameters:
    ///   - sender: The caller's unique name.
    ///   - credentials: The caller's credentials.
    ///   - path: The object path.
    ///   - interface: The interface the method belongs to, or `nil`.
    ///   - member: The method name.
    ///   - arguments: The call's arguments, in signature order.
    public init(
        sender: String?, credentials: BusCredentials?, path: String, interface: String, member: String,
        arguments: [BusValue]
    ) {
        self.sender = sender
        self.credentials = credentials
        self.path = path
        self.interface = interface
        self.member = member
        self.arguments = arguments
    }

    /// Runs `action` on the loop thread right after the successful reply to this call has been
    /// queued, before any later message of this connection: what the caller must see only once
    /// it has the reply (signals announcing the new state, say). Not run when the handler
    /// throws, or for a call value made outside an exported object.
    ///
    /// - Parameters:
    ///   - action: What to do; it runs on the loop thread.
    public func afterReply(_ action: @escaping @Sendable () -> Void) {
        followUps.append(action)
    }
}
