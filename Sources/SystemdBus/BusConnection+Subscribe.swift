import CSystemd
import Logging

extension BusConnection {
    /// Subscribes to a signal from a named service, accepting it only from the name's current owner.
    ///
    /// This is the spoof-safe way to follow a service such as logind: the bus daemon does not
    /// stop other peers from emitting a signal with logind's path, interface and member, and
    /// sd-bus does not resolve well-known senders in match rules. So the subscription tracks
    /// the owner of `wellKnownName` (``trackNameOwner(_:)``) and delivers a signal only if
    /// its sender is the owner's unique name at that moment in the bus's message order.
    /// Signals from anyone else are dropped and logged at debug level.
    ///
    /// If `signature` is given, a signal with another body signature is dropped and logged
    /// (at notice level) instead of being delivered, so handlers can index arguments safely.
    ///
    /// Returns once the owner is known and the match is installed in the daemon, so any
    /// signal emitted afterwards is seen.
    ///
    /// - Parameters:
    ///   - wellKnownName: The sender's well-known name (for example `org.freedesktop.login1`),
    ///     or a unique name (`:1.7`) to accept only that connection.
    ///   - path: The object path, or `nil` for any path.
    ///   - interface: The signal's interface.
    ///   - member: The signal's name, or `nil` for every signal of the interface.
    ///   - signature: The expected body signature (for example `b`), or `nil` to accept any.
    ///   - arg0: The required value of the first (string) argument, or `nil`.
    ///   - handler: Called on the loop thread with each verified signal.
    /// - Returns: The subscription; cancel it to stop.
    /// - Throws: ``BusError`` if the owner lookup or the match installation fails.
    public func subscribe(
        sender wellKnownName: String, path: String? = nil, interface: String, member: String?,
        signature: String? = nil, arg0: String? = nil,
        handler: @escaping @Sendable (BusSignal) -> Void
    ) async throws -> BusSubscription {
        let isUnique = wellKnownName.hasPrefix(":")
        let tracker = isUnique ? nil : try await trackNameOwner(wellKnownName)
        // A unique sender can go in the rule (sd-bus and the daemon both match it exactly);
        // a well-known one cannot, so it is verified below.
        let rule = MatchRule.build(
            sender: isUnique ? wellKnownName : nil, path: path, interface: interface, member: member, arg0: arg0
        )
        let logger = self.logger
        return try await addRawMatch(rule) { message in
            let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
            let expected = tracker.map(\.currentOwner) ?? wellKnownName
            guard let sender, sender == expected else {
                logger.debug(
                    """
                    dropped signal \(interface).\(member ?? "*") from \(sender ?? "?"): \
                    \(wellKnownName) is owned by \(expected ?? "nobody")
                    """)
                return
            }
            if let signature {
                let actual = BusMessageCodec.signature(of: message)
                guard actual == signature else {
                    logger.info(
                        """
                        dropped signal \(interface).\(member ?? "*") from \(wellKnownName) (\(sender)): \
                        signature '\(actual)', expected '\(signature)'
                        """)
                    return
                }
            }
            if let signal = BusConnection.decodeSignal(message, logger: logger) { handler(signal) }
        }
    }
}
