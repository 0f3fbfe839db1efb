import SystemdBus

/// Where and how a ``BrokerConnection`` connects: the broker's URL, credentials, TLS files,
/// keep-alive, session, Last Will, reconnect backoff and the bound of the offline publish queue.
public struct BrokerConfiguration: Sendable, Equatable {
    /// The URL as given: `mqtt://host[:port]` (port 1883 by default) or `mqtts://host[:port]`
    /// (TLS, port 8883 by default); an IPv6 literal goes in brackets (`mqtt://[::1]:1883`).
    public let url: String
    /// The host name or address parsed from ``url`` (an IPv6 literal without its brackets).
    public let host: String
    /// The TCP port parsed from ``url``.
    public let port: Int
    /// Whether ``url`` asked for TLS (`mqtts`).
    public let usesTLS: Bool

    /// The MQTT client id; with a persistent session it must be stable (one per device and role).
    public var clientID: String
    /// The user name, or `nil` for none.
    public var username: String?
    /// The password (sent only with a user name).
    public var password: String?
    /// The PEM file of the CA certificates that verify the broker (`mqtts` only); `nil` uses
    /// the system's default CA store.
    public var caFile: String?
    /// The PEM client certificate, for brokers that require one (`mqtts` only).
    public var certificateFile: String?
    /// The PEM private key of ``certificateFile``.
    public var keyFile: String?
    /// The MQTT keep-alive in seconds (at least 5; libmosquitto's minimum). The broker drops a
    /// client it hears nothing from for 1.5 × keep-alive.
    public var keepAlive: Int = 30
    /// `false` (the default) asks for a persistent session: the broker keeps the subscriptions
    /// and queues QoS 1 messages while the client is away.
    public var cleanSession: Bool = false
    /// The Last Will, set before every connection attempt.
    public var will: BrokerWill?
    /// The first reconnect delay (at least 100 ms); each failed attempt doubles it
    /// (`reconnectBackoff`).
    public var minimumReconnectDelay: Duration = .milliseconds(100)
    /// The longest reconnect delay.
    public var maximumReconnectDelay: Duration = .seconds(10)
    /// How many publishes may wait at once: queued while disconnected plus QoS 1 publishes
    /// awaiting their PUBACK. Beyond it ``BrokerConnection/publish(topic:payload:qos:retain:completion:)``
    /// fails with ``BrokerError/Code/queueFull``.
    public var maximumQueuedPublishes: Int = 1000

    /// Creates a configuration, parsing the URL.
    ///
    /// - Parameters:
    ///   - url: `mqtt://host[:port]` or `mqtts://host[:port]`; no user info, path or query.
    ///   - clientID: The MQTT client id (1–65535 bytes).
    ///   - username: The user name, or `nil`.
    ///   - password: The password, or `nil`.
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/invalidConfiguration`` for any other URL
    ///   or an empty client id.
    public init(url: String, clientID: String, username: String? = nil, password: String? = nil) throws {
        let parsed = try Self.parse(url: url)
        guard !clientID.isEmpty, clientID.utf8.count <= 65_535, !clientID.utf8.contains(0) else {
            throw BrokerError(.invalidConfiguration, "the client id must have 1 to 65535 bytes and no NUL")
        }
        self.url = url
        self.host = parsed.host
        self.port = parsed.port
        self.usesTLS = parsed.tls
        self.clientID = clientID
        self.username = username
        self.password = password
    }

    /// The delays between connection attempts: ``minimumReconnectDelay`` doubling up to
    /// ``maximumReconnectDelay``, each cut at random by up to half (never below the minimum), so a
    /// fleet does not come back in lock step after a broker restart. Only valid after ``validate()``.
    var reconnectBackoff: Backoff {
        Backoff(initial: minimumReconnectDelay, maximum: maximumReconnectDelay, jitter: 0.5)
    }

    /// Checks the fields a caller may have changed after `init`; the connection calls it in `start()`.
    ///
    /// - Throws: ``BrokerError`` with ``BrokerError/Code/invalidConfiguration``.
    func validate() throws {
        guard (5...65_535).contains(keepAlive) else {
            throw BrokerError(.invalidConfiguration, "keepAlive must be 5...65535 seconds, not \(keepAlive)")
        }
        guard minimumReconnectDelay >= .milliseconds(100), maximumReconnectDelay >= minimumReconnectDelay else {
            throw BrokerError(.invalidConfiguration, "reconnect delays: need 100 ms <= minimum <= maximum")
        }
        guard maximumQueuedPublishes > 0 else {
            throw BrokerError(.invalidConfiguration, "maximumQueuedPublishes must be positive")
        }
        if let will, !(0...1).contains(will.qos) {
            throw BrokerError(.invalidConfiguration, "the will's QoS must be 0 or 1")
        }
        if !usesTLS, caFile != nil || certificateFile != nil || keyFile != nil {
            throw BrokerError(.invalidConfiguration, "TLS files need an mqtts:// URL")
        }
        if (certificateFile == nil) != (keyFile == nil) {
            throw BrokerError(.invalidConfiguration, "certificateFile and keyFile go together")
        }
    }

    private static func parse(url: String) throws -> (host: String, port: Int, tls: Bool) {
        func invalid(_ why: String) -> BrokerError {
            BrokerError(.invalidConfiguration, "invalid broker URL \"\(url)\": \(why)")
        }
        let tls: Bool
        var rest: Substring
        if url.hasPrefix("mqtt://") {
            tls = false
            rest = url.dropFirst("mqtt://".count)
        } else if url.hasPrefix("mqtts://") {
            tls = true
            rest = url.dropFirst("mqtts://".count)
        } else {
            throw invalid("the scheme must be mqtt:// or mqtts://")
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw invalid("unclosed IPv6 bracket") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("unexpected text after the IPv6 address") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw invalid("not an IPv6 literal")
            }
        } else {
            let parts = rest.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            host = parts[0]
            if parts.count == 2 { portText = parts[1] }
            let allowed = host.unicodeScalars.allSatisfy {
                ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || $0 == "." || $0 == "-"
            }
            guard !host.isEmpty, host.utf8.count <= 253, allowed else { throw invalid("not a host name or address") }
        }
        var port = tls ? 8883 : 1883
        if let portText {
            guard portText.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(portText),
                (1...65_535).contains(value)
            else {
                throw invalid("the port must be 1...65535")
            }
            port = value
        }
        return (String(host), port, tls)
    }
}
